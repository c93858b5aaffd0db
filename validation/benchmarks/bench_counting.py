"""Labels to counts: ``pc.confusion`` with person ids against the plain ``np.unique`` path.

Data: binary reference labels (prevalence 0.3) and classifier labels that agree with
them 90% of the time, for 10**5, 10**6 and 10**7 texts, each text of one of 10**5
persons (integer ids drawn uniformly; at 10**5 texts most persons have one or two texts),
and the same at 10**6 texts with text ids (``"p00042"``). perfci runs
``pc.confusion(y_true, y_pred, groups=ids)``. The peer is the path perfci took before,
written out below: the same label contract (``normalize_labels``), then
``np.unique(ids, return_inverse=True)`` (which sorts every text's id) and the cell index
from nested ``np.where``. Both give the same persons in the same order and the same
counts (checked). Timed alternately, A B A B, 5 pairs after a warm-up; the table shows
the median time of each side and the median of the pair ratios (peer / perfci).

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_counting.py``
"""

import os

import numpy as np
import pandas as pd
from _alternate import alternate

import perfci as pc
from perfci.counting import normalize_labels

PERSONS = 10**5


def plain_confusion(y_true, y_pred, groups):
    """Per-person [tp, fp, fn, tn] as perfci counted them with numpy.unique."""
    given = normalize_labels({"y_true": y_true, "y_pred": y_pred})
    t, p = given.values["y_true"], given.values["y_pred"]
    ids, person = np.unique(np.asarray(groups), return_inverse=True)
    pos_t, pos_p = t == given.positive, p == given.positive
    cell = np.where(pos_t, np.where(pos_p, 0, 2), np.where(pos_p, 1, 3))
    counts = np.bincount(person * 4 + cell, minlength=ids.size * 4).reshape(ids.size, 4)
    return ids, counts


def data(size, rng, text_ids=False):
    y_true = (rng.random(size) < 0.3).astype(np.int64)
    y_pred = np.where(rng.random(size) < 0.9, y_true, 1 - y_true)
    ids = rng.integers(0, PERSONS, size)
    if text_ids:
        ids = np.array([f"p{i:05d}" for i in range(PERSONS)])[ids]
    return y_true, y_pred, ids


def main():
    rng = np.random.default_rng(20261201)
    print(f"numpy {np.__version__}, pandas {pd.__version__}; {PERSONS:,} persons")
    header = f"{'texts':>12} {'ids':<5}{'perfci (s)':>12}{'np.unique (s)':>15}{'ratio':>7}"
    print(f"{header}  pair ratios")
    for size, text_ids in [(10**5, False), (10**6, False), (10**7, False), (10**6, True)]:
        y_true, y_pred, ids = data(size, rng, text_ids)
        ours = pc.confusion(y_true, y_pred, groups=ids)
        peer_ids, peer_counts = plain_confusion(y_true, y_pred, ids)
        np.testing.assert_array_equal(ours.groups, peer_ids)
        np.testing.assert_array_equal(ours.counts, peer_counts)
        args = (y_true, y_pred, ids)
        t = alternate(
            lambda a=args: pc.confusion(a[0], a[1], groups=a[2]),
            lambda a=args: plain_confusion(*a),
            rounds=5,
        )
        shown = " ".join(f"{r:.2f}" for r in t.ratios)
        kind = "text" if text_ids else "int"
        print(f"{size:>12,} {kind:<5}{t.ours:>12.3f}{t.peer:>15.3f}{t.ratio:>7.2f}  {shown}")
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f} (2 CPUs)")


if __name__ == "__main__":
    main()
