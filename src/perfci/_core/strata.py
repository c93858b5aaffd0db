"""Which cells of a stratum's confusion matrix can hold texts.

A validation sample is often stratified by the classifier's prediction: a stratum of
predicted positives holds true and false positives only, whatever the sample. A stratum
whose sampled texts all have one prediction (or all one reference label) is taken to be
defined by it, so that a regularization (pseudo counts, a prior) puts nothing in cells
the stratum cannot hold. NumPy only.
"""

from __future__ import annotations

import numpy as np

__all__ = ["possible_cells"]

# The cells [tp, fp, fn, tn] with a positive prediction, and with a positive reference.
_PREDICTED_POSITIVE = np.array([True, True, False, False])
_REFERENCE_POSITIVE = np.array([True, False, True, False])


def possible_cells(cells: np.ndarray) -> np.ndarray:
    """Return which cells of each stratum ``(..., 4)`` can hold texts, as booleans.

    The prediction decides first: a stratum whose texts all have one prediction can hold
    only that prediction's two cells; else one reference label decides; else (or with no
    texts) every cell is possible.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.strata import possible_cells
    >>> possible_cells(np.array([[240, 60, 0, 0], [0, 0, 9, 291], [5, 0, 0, 3]])).astype(int)
    array([[1, 1, 0, 0],
           [0, 0, 1, 1],
           [1, 1, 1, 1]])
    """
    present = np.asarray(cells) > 0
    possible = np.ones(present.shape, dtype=bool)
    for side in (_PREDICTED_POSITIVE, _REFERENCE_POSITIVE):  # two margins, not data
        only_positive = present[..., side].any(-1) & ~present[..., ~side].any(-1)
        only_negative = present[..., ~side].any(-1) & ~present[..., side].any(-1)
        undecided = possible.all(-1)  # the first margin that decides a stratum wins
        possible = np.where((undecided & only_positive)[..., None], side, possible)
        possible = np.where((undecided & only_negative)[..., None], ~side, possible)
    return possible
