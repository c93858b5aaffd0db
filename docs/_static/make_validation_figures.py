"""Make the figure of the validation page: the paper's figure B3, computed exactly.

Run from the repository root::

    .venv/bin/python docs/_static/make_validation_figures.py

It runs the exact scale of the ``paper-independent`` suite (about a second) into a
temporary folder, draws its figures with :func:`perfci.figures.make_figures` and copies
figure B3 (coverage of the pseudo-count percentile bootstrap, lambda = 1 and 2, with
infinitely many resamples) to ``docs/_static/validation_figB3.png``.
"""

import shutil
import tempfile
from pathlib import Path

from perfci import figures, harness

HERE = Path(__file__).resolve().parent
SUITE = HERE.parents[1] / "validation" / "suites" / "paper-independent.toml"


def main() -> None:
    """Write ``validation_figB3.png`` beside this script."""
    with tempfile.TemporaryDirectory() as tmp:
        dataset = harness.run_suite(harness.load_suite(SUITE), "exact", Path(tmp))
        written = figures.make_figures(dataset, Path(tmp) / "figures")
        (source,) = [p for p in written if p.name == "paper-independent-figB3.png"]
        shutil.copyfile(source, HERE / "validation_figB3.png")
    print(f"wrote {HERE / 'validation_figB3.png'}")


if __name__ == "__main__":
    main()
