r"""Codes an annotator did not give, imputed from those of the annotators who coded the text.

With several annotators who each coded only some of the texts, the mean over annotators of
the metric against each, every one over the texts they coded, mixes the annotators with
their texts: an annotator who coded only the easy transcripts looks better than one who
coded all of them. The estimand of :mod:`perfci.annotators` is the metric against each
annotator on **every** text, averaged over annotators; an annotator's codes on the texts
they did not code are missing, and this module fills them in with the probability that
the annotator would have coded the text positive, given what is seen of it: the
classifier's label and the codes of the annotators who did code it.

For annotator a, text t with the classifier's label :math:`s_t` and the mean
:math:`\bar c_{-a,t}` of the other annotators' codes, the stratum of t is
:math:`(s_t, \operatorname{sign}(\bar c_{-a,t} - 1/2))` (six strata). On the texts a
coded together with someone else (the *shared* texts) a's rate of positive codes in each
stratum is estimated, shrunk by one pseudo-text towards a's rate in the coarser stratum
without the label, itself shrunk towards a's rate on all shared texts; the imputed code
of a on an uncoded text is the rate of its stratum. The codes are missing at random
given the label and the others' codes (an annotator's choice of texts may depend on
anything those show, e.g. on the transcript's difficulty, but not on what the annotator
would have coded beyond them). An annotator who shares fewer than
:data:`MIN_SHARED_TEXTS` texts with the others is not imputed (their codes stay missing,
and their metric is over their own texts): with a few texts to calibrate on, the rates
are noise (in atlas-annotators, 10 texts of which each annotator coded 60%, imputing
took the these-annotators F1 from 0.89-0.95 to 0.87-0.91). Codes that were given are
kept as they are, so a complete design is unchanged, bit for bit.

Shapes: texts on the first axis of `codes`, annotators on the second; texts of many data
sets can be stacked, each text tagged with its data set (``dataset``); every rate is a
data set's own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MIN_SHARED_TEXTS", "ImputedCodes", "expected_cells", "impute_codes", "unit_cells"]

#: Shared texts (coded by the annotator and by someone else) an annotator needs for their
#: missing codes to be imputed; with fewer they stay missing (:mod:`perfci.annotators`
#: warns where that leaves the annotator's metric on a minority of the texts).
MIN_SHARED_TEXTS = 30

# Pseudo-texts with which a stratum's rate is shrunk towards the coarser stratum's.
_SHRINK = 1.0


@dataclass(frozen=True)
class ImputedCodes:
    """Codes with the missing ones imputed, and what the imputation rests on.

    Attributes
    ----------
    codes : numpy.ndarray, (texts, A)
        The codes given (0 or 1) and, where an annotator gave none, the probability that
        they would have coded the text positive (NaN, still missing, for an annotator
        with fewer than :data:`MIN_SHARED_TEXTS` shared texts).
    coded : numpy.ndarray of bool, (texts, A)
        Whether the annotator coded the text.
    shared : numpy.ndarray of int, (data sets, A)
        Texts each annotator coded together with at least one other annotator.
    imputed : numpy.ndarray of int, (data sets, A)
        Texts whose code of the annotator was imputed.
    missing : numpy.ndarray of int, (data sets, A)
        Texts the annotator did not code (imputed, or left missing for want of shared
        texts).
    influence : numpy.ndarray, (texts, A, 4)
        Each given code's influence on the imputed texts' cells through the rates it
        calibrates (first order; it sums to about 0 over a stratum's shared texts): added
        to the cells of the variance, not of the estimate, it puts the rates' own
        uncertainty into the interval. Zero for a code nobody else's imputation reads.
    """

    codes: np.ndarray
    coded: np.ndarray
    shared: np.ndarray
    imputed: np.ndarray
    missing: np.ndarray
    influence: np.ndarray

    @property
    def complete(self) -> bool:
        """Whether every annotator coded every text (nothing was imputed)."""
        return not self.imputed.any()

    @property
    def thin(self) -> np.ndarray:
        """Annotators too thinly shared to compare on every text, (data sets, A).

        An annotator with fewer than :data:`MIN_SHARED_TEXTS` shared texts is not imputed;
        where they also left most texts uncoded (more than they coded with someone
        else), their metric is over a minority of the texts, which may not be like the
        rest, and nothing calibrates it: :mod:`perfci.annotators` warns (with a chosen
        subset, atlas-annotators-partial at 40 texts, the intervals covered as little as 0.70).
        """
        return (self.missing > self.imputed) & (self.missing > self.shared)


def impute_codes(
    codes: np.ndarray,
    said: np.ndarray,
    dataset: np.ndarray | None = None,
    datasets: int = 1,
) -> ImputedCodes:
    """Impute each annotator's missing codes from the texts' labels and others' codes.

    Parameters
    ----------
    codes : numpy.ndarray, (texts, A)
        1 (positive), 0 (negative) or NaN (not coded); every text has at least one code.
    said : numpy.ndarray of bool, (texts,)
        Whether the classifier labels the text positive.
    dataset : numpy.ndarray of int, (texts,), optional
        The data set of each text, in ``0 .. datasets - 1`` (default: one data set).
    datasets : int, default 1
        The number of data sets.

    Returns
    -------
    ImputedCodes

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.imputation import impute_codes
    >>> codes = np.array([[1, 1], [0, 0], [1, 0]] * 10 + [[1, np.nan], [0, np.nan]])
    >>> said = np.array([True, False, True] * 10 + [True, False])
    >>> out = impute_codes(codes, said)  # B: half of A's positives, none of A's negatives
    >>> out.codes[-2:, 1].round(3).tolist(), out.shared.tolist(), out.imputed.tolist()
    ([0.5, 0.003], [[30, 30]], [[0, 2]])
    >>> out = impute_codes(codes[25:], said[25:])  # 5 shared texts: too few to impute
    >>> out.codes[-2:, 1].tolist(), out.imputed.tolist(), out.missing.tolist()
    ([nan, nan], [[0, 0]], [[0, 2]])
    """
    codes = np.asarray(codes, dtype=float)
    texts, annotators = codes.shape
    coded = ~np.isnan(codes)
    group = np.zeros(texts, dtype=np.int64) if dataset is None else np.asarray(dataset)
    value = np.where(coded, codes, 0.0)
    n_coded = coded.sum(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # the mean of the other annotators' codes, NaN where nobody else coded the text
        others = (value.sum(1, keepdims=True) - value) / (n_coded - coded)
    has_others = np.isfinite(others)
    bucket = np.where(others > 0.5, 2, np.where(others == 0.5, 1, 0))  # (texts, A)
    label = np.asarray(said, dtype=bool).astype(np.int64)[:, None]
    shared = coded & has_others

    def rates(keys: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Return sums and counts of the shared codes per key, (data sets, A, size)."""
        flat = (group[:, None] * annotators + np.arange(annotators)) * size + keys
        total = np.bincount(flat[shared], value[shared], datasets * annotators * size)
        count = np.bincount(flat[shared], None, datasets * annotators * size)
        return total.reshape(datasets, annotators, size), count.reshape(datasets, annotators, size)

    sum_all, count_all = rates(np.zeros((texts, annotators), dtype=np.int64), 1)
    sum_bucket, count_bucket = rates(bucket, 3)
    sum_fine, count_fine = rates(bucket * 2 + label, 6)
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = sum_all / count_all  # (D, A, 1); NaN: the annotator shares no text
        coarse = (sum_bucket + _SHRINK * overall) / (count_bucket + _SHRINK)
        fine = (sum_fine + _SHRINK * np.repeat(coarse, 2, -1)) / (count_fine + _SHRINK)
    a = np.arange(annotators)[None, :]
    g = group[:, None]
    key = bucket * 2 + label
    per = g * annotators + a
    size = datasets * annotators
    n_shared = np.bincount(per[shared], None, size).astype(np.int64).reshape(datasets, -1)
    n_missing = np.bincount(per[~coded], None, size).astype(np.int64).reshape(datasets, -1)
    enough = (n_shared >= MIN_SHARED_TEXTS)[g, a]  # (texts, A): the annotator is imputed
    rate = fine[g, a, key]
    calibrated = ~coded & enough
    filled = np.where(coded, value, np.where(enough, rate, np.nan))
    n_imputed = np.bincount(per[calibrated], None, size).astype(np.int64).reshape(datasets, -1)
    # Each shared code's influence on the imputed cells through the rates it calibrates
    # (the linearization of fine = (S_f + coarse) / (n_f + 1), coarse = (S_b + overall) /
    # (n_b + 1), overall = S / n): a rate moves the imputed texts' cells of its stratum
    # by [l, -l, 1 - l, -(1 - l)] each (l their label).
    uncoded = np.bincount((per * 6 + key)[calibrated], None, datasets * annotators * 6).reshape(
        datasets, annotators, 6
    )
    lab = np.arange(6) % 2
    direction = np.stack([lab, -lab, 1 - lab, lab - 1], -1).astype(float)  # (6, 4)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_fine = (uncoded / (count_fine + _SHRINK))[..., None] * direction
        per_bucket = per_fine.reshape(datasets, annotators, 3, 2, 4).sum(-2)
        per_bucket = per_bucket / (count_bucket + _SHRINK)[..., None]
        per_all = per_bucket.sum(-2, keepdims=True) / count_all[..., None]
        influence = (
            (value - fine[g, a, key])[..., None] * per_fine[g, a, key]
            + (value - coarse[g, a, bucket])[..., None] * per_bucket[g, a, bucket]
            + (value - overall[g, a, 0])[..., None] * per_all[g, a, 0]
        )
    influence = np.where(shared[..., None], np.nan_to_num(influence), 0.0)
    return ImputedCodes(filled, coded, n_shared, n_imputed, n_missing, influence)


def expected_cells(said: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Return each text's cells ``[tp, fp, fn, tn]`` against each annotator, (texts, A, 4).

    A code p (1, 0, or an imputed probability) puts p of the text in the annotator's
    positives: ``[s p, s (1 - p), (1 - s) p, (1 - s)(1 - p)]`` for the classifier's label
    s; a code given is one cell, exactly, and a missing one (NaN) none.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.imputation import expected_cells
    >>> expected_cells(np.array([True, False]), np.array([[1.0, 0.25], [0.0, 1.0]])).tolist()
    [[[1.0, 0.0, 0.0, 0.0], [0.25, 0.75, 0.0, 0.0]], [[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0]]]
    """
    s = np.asarray(said, dtype=float)[:, None]
    p = np.asarray(codes, dtype=float)
    cells = np.stack([s * p, s * (1 - p), (1 - s) * p, (1 - s) * (1 - p)], -1)
    return np.nan_to_num(cells, nan=0.0)


def unit_cells(cells: np.ndarray, unit: np.ndarray, units: int) -> np.ndarray:
    """Sum texts' cells ``(texts, A, 4)`` per unit (a person): ``(units, A, 4)``.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.imputation import unit_cells
    >>> unit_cells(np.ones((3, 1, 4)), np.array([0, 1, 1]), 2)[:, 0, 0].tolist()
    [1.0, 2.0]
    """
    texts, annotators, width = cells.shape
    flat = (unit[:, None, None] * annotators + np.arange(annotators)[:, None]) * width
    flat = flat + np.arange(width)
    out = np.bincount(flat.ravel(), cells.ravel(), units * annotators * width)
    return out.reshape(units, annotators, width)
