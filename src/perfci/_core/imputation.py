r"""Codes an annotator did not give, imputed from those of the annotators who coded the text.

With several annotators who each coded only some of the texts, the mean over annotators of
the metric against each, every one over the texts they coded, mixes the annotators with
their texts: an annotator who coded only the easy transcripts looks better than one who
coded all of them. The estimand of :mod:`perfci.annotators` is the metric against each
annotator on **every** text, averaged over annotators; an annotator's codes on the texts
they did not code are missing, and this module fills them in with the probability that
the annotator would have coded the text positive, given what is seen of it: the
classifier's label and the codes of the annotators who did code it.

For annotator a and text t, the strata are, from the finest: the classifier's label
:math:`s_t` with the whole pattern of the other annotators' codes on t (each other
annotator's 0, 1, or no code); :math:`s_t` with the others' majority,
:math:`\operatorname{sign}(\bar c_{-a,t} - 1/2)`; that majority alone; and every text.
On the texts a coded together with someone else (the *shared* texts) a's rate of
positive codes in each stratum is estimated, shrunk by one pseudo-text towards the rate
of the stratum above it; the imputed code of a on an uncoded text is the rate of its
finest stratum. The codes are missing at random given the label and the others' codes
(an annotator's choice of texts may depend on anything those show: on the transcript's
difficulty, or on what one annotator coded, but not on what a would have coded beyond
them). The whole pattern is what makes that so: with the second coders checking the
first's positives, the majority of the others mixes texts the first called positive
with texts only the other second coders saw, and imputing by it alone left the
new-annotator recall of five annotators at 0.924 in atlas-annotators-partial (0.960
with the pattern, 500 replications). With two annotators the pattern is the majority;
above :data:`_MAX_PATTERN_ANNOTATORS` the finest stratum is the majority with the label.

An annotator who shares fewer than :data:`MIN_SHARED_TEXTS` texts with the others is not
imputed (their codes stay missing, and their metric is over their own texts): with a
handful of texts to calibrate on, the rates are noise (in atlas-annotators, 10 texts of
which each annotator coded 60%, imputing from about 6 shared texts took the
these-annotators F1 from 0.89-0.95 to 0.87-0.91). From 10 on they are imputed: with 40
texts of which the second coders checked about 15, chosen by the first's codes, their
metric over their own texts covered as little as 0.854, imputed 0.958-0.986. Codes that
were given are kept as they are, so a complete design is unchanged, bit for bit.

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
#: warns where that leaves the annotator's metric on a minority of the texts). The
#: module's text says how the atlas chose it.
MIN_SHARED_TEXTS = 10

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
        rest, and nothing calibrates it: :mod:`perfci.annotators` warns (over chosen
        subsets of about 15 texts, atlas-annotators-partial's 40 texts when imputing
        needed 30 shared ones, the intervals covered as little as 0.70).
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
    shared = coded & (coded.sum(1, keepdims=True) > coded)  # someone else coded it too
    owner = group[:, None] * annotators + np.arange(annotators)  # (texts, A)
    levels = [np.unique(owner * k + key, return_inverse=True)[1] for k, key in _strata(codes, said)]
    rates, counts = _chained_rates(levels, shared, value)
    size = datasets * annotators
    n_shared = np.bincount(owner[shared], None, size).astype(np.int64).reshape(datasets, -1)
    n_missing = np.bincount(owner[~coded], None, size).astype(np.int64).reshape(datasets, -1)
    enough = (n_shared >= MIN_SHARED_TEXTS)[group[:, None], np.arange(annotators)]
    calibrated = ~coded & enough
    finest = rates[-1][levels[-1]]
    filled = np.where(coded, value, np.where(enough, finest, np.nan))
    n_imputed = np.bincount(owner[calibrated], None, size).astype(np.int64).reshape(datasets, -1)
    influence = _influence(levels, rates, counts, shared, value, calibrated, said)
    return ImputedCodes(filled, coded, n_shared, n_imputed, n_missing, influence)


#: Annotators up to which the finest stratum is the whole pattern of the others' codes
#: (3 ** (A - 1) patterns, in one int64 with the data set and the annotator).
_MAX_PATTERN_ANNOTATORS = 20


def _strata(codes: np.ndarray, said: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """Return each level's keys of the texts' strata, coarsest first, with their range.

    The annotator's overall rate; by the others' majority (negative, tied, positive); by
    that and the classifier's label; by the label and the whole pattern of the others'
    codes (each other annotator's 0, 1 or none). Each level refines the one before, so
    that a stratum's rate is shrunk towards its parent's.
    """
    texts, annotators = codes.shape
    coded = ~np.isnan(codes)
    value = np.where(coded, codes, 0.0)
    n_coded = coded.sum(1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        # the mean of the other annotators' codes, NaN where nobody else coded the text
        others = (value.sum(1, keepdims=True) - value) / (n_coded - coded)
    bucket = np.where(others > 0.5, 2, np.where(others == 0.5, 1, 0))  # (texts, A)
    label = np.asarray(said, dtype=bool).astype(np.int64)[:, None]
    levels = [(1, np.zeros((texts, annotators), dtype=np.int64)), (3, bucket)]
    levels.append((6, bucket * 2 + label))
    if 2 < annotators <= _MAX_PATTERN_ANNOTATORS:  # with two, the pattern is the majority
        # each annotator's code as a base-3 digit (2: none); an annotator's own digit is
        # taken out of the row's number, so the key is the others' pattern alone
        digit = np.where(coded, value, 2.0).astype(np.int64) * 3 ** np.arange(annotators)
        pattern = digit.sum(1, keepdims=True) - digit
        levels.append((2 * 3**annotators, pattern * 2 + label))
    return levels


def _chained_rates(
    levels: list[np.ndarray], shared: np.ndarray, value: np.ndarray
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Return each level's rate of positive codes per stratum, shrunk towards its parent.

    The coarsest level's rate is the plain mean of its shared codes (NaN where there is
    none); a finer stratum's is ``(S + k r) / (n + k)`` with ``r`` its parent's rate and
    ``k`` :data:`_SHRINK` pseudo-texts.
    """
    rates: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for i, ids in enumerate(levels):
        size = int(ids.max()) + 1
        total = np.bincount(ids[shared], value[shared], size)
        count = np.bincount(ids[shared], None, size)
        with np.errstate(invalid="ignore", divide="ignore"):
            if i == 0:
                rate = total / count
            else:
                rate = (total + _SHRINK * rates[-1][_parents(ids, levels[i - 1], size)]) / (
                    count + _SHRINK
                )
        rates.append(rate)
        counts.append(count)
    return rates, counts


def _parents(ids: np.ndarray, parent_ids: np.ndarray, size: int) -> np.ndarray:
    """Return the parent stratum of each of a level's `size` strata."""
    parent = np.zeros(size, dtype=np.int64)
    parent[ids.ravel()] = parent_ids.ravel()
    return parent


def _influence(
    levels: list[np.ndarray],
    rates: list[np.ndarray],
    counts: list[np.ndarray],
    shared: np.ndarray,
    value: np.ndarray,
    calibrated: np.ndarray,
    said: np.ndarray,
) -> np.ndarray:
    """Return each shared code's first-order influence on the imputed cells, (texts, A, 4).

    The linearization of the chained rates: an imputed text moves its cells by
    ``[s, -s, 1 - s, -(1 - s)]`` per unit of its rate (``s`` its label); the rate of a
    stratum moves by ``1 / (n + k)`` per unit of one of its codes and by ``k / (n + k)``
    per unit of its parent's rate (the coarsest: ``1 / n``), and a code's influence is
    its distance from each rate it enters times that rate's pull on the imputed cells.
    """
    s = np.broadcast_to(np.asarray(said, dtype=float)[:, None], value.shape)
    direction = np.stack([s, -s, 1 - s, s - 1], -1)[calibrated]  # (imputed, 4)
    finest = levels[-1]
    size = rates[-1].size
    pull = np.stack(
        [np.bincount(finest[calibrated], direction[:, j], size) for j in range(4)], -1
    )  # the imputed cells' sum per unit of each finest rate
    influence = np.zeros((*value.shape, 4))
    for i in range(len(levels) - 1, -1, -1):
        ids = levels[i]
        denominator = counts[i] + (_SHRINK if i else 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_code = pull / denominator[:, None]  # per unit of one shared code
            term = (value - rates[i][ids])[..., None] * per_code[ids]
        influence += np.where(shared[..., None], np.nan_to_num(term), 0.0)
        if i:
            parent = _parents(ids, levels[i - 1], rates[i].size)
            pull = np.stack(
                [
                    np.bincount(parent, _SHRINK * per_code[:, j], rates[i - 1].size)
                    for j in range(4)
                ],
                -1,
            )
    return influence


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
