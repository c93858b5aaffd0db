"""Paired comparison of two classifiers scored on the same texts.

Each text has a triple (reference, classifier A, classifier B), so a sample is eight
counts (per person when texts are nested). The paired bootstrap resamples these joint
counts and evaluates the metric of A and of B on the same resample; the interval is of
the difference. Resampling the two classifiers separately would ignore that they were
scored on the same texts and give intervals that are too wide.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ._core.resampling import Statistic
from ._core.validation import check_choice, check_confidence_level
from .analytic import proportion_ci
from .bootstrap import (
    BOOTSTRAP_INTERVALS,
    SCHEMES,
    BootstrapCI,
    assemble,
    check_pseudo_count,
    is_positive_int,
    resample_intervals,
    warn_about,
)
from .counting import _as_label_array, _default_positive
from .metrics import BINARY_METRICS, PROPORTION_METRICS, RELEVANT_TEXTS, metric_values
from .reporting import HIERARCHICAL_MIN_TEXTS

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
class Comparison:
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
    estimate_a: float
    estimate_b: float
    difference: float
    low: float
    high: float
    confidence_level: float
    method: str
    disagreement: float
    n_texts: int
    persons: int | None
    newcombe_low: float
    newcombe_high: float
    mcnemar_pvalue: float
    discordant: tuple[int, int]
    bootstrap: BootstrapCI

    def __repr__(self) -> str:
        return (
            f"Comparison(metric={self.metric!r}, difference={self.difference:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, estimate_a={self.estimate_a:.4g}, "
            f"estimate_b={self.estimate_b:.4g}, disagreement={self.disagreement:.4g}, "
            f"method={self.method!r})"
        )


def newcombe_paired_interval(
    both: float, only_a: float, only_b: float, neither: float, confidence_level: float = 0.95
) -> tuple[float, float]:
    r"""Newcombe's square-and-add interval for a difference of paired proportions.

    Parameters
    ----------
    both, only_a, only_b, neither : float
        The paired 2 x 2 table: successes of both, of A only, of B only, of neither.
    confidence_level : float, default 0.95
        Confidence level.

    Returns
    -------
    low, high : float
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
    n = both + only_a + only_b + neither
    a_success, a_fail = both + only_a, only_b + neither
    b_success, b_fail = both + only_b, only_a + neither
    p1, p2 = a_success / n, b_success / n
    w1 = proportion_ci(a_success, n, method="wilson", confidence_level=confidence_level)
    w2 = proportion_ci(b_success, n, method="wilson", confidence_level=confidence_level)
    margins = a_success * a_fail * b_success * b_fail
    phi = 0.0
    if margins > 0:
        cross = both * neither - only_a * only_b
        if cross > n / 2:
            phi = (cross - n / 2) / np.sqrt(margins)
        elif cross < 0:
            phi = cross / np.sqrt(margins)
    d1, e2 = p1 - w1.low, w2.high - p2
    d2, e1 = p2 - w2.low, w1.high - p1
    low = (p1 - p2) - np.sqrt(d1**2 + e2**2 - 2 * phi * d1 * e2)
    high = (p1 - p2) + np.sqrt(d2**2 + e1**2 - 2 * phi * d2 * e1)
    return float(low), float(high)


