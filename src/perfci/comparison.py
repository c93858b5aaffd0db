"""Paired comparison of two classifiers scored on the same texts.

Each text has a triple (reference, classifier A, classifier B), so a sample is eight
counts (per person when texts are nested). The paired bootstrap resamples these joint
counts and evaluates the metric of A and of B on the same resample; the interval is of
the difference. Resampling the two classifiers separately would ignore that they were
scored on the same texts and give intervals that are too wide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import stats

from ._core.resampling import Statistic
from ._core.results import ResultMixin
from ._core.validation import (
    check_choice,
    check_confidence_level,
    check_label,
    check_positive_int,
    check_rng,
    dataset_generators,
)
from .analytic import proportion_ci
from .bootstrap import (
    BOOTSTRAP_INTERVALS,
    MIN_PERSONS,
    ONE_PERSON,
    SCHEMES,
    BootstrapCI,
    assemble,
    batch_shaped,
    check_pseudo_count,
    check_resample_size,
    resample_intervals,
    warn_about,
)
from .counting import _as_label_array, normalize_labels
from .metrics import BINARY_METRICS, PROPORTION_METRICS, RELEVANT_TEXTS, metric_values
from .policy import recommended_scheme

__all__ = ["Comparison", "compare"]

# Joint cell j = 4 t + 2 a + b for reference t, classifier A a and classifier B b (1 =
# positive). _TO_A[j] / _TO_B[j] is that text's cell [tp, fp, fn, tn] for A / for B.
_T, _A, _B = np.divmod(np.arange(8), 4)[0], (np.arange(8) // 2) % 2, np.arange(8) % 2
_CELL = {(1, 1): 0, (0, 1): 1, (1, 0): 2, (0, 0): 3}
_TO_A = np.zeros((8, 4))
_TO_B = np.zeros((8, 4))
for _j in range(8):
    _TO_A[_j, _CELL[(_T[_j], _A[_j])]] = 1
    _TO_B[_j, _CELL[(_T[_j], _B[_j])]] = 1

# Paired proportions: the relevant texts depend on the reference only, so A and B are
# scored on the very same texts (McNemar's setting).
_PAIRED_PROPORTIONS = ("accuracy", "recall", "specificity")


@dataclass(frozen=True, repr=False)
class Comparison(ResultMixin):
    """The paired difference of a metric between two classifiers (A minus B).

    Attributes
    ----------
    metric : str
        The metric.
    estimate_a, estimate_b : float
        The metric of classifier A and of classifier B.
    difference : float
        ``estimate_a - estimate_b``.
    low, high : float
        The paired bootstrap interval of the difference.
    confidence_level : float
        The confidence level.
    method : str
        The bootstrap used.
    disagreement : float
        Share of texts on which A and B give different labels.
    n_texts : int
        Texts compared.
    persons : int or None
        Persons (nested data), else None.
    newcombe_low, newcombe_high : float
        Newcombe's paired score interval of the difference (accuracy, recall and
        specificity on independent texts; NaN otherwise).
    mcnemar_pvalue : float
        Exact McNemar p-value (two-sided binomial test on the discordant texts; same
        metrics; NaN otherwise).
    discordant : tuple of int
        Relevant texts that only A gets right and that only B gets right (same
        metrics; (0, 0) otherwise).
    bootstrap : BootstrapCI
        The bootstrap result; its `distribution` holds the replicate differences.
    """

    metric: str
    estimate_a: Any
    estimate_b: Any
    difference: Any
    low: Any
    high: Any
    confidence_level: float
    method: str
    disagreement: Any
    n_texts: Any
    persons: Any
    newcombe_low: Any
    newcombe_high: Any
    mcnemar_pvalue: Any
    discordant: Any
    bootstrap: BootstrapCI

    _exclude: ClassVar[tuple[str, ...]] = ("bootstrap",)

    def __repr__(self) -> str:
        return (
            f"Comparison(metric={self.metric!r}, difference={self.difference:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, estimate_a={self.estimate_a:.4g}, "
            f"estimate_b={self.estimate_b:.4g}, disagreement={self.disagreement:.4g}, "
            f"method={self.method!r})"
        )


def newcombe_paired_interval(
    both: Any, only_a: Any, only_b: Any, neither: Any, confidence_level: float = 0.95
) -> tuple[Any, Any]:
    r"""Newcombe's square-and-add interval for a difference of paired proportions.

    Parameters
    ----------
    both, only_a, only_b, neither : float or array_like
        The paired 2 x 2 table: successes of both, of A only, of B only, of neither
        (arrays broadcast: one table per data set).
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    low, high : float or numpy.ndarray
        Interval for :math:`p_A - p_B = (\text{only\_a} - \text{only\_b}) / N`.

    Notes
    -----
    Newcombe (1998), method 10: Wilson intervals :math:`(l_1, u_1)` for :math:`p_A` and
    :math:`(l_2, u_2)` for :math:`p_B`, combined as
    :math:`\hat\delta - \sqrt{(p_A - l_1)^2 + (u_2 - p_B)^2 - 2\hat\phi(p_A - l_1)(u_2 - p_B)}`
    and :math:`\hat\delta + \sqrt{(p_B - l_2)^2 + (u_1 - p_A)^2 - 2\hat\phi(p_B - l_2)(u_1 - p_A)}`,
    with the correlation estimate :math:`\hat\phi = (A - N/2)/\sqrt{\cdot}` if
    :math:`A = ad - bc > N/2`, 0 if :math:`0 \le A \le N/2`, and :math:`A/\sqrt{\cdot}`
    if :math:`A < 0`, where :math:`\sqrt{\cdot}` is the root of the product of the four
    margins (0 if a margin is empty); as in Fagerland, Lydersen and Laake (2017), 8.5.

    References
    ----------
    .. [1] Newcombe, R. G. (1998). Improved confidence intervals for the difference
       between binomial proportions based on paired data. Statistics in Medicine 17.
    .. [2] Fagerland, M. W., Lydersen, S. and Laake, P. (2017). Statistical Analysis of
       Contingency Tables. CRC Press.

    Examples
    --------
    >>> from perfci.comparison import newcombe_paired_interval
    >>> low, high = newcombe_paired_interval(59, 6, 16, 80)
    >>> print(f"{low:.4f} {high:.4f}")
    -0.1186 -0.0046
    """
    both, only_a, only_b, neither = (
        np.asarray(v, dtype=float) for v in (both, only_a, only_b, neither)
    )
    n = both + only_a + only_b + neither
    a_success, a_fail = both + only_a, only_b + neither
    b_success, b_fail = both + only_b, only_a + neither
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = a_success / n, b_success / n
    w1 = proportion_ci(a_success, n, method="wilson", confidence_level=confidence_level)
    w2 = proportion_ci(b_success, n, method="wilson", confidence_level=confidence_level)
    margins = a_success * a_fail * b_success * b_fail
    cross = both * neither - only_a * only_b
    root = np.sqrt(np.where(margins > 0, margins, 1.0))
    phi = np.where(
        margins > 0,
        np.where(cross > n / 2, (cross - n / 2) / root, np.where(cross < 0, cross / root, 0.0)),
        0.0,
    )
    d1, e2 = p1 - w1.low, w2.high - p2
    d2, e1 = p2 - w2.low, w1.high - p1
    low = (p1 - p2) - np.sqrt(d1**2 + e2**2 - 2 * phi * d1 * e2)
    high = (p1 - p2) + np.sqrt(d2**2 + e1**2 - 2 * phi * d2 * e1)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def _joint_cells(
    t: np.ndarray, a: np.ndarray, b: np.ndarray, person: np.ndarray | None
) -> np.ndarray:
    """Joint counts ``(K, 8)``, or ``(K, persons, 8)`` over all ids seen in any data set."""
    code = (4 * t + 2 * a + b).reshape(-1, t.shape[-1])
    sets = code.shape[0]
    rows = np.arange(sets)[:, None]
    if person is None:
        return np.bincount((rows * 8 + code).ravel(), minlength=sets * 8).reshape(sets, 8)
    _, idx = np.unique(np.broadcast_to(person, t.shape), return_inverse=True)
    idx = idx.reshape(code.shape)
    m = int(idx.max()) + 1
    flat = (rows * m + idx) * 8 + code
    return np.bincount(flat.ravel(), minlength=sets * m * 8).reshape(sets, m, 8)


def _compare_iv(
    metric: Any,
    positive: Any,
    confidence_level: Any,
    scheme: Any,
    interval: Any,
    pseudo_count: Any,
    n_resamples: Any,
    rng: Any,
) -> tuple[np.ndarray, int, int, np.random.Generator]:
    """Check the options of :func:`compare` (the labels are checked where they are read)."""
    check_choice("metric", metric, BINARY_METRICS)
    check_label("positive", positive)
    if scheme is not None:
        check_choice("scheme", scheme, SCHEMES)
    check_choice("interval", interval, BOOTSTRAP_INTERVALS)
    level = check_confidence_level(confidence_level, scalar=True)
    lam = check_pseudo_count(pseudo_count)
    return level, lam, check_positive_int("n_resamples", n_resamples), check_rng(rng)


def compare(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    metric: str,
    groups: Any = None,
    *,
    positive: Any = None,
    confidence_level: float = 0.95,
    scheme: str | None = None,
    interval: str = "percentile",
    pseudo_count: int = 0,
    n_resamples: int = 2000,
    rng: Any = None,
) -> Comparison:
    """Paired difference of a metric between two classifiers scored on the same texts.

    Parameters
    ----------
    y_true : array_like
        Reference (human) labels, one per text, shape ``(n_texts,)``; or
        ``(*batch, n_texts)`` for many data sets at once (every field of the result
        then has the shape ``batch``).
    pred_a, pred_b : array_like
        The two classifiers' labels for the same texts, the shape of `y_true`.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    groups : array_like, optional
        Person ids, one per text (``(n_texts,)``, shared by every data set, or the
        shape of `y_true`): the bootstrap then resamples persons. A person with no
        text in a data set is not one of its persons.
    positive : object, optional
        The positive label; default 1 for a binary code (0/1, False/True or their
        strings, recoded to 0/1 in every argument). The labels of the three arguments are
        read by one contract, as in :func:`perfci.confusion`.
    confidence_level : float, default 0.95
        Confidence level.
    scheme : {"iid", "cluster", "hierarchical"}, optional
        Bootstrap scheme. Default: :func:`perfci.policy.recommended_scheme` of the mean
        relevant texts per person: iid without groups (or with one relevant text per
        person), cluster below :data:`perfci.HIERARCHICAL_MIN_TEXTS`, else hierarchical.
    interval : {"percentile", "bca"}, default "percentile"
        Bootstrap interval.
    pseudo_count : int, default 0
        Pseudo counts added to each of the eight joint cells (or held by a
        pseudo-person).
    n_resamples : int, default 2000
        Resamples.
    rng : numpy.random.Generator, int or None
        Random generator or seed; in a batch of K data sets, data set k uses
        ``np.random.default_rng(rng).spawn(K)[k]`` (as :func:`perfci.bootstrap_ci`).

    Returns
    -------
    Comparison
        The difference A - B, its paired bootstrap interval, the share of texts on which
        A and B disagree, and for accuracy, recall and specificity on independent texts
        Newcombe's paired interval and the exact McNemar p-value.

    Raises
    ------
    ValueError
        For unknown names; labels of different shapes; a `positive` that is not one
        label; a level, pseudo count, number of resamples or `rng` of the wrong type or
        range; a cluster or hierarchical scheme with fewer than 2 persons with texts (for
        a single data set; in a batch such a data set gets NaN and a warning).

    Notes
    -----
    Each text is one of eight joint cells (reference, A, B); the bootstrap draws these
    counts (per person for the cluster schemes) and each replicate is
    ``metric(A) - metric(B)`` of the same resample. Replicates where either metric is
    undefined are dropped. Identical classifiers give a difference of exactly 0 with a
    zero-width interval.

    *One person*: resampling persons from a single person draws that person every time,
    so its interval would be about that person's texts and say nothing about the
    population of persons; it is refused, as in :func:`perfci.bootstrap_ci`.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> result = pc.compare(texts["human"], texts["model"], texts["model_b"], "recall", rng=1)
    >>> print(f"{result.difference:.3f} [{result.low:.3f}, {result.high:.3f}], "
    ...       f"McNemar p = {result.mcnemar_pvalue:.4f}, disagree on "
    ...       f"{100 * result.disagreement:.1f}% of texts")
    0.036 [0.015, 0.061], McNemar p = 0.0039, disagree on 2.1% of texts
    """
    level, pseudo_count, n_resamples, root = _compare_iv(
        metric, positive, confidence_level, scheme, interval, pseudo_count, n_resamples, rng
    )
    given = normalize_labels(
        {"y_true": y_true, "pred_a": pred_a, "pred_b": pred_b}, positive=positive, ndim=None
    )
    t, a, b = (given.values[k] for k in ("y_true", "pred_a", "pred_b"))
    positive = given.positive
    if positive is None:
        raise ValueError(
            f"`positive` must name the positive label among {given.classes.tolist()!r}."
        )
    for name, arr in (("pred_a", a), ("pred_b", b)):
        if arr.shape != t.shape:
            raise ValueError(
                f"`{name}` must have one label per text of `y_true` (shape {t.shape}); "
                f"got shape {arr.shape}."
            )
    batch_shape = t.shape[:-1]
    check_resample_size(n_resamples, math.prod(batch_shape))
    for name, arr in (("y_true", t), ("pred_a", a), ("pred_b", b)):
        if pd.unique(arr.ravel()).size > 2:
            raise ValueError(f"`{name}` must be binary labels for a comparison.")
    person = None
    if groups is not None:
        person = _as_label_array("groups", groups, ndim=None)
        if person.shape not in (t.shape, t.shape[-1:]):
            shapes = f"{t.shape}" if t.ndim == 1 else f"{t.shape[-1:]} or {t.shape}"
            raise ValueError(
                f"`groups` must have one id per text, shape {shapes}; got {person.shape}."
            )
    cells = _joint_cells(
        (t == positive).astype(int),
        (a == positive).astype(int),
        (b == positive).astype(int),
        person,
    )
    total = cells if person is None else cells.sum(1)  # (K, 8)

    def difference(c: np.ndarray) -> np.ndarray:
        return metric_values(c @ _TO_A, metric) - metric_values(c @ _TO_B, metric)

    statistic = Statistic(f"{metric} difference", 8, difference)
    # A text is relevant if it is for either classifier (for precision: either calls it
    # positive), so that swapping A and B cannot change the scheme.
    relevant_cells = list(RELEVANT_TEXTS[metric][0])
    is_relevant = (_TO_A[:, relevant_cells].sum(1) + _TO_B[:, relevant_cells].sum(1)) > 0
    if scheme is None:
        if person is None:
            scheme = "iid"
        else:
            relevant = cells[..., is_relevant].sum(-1)  # (K, persons)
            per_person = relevant.sum(-1) / np.maximum(1, np.count_nonzero(relevant, -1))
            # the one policy; a data set with no relevant text counts as one per person
            chosen = {recommended_scheme(max(1.0, float(v))) for v in per_person}
            if len(chosen) > 1:
                raise ValueError(
                    "the recommended `scheme` differs between the data sets of this batch "
                    f"({sorted(chosen)}); pass `scheme`."
                )
            scheme = chosen.pop()
    if scheme != "iid" and person is None:
        raise ValueError(f"`scheme` {scheme!r} needs `groups` (person ids).")
    if scheme == "iid":
        units = [c.astype(float) for c in total]
    else:
        units = [c[c.sum(1) > 0].astype(float) for c in cells]
    single = not batch_shape
    if single and scheme != "iid" and units[0].shape[0] < MIN_PERSONS:
        raise ValueError(
            f"`groups` must give at least {MIN_PERSONS} persons with texts for scheme "
            f"{scheme!r}: {ONE_PERSON}; got {units[0].shape[0]}."
        )
    parts = resample_intervals(
        units,
        statistic,
        scheme=scheme,
        interval=interval,
        pseudo_count=pseudo_count,
        n_resamples=n_resamples,
        confidence_level=float(level),
        generators=dataset_generators(root, len(units), not single),
        batch=None,
    )
    if single and parts["no_valid"][0]:
        raise ValueError(
            f"`metric` {metric!r} is undefined in every resample of these counts "
            "(its denominator is always zero); no interval exists."
        )
    warn_about(parts, statistic.metric, interval, n_resamples, single)
    boot = assemble(
        parts, statistic.metric, scheme, interval, pseudo_count, float(level), batch_shape
    )
    est_a = metric_values(total @ _TO_A, metric)
    est_b = metric_values(total @ _TO_B, metric)

    sets = total.shape[0]
    newcombe_low = newcombe_high = pvalue = np.full(sets, np.nan)
    discordant = np.zeros((sets, 2), dtype=np.int64)
    if metric in _PAIRED_PROPORTIONS and person is None:
        # success for a classifier = its text falls in the metric's numerator cells
        num = list(PROPORTION_METRICS[metric][0])
        den = list(PROPORTION_METRICS[metric][1])
        in_den = _TO_A[:, den].sum(1) > 0  # same texts for B (reference-defined)
        ok_a = _TO_A[:, num].sum(1) > 0
        ok_b = _TO_B[:, num].sum(1) > 0
        table = np.stack(
            [
                total[:, in_den & ok_a & ok_b].sum(1),
                total[:, in_den & ok_a & ~ok_b].sum(1),
                total[:, in_den & ~ok_a & ok_b].sum(1),
                total[:, in_den & ~ok_a & ~ok_b].sum(1),
            ],
            axis=-1,
        ).astype(float)
        some = table.sum(1) > 0
        both, only_a, only_b, neither = np.where(some, table.T, 1.0)
        low, high = newcombe_paired_interval(both, only_a, only_b, neither, float(level))
        newcombe_low = np.where(some, low, np.nan)
        newcombe_high = np.where(some, high, np.nan)
        discordant = np.where(some[:, None], table[:, 1:3], 0).astype(np.int64)
        n_disc = discordant.sum(1)
        # exact McNemar: two-sided binomial test of the discordant texts at 1/2, which
        # by symmetry is min(1, 2 P(X <= min(b, c)))
        tail = stats.binom.cdf(discordant.min(1), n_disc, 0.5)
        pvalue = np.where(some, np.where(n_disc == 0, 1.0, np.minimum(1.0, 2 * tail)), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        disagree = total[:, _A != _B].sum(1) / total.sum(1)
    persons = None if person is None else np.count_nonzero(cells.sum(-1), -1)
    method = f"paired bootstrap (scheme={scheme}, interval={interval}, pseudo_count={pseudo_count})"

    def shaped(values: Any, kind: type = float) -> Any:
        return batch_shaped(values, batch_shape, kind)

    return Comparison(
        metric=metric,
        estimate_a=shaped(est_a),
        estimate_b=shaped(est_b),
        difference=shaped(est_a - est_b),
        low=boot.low,
        high=boot.high,
        confidence_level=float(level),
        method=method,
        disagreement=shaped(disagree),
        n_texts=shaped(total.sum(1), int),
        persons=None if persons is None else shaped(persons, int),
        newcombe_low=shaped(newcombe_low),
        newcombe_high=shaped(newcombe_high),
        mcnemar_pvalue=shaped(pvalue),
        discordant=(
            (int(discordant[0, 0]), int(discordant[0, 1]))
            if single
            else discordant.reshape(*batch_shape, 2)
        ),
        bootstrap=boot,
    )
