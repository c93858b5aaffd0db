"""``python -m perfci``: the ``perfci`` command line."""

import sys

from .cli import main

sys.exit(main())
