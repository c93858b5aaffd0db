"""Make the figures of the validation page: the paper's figure B3, and a suite's coverage.

Run from the repository root::

    .venv/bin/python docs/_static/make_validation_figures.py

It runs the exact scale of the ``paper-independent`` suite (about a second) into a
temporary folder, draws its figures with :func:`perfci.figures.make_figures` and copies
figure B3 (coverage of the pseudo-count percentile bootstrap, lambda = 1 and 2, with
infinitely many resamples) to ``docs/_static/validation_figB3.png``. It then draws the
coverage figure every suite gets (:func:`perfci.figures.plot_suite`) from the committed
result ``validation/results/paper-nested.nc`` (nothing is rerun) to
``docs/_static/validation_coverage_paper-nested.png``.
"""

import shutil
import tempfile
from pathlib import Path

from perfci import figures, harness
from perfci.harness.results import load_result
from perfci.plotting import save_figure

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITE = ROOT / "validation" / "suites" / "paper-independent.toml"
NESTED = ROOT / "validation" / "results" / "paper-nested.nc"


def main() -> None:
    """Write ``validation_figB3.png`` and ``validation_coverage_paper-nested.png`` here."""
    with tempfile.TemporaryDirectory() as tmp:
        dataset = harness.run_suite(harness.load_suite(SUITE), "exact", Path(tmp))
        written = figures.make_figures(dataset, Path(tmp) / "figures")
        (source,) = [p for p in written if p.name == "paper-independent-figB3.png"]
        shutil.copyfile(source, HERE / "validation_figB3.png")
    print(f"wrote {HERE / 'validation_figB3.png'}")
    (page,) = figures.plot_suite(load_result(NESTED), "coverage").values()
    for path in save_figure(page, HERE / "validation_coverage_paper-nested", close=True):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
