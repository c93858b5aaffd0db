"""The joint cells of two classifiers on the same texts, and each classifier's cells.

A text with reference ``t``, classifier A's label ``a`` and classifier B's ``b`` (1 =
positive) falls in joint cell ``j = 4 t + 2 a + b``; :data:`TO_A` and :data:`TO_B` map the
eight joint cells onto each classifier's confusion cells ``[tp, fp, fn, tn]``, so that
``joint @ TO_A`` is classifier A's confusion matrix.
"""

from __future__ import annotations

import numpy as np

from .labels import factorize_sorted

__all__ = ["DISAGREE", "JOINT_CELLS", "TO_A", "TO_B", "joint_cells"]

#: The eight joint cells of a text, ``(reference, A, B)`` with 1 = positive: cell
#: ``j = 4 t + 2 a + b`` is ``JOINT_CELLS[j]``, the layout :func:`perfci.compare_counts` takes.
JOINT_CELLS: tuple[tuple[int, int, int], ...] = tuple(
    (j // 4, (j // 2) % 2, j % 2) for j in range(8)
)

#: ``TO_A[j]`` / ``TO_B[j]``: joint cell j as a cell ``[tp, fp, fn, tn]`` of A / of B.
TO_A = np.zeros((8, 4))
TO_B = np.zeros((8, 4))
_CELL = {(1, 1): 0, (0, 1): 1, (1, 0): 2, (0, 0): 3}
for _j, (_t, _a, _b) in enumerate(JOINT_CELLS):
    TO_A[_j, _CELL[(_t, _a)]] = 1
    TO_B[_j, _CELL[(_t, _b)]] = 1
TO_A.flags.writeable = False
TO_B.flags.writeable = False
#: The joint cells where A and B give different labels.
DISAGREE = np.array([a != b for _, a, b in JOINT_CELLS])
DISAGREE.flags.writeable = False


def joint_cells(
    t: np.ndarray, a: np.ndarray, b: np.ndarray, person: np.ndarray | None
) -> np.ndarray:
    """Joint counts ``(K, 8)``, or ``(K, persons, 8)`` over all ids seen in any data set."""
    code = (4 * t + 2 * a + b).reshape(-1, t.shape[-1])
    sets = code.shape[0]
    rows = np.arange(sets)[:, None]
    if person is None:
        return np.bincount((rows * 8 + code).ravel(), minlength=sets * 8).reshape(sets, 8)
    _, idx = factorize_sorted(np.broadcast_to(person, t.shape))
    idx = idx.reshape(code.shape)
    m = int(idx.max()) + 1
    flat = (rows * m + idx) * 8 + code
    return np.bincount(flat.ravel(), minlength=sets * m * 8).reshape(sets, m, 8)
