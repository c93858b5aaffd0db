"""``python -m perfci.cli``: the ``perfci`` command line."""

import sys

from . import main

sys.exit(main())
