"""Cells a metric reads only through their sums, resampled as the sums, against all cells.

`perfci.metrics.CELL_POOLING` lets the bootstrap draw fewer binomials: F1 reads fp + fn,
recall tp, fn and the rest. Here the same public call, ``bootstrap_ci`` on a batch of
200 data sets of 40 persons x 20 texts with 1,000 resamples, runs with the pooling table
as shipped and with it emptied (every cell drawn, the engine before pooling), alternately
in one process (``_alternate.alternate``: A B A B, median of the pair ratios). Both sides
have the same distribution of replicates, not the same draws.

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_pooling.py``
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _alternate import alternate  # noqa: E402

import perfci as pc  # noqa: E402
from perfci.metrics import CELL_POOLING  # noqa: E402

SHIPPED = dict(CELL_POOLING)


def main() -> None:
    rng = np.random.default_rng(1)
    counts = rng.multinomial(20, [0.1, 0.05, 0.05, 0.8], size=(200, 40)).astype(float)
    print(f"numpy {np.__version__}; 1-minute load average {os.getloadavg()[0]:.2f}")
    for scheme in ("iid", "hierarchical", "cluster"):
        for metric in ("f1", "recall"):

            def call(pooled: bool, scheme: str = scheme, metric: str = metric) -> None:
                CELL_POOLING.clear()
                if pooled:
                    CELL_POOLING.update(SHIPPED)
                pc.bootstrap_ci(counts, metric, scheme=scheme, n_resamples=1000, rng=2, nested=True)

            timing = alternate(lambda c=call: c(True), lambda c=call: c(False), rounds=5)
            ratios = ", ".join(f"{r:.2f}" for r in timing.ratios)
            print(
                f"  {scheme:12s} {metric:6s}: pooled {timing.ours * 1e3:.0f} ms, every cell "
                f"{timing.peer * 1e3:.0f} ms (medians); pair ratios {ratios}; "
                f"median {timing.ratio:.2f}x"
            )
    CELL_POOLING.clear()
    CELL_POOLING.update(SHIPPED)


if __name__ == "__main__":
    main()