def _joint_cells(t: np.ndarray, a: np.ndarray, b: np.ndarray, person: np.ndarray | None):
    code = 4 * t + 2 * a + b
    if person is None:
        return np.bincount(code, minlength=8)
    ids, idx = np.unique(person, return_inverse=True)
    return np.bincount(idx * 8 + code, minlength=ids.size * 8).reshape(ids.size, 8)


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
        Reference (human) labels, one per text.
    pred_a, pred_b : array_like
        The two classifiers' labels for the same texts.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    groups : array_like, optional
        Person ids, one per text: the bootstrap then resamples persons.
    positive : object, optional
        The positive label (default 1 for 0/1 or boolean codes).
    confidence_level : float, default 0.95
        Confidence level.
    scheme : {"iid", "cluster", "hierarchical"}, optional
        Bootstrap scheme. Default: iid without groups; with groups, cluster below
        :data:`perfci.HIERARCHICAL_MIN_TEXTS` relevant texts per person, else
        hierarchical.
    interval : {"percentile", "bca"}, default "percentile"
        Bootstrap interval.
    pseudo_count : int, default 0
        Pseudo counts added to each of the eight joint cells (or held by a
        pseudo-person).
    n_resamples : int, default 2000
        Resamples.
    rng : numpy.random.Generator, int or None
        Random generator or seed.

    Returns
    -------
    Comparison
        The difference A - B, its paired bootstrap interval, the share of texts on which
        A and B disagree, and for accuracy, recall and specificity on independent texts
        Newcombe's paired interval and the exact McNemar p-value.

    Notes
    -----
    Each text is one of eight joint cells (reference, A, B); the bootstrap draws these
    counts (per person for the cluster schemes) and each replicate is
    ``metric(A) - metric(B)`` of the same resample. Replicates where either metric is
    undefined are dropped. Identical classifiers give a difference of exactly 0 with a
    zero-width interval.

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
    check_choice("metric", metric, BINARY_METRICS)
    if scheme is not None:
        check_choice("scheme", scheme, SCHEMES)
    check_choice("interval", interval, BOOTSTRAP_INTERVALS)
    level = check_confidence_level(confidence_level)
    if level.ndim:
        raise ValueError("`confidence_level` must be a single number.")
    pseudo_count = check_pseudo_count(pseudo_count)
    if not is_positive_int(n_resamples):
        raise ValueError(f"`n_resamples` must be a positive integer; got {n_resamples!r}.")
    t = _as_label_array("y_true", y_true)
    a = _as_label_array("pred_a", pred_a)
    b = _as_label_array("pred_b", pred_b)
    for name, arr in (("pred_a", a), ("pred_b", b)):
        if arr.shape != t.shape:
            raise ValueError(f"`{name}` must have one label per text ({t.size}); got {arr.size}.")
    labels = np.unique(np.concatenate([t.astype(str), a.astype(str), b.astype(str)]))
    if positive is None:
        positive = _default_positive(np.concatenate([t, a, b]))
        if positive is None:
            raise ValueError(f"`positive` must name the positive label among {labels.tolist()}.")
    if not any(np.any(x == positive) for x in (t, a, b)):
        raise ValueError(f"`positive` label {positive!r} is not among the labels.")
    for name, arr in (("y_true", t), ("pred_a", a), ("pred_b", b)):
        if np.unique(arr).size > 2:
            raise ValueError(f"`{name}` must be binary labels for a comparison.")
    person = None
    if groups is not None:
        person = _as_label_array("groups", groups)
        if person.shape != t.shape:
            raise ValueError(f"`groups` must have one id per text ({t.size}); got {person.size}.")
    cells = _joint_cells(
        (t == positive).astype(int),
        (a == positive).astype(int),
        (b == positive).astype(int),
        person,
    )

    def difference(c: np.ndarray) -> np.ndarray:
        return metric_values(c @ _TO_A, metric) - metric_values(c @ _TO_B, metric)

    statistic = Statistic(f"{metric} difference", 8, difference)
    total = cells if person is None else cells.sum(0)
    # A text is relevant if it is for either classifier (for precision: either calls it
    # positive), so that swapping A and B cannot change the scheme.
    relevant_cells = list(RELEVANT_TEXTS[metric][0])
    is_relevant = (_TO_A[:, relevant_cells].sum(1) + _TO_B[:, relevant_cells].sum(1)) > 0
    if scheme is None:
        scheme = "iid"
        if person is not None:
            relevant = cells[:, is_relevant].sum(1)
            per_person = relevant.sum() / max(1, np.count_nonzero(relevant))
            scheme = "hierarchical" if per_person >= HIERARCHICAL_MIN_TEXTS else "cluster"
    if scheme != "iid" and person is None:
        raise ValueError(f"`scheme` {scheme!r} needs `groups` (person ids).")
    boot_cells = cells.sum(0) if (scheme == "iid" and person is not None) else cells
    if scheme != "iid":
        boot_cells = boot_cells[boot_cells.sum(1) > 0]
    parts = resample_intervals(
        [boot_cells.astype(float)],
        statistic,
        scheme=scheme,
        interval=interval,
        pseudo_count=pseudo_count,
        n_resamples=n_resamples,
        confidence_level=float(level),
        generators=[np.random.default_rng(rng)],
        batch=None,
    )
    if parts["no_valid"][0]:
        raise ValueError(
            f"`metric` {metric!r} is undefined in every resample of these counts "
            "(its denominator is always zero); no interval exists."
        )
    warn_about(parts, statistic.metric, interval, n_resamples, True)
    boot = assemble(parts, statistic.metric, scheme, interval, pseudo_count, float(level), ())
    est_a = float(metric_values(total @ _TO_A, metric))
    est_b = float(metric_values(total @ _TO_B, metric))

    newcombe = (np.nan, np.nan)
    pvalue = np.nan
    discordant = (0, 0)
    if metric in _PAIRED_PROPORTIONS and person is None:
        # success for a classifier = its text falls in the metric's numerator cells
        num = list(PROPORTION_METRICS[metric][0])
        den = list(PROPORTION_METRICS[metric][1])
        in_den = _TO_A[:, den].sum(1) > 0  # same texts for B (reference-defined)
        ok_a = _TO_A[:, num].sum(1) > 0
        ok_b = _TO_B[:, num].sum(1) > 0
        table = [
            total[in_den & ok_a & ok_b].sum(),
            total[in_den & ok_a & ~ok_b].sum(),
            total[in_den & ~ok_a & ok_b].sum(),
            total[in_den & ~ok_a & ~ok_b].sum(),
        ]
        if sum(table) > 0:
            newcombe = newcombe_paired_interval(*table, confidence_level=float(level))
            discordant = (int(table[1]), int(table[2]))
            n_disc = discordant[0] + discordant[1]
            pvalue = (
                1.0 if n_disc == 0 else float(stats.binomtest(discordant[0], n_disc, 0.5).pvalue)
            )
    disagree = float(total[_A != _B].sum() / total.sum())
    return Comparison(
        metric=metric,
        estimate_a=est_a,
        estimate_b=est_b,
        difference=est_a - est_b,
        low=boot.low,
        high=boot.high,
        confidence_level=float(level),
        method=f"paired bootstrap (scheme={scheme}, interval={interval}, "
        f"pseudo_count={pseudo_count})",
        disagreement=disagree,
        n_texts=int(total.sum()),
        persons=None if person is None else int(np.count_nonzero(cells.sum(1))),
        newcombe_low=newcombe[0],
        newcombe_high=newcombe[1],
        mcnemar_pvalue=pvalue,
        discordant=discordant,
        bootstrap=boot,
    )
