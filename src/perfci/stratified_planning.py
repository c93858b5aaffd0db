r"""Planning a validation sample stratified by the classifier's prediction.

With a rare construct, researchers code :math:`n_1` texts drawn at random from the
corpus's :math:`N_1` predicted positives and :math:`n_0` from its :math:`N_0` predicted
negatives (simple random sampling without replacement within each stratum), and estimate
the corpus metric from the weighted cells (:mod:`perfci.sample_design`).
:func:`plan_stratified_sample` says how many texts of each stratum a target half-width
needs: the Neyman allocation of the linearized variance, checked by the exact expected
half-width of the design-based interval the sample will give.
:func:`expected_stratified_half_width` gives that expectation for any design
:math:`(n_1, n_0)`, a budget fixed beforehand for one.

The corpus is described by the stratum sizes and two shares: the ``ppv``, the share of
predicted positives that are reference positives, and the ``false_omission_rate``, the
share of predicted negatives that are. Its cells are
:math:`T = (K_1, N_1 - K_1, K_0, N_0 - K_0)` with :math:`K_1 = N_1\,\mathrm{ppv}` and
:math:`K_0 = N_0\,\mathrm{for}` rounded to whole texts.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special, stats

from ._core import registry
from ._core.results import ResultMixin
from ._core.validation import (
    MAX_COUNT,
    UndefinedMetricWarning,
    check_confidence_level,
    check_positive_int,
    check_real_array,
    check_real_scalar,
)
from .metrics import metric_gradient, metric_values
from .sample_design import units_design, weighted_ci

__all__ = [
    "StratifiedSamplePlan",
    "expected_stratified_half_width",
    "plan_stratified_sample",
]

#: Probability left out at each end of a stratum's law of sampled positives (the rest is
#: renormalized): the expected half-width moves by less than 1e-7.
_TAIL = 1e-8
#: Outcomes per stratum at which the interval is computed where a law has more; between
#: them the half-width is interpolated (piecewise cubic).
_NODES = 21
#: Outcomes this close to 0 or to the stratum's coded texts are always computed.
_EDGE = 12
#: Sampled texts times outcomes per call of :func:`weighted_ci` (bounds its memory).
_CHUNK = 2**20
#: A stratum that is coded at all needs two texts: one says nothing of its variance.
_MIN_CODED = 2
#: The most coded texts whose expected half-width the plan computes (a plan of more is
#: refused).
_MAX_CODED = 20_000
#: The half-width counted for an outcome whose interval is undefined (no relevant text,
#: or one sampling unit holding one): the whole of [0, 1].
_UNDEFINED_HALF_WIDTH = 0.5


@dataclass(frozen=True)
class StratifiedSamplePlan(ResultMixin):
    r"""A plan of a validation sample stratified by the classifier's prediction.

    Attributes
    ----------
    metric : str
        The metric planned for (``recall``, ``precision`` or ``f1``).
    n1, n0 : int
        Texts to code from the predicted positives and from the predicted negatives.
    total_texts : int
        ``n1 + n0``.
    half_width : float
        The expected half-width of the design-based interval at ``(n1, n0)``, exact
        over the laws of the sampled cells (see :func:`expected_stratified_half_width`).
    target_half_width, confidence_level : float
        The inputs.
    method : str
        The design-based interval planned for (``"beta"``, Korn-Graubard, or
        ``"logit"``), as :func:`perfci.sample_design.weighted_ci` computes it.
    allocation : str
        How the texts are divided: ``"neyman"`` (the fewest texts), ``"equal"`` or
        ``"proportional"``.
    share_positive : float
        The share of the coded texts the allocation draws from the predicted positives,
        before rounding to whole texts and capping at the stratum sizes.
    normal_total_texts : int
        The total the linearized normal approximation asks for with the same shares
        (where the exact search starts, unless the fallback rule asks for more).
    metric_value : float
        The corpus metric the inputs imply (of the corpus cells, in whole texts).
    predicted_positive, predicted_negative : int
        :math:`N_1` and :math:`N_0`, the corpus's predicted positives and negatives.
    ppv, false_omission_rate : float
        The shares planned at (from a pilot, Jeffreys-smoothed, where not given);
        ``false_omission_rate`` is NaN for precision planned without one.
    expected_false_negatives : float
        :math:`n_0\,\mathrm{for}`, the reference positives expected among the coded
        predicted negatives: what recall and F1 learn the classifier's misses from
        (NaN without a false omission rate).
    fallback_probability : float
        The probability that the coded sample holds no false negative or no true
        positive (recall or F1; NaN for precision), where recall's estimate is 1 or 0
        with a design variance of 0 and its interval falls back to Korn-Graubard's with
        no design effect. The plan keeps it at most :math:`(1 - c)/2`.
    note : str
        That the fallback rule, not the half-width, set the plan; else empty.
    """

    metric: str
    n1: int
    n0: int
    total_texts: int
    half_width: float
    target_half_width: float
    confidence_level: float
    method: str
    allocation: str
    share_positive: float
    normal_total_texts: int
    metric_value: float
    predicted_positive: int
    predicted_negative: int
    ppv: float
    false_omission_rate: float
    expected_false_negatives: float
    fallback_probability: float
    note: str

    def split(self, total_texts: int) -> tuple[int, int]:
        """Divide `total_texts` coded texts between the strata as this plan's allocation does.

        Parameters
        ----------
        total_texts : int
            Texts to code in all.

        Returns
        -------
        tuple of int
            ``(n1, n0)``: ``n1`` is the share of `total_texts` rounded, a coded stratum
            has at least 2 texts and no stratum more than its corpus texts.

        Examples
        --------
        >>> import perfci as pc
        >>> plan = pc.plan_stratified_sample("recall", 0.1, predicted_positive=1000,
        ...                                  predicted_negative=20000, ppv=0.8,
        ...                                  false_omission_rate=0.02)
        >>> plan.split(plan.total_texts) == (plan.n1, plan.n0)
        True
        >>> plan.split(100)  # what 100 coded texts would be
        (7, 93)
        """
        total = check_positive_int("total_texts", total_texts)
        sizes = (self.predicted_positive, self.predicted_negative)
        return _split(total, self.share_positive, *_bounds(self.share_positive, sizes))


def _bounds(share: float, sizes: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """Return the fewest and most texts of each stratum, ``((lo1, lo0), (hi1, hi0))``.

    A stratum the allocation draws from is coded with at least 2 texts and at most its
    corpus texts; one it does not draw from (or of a single text) is not coded.
    """
    coded = [s > 0 and n >= _MIN_CODED for s, n in zip((share, 1 - share), sizes, strict=True)]
    lo = [_MIN_CODED if c else 0 for c in coded]
    hi = [n if c else 0 for c, n in zip(coded, sizes, strict=True)]
    return (lo[0], lo[1]), (hi[0], hi[1])


def _split(total: int, share: float, lo: tuple[int, int], hi: tuple[int, int]) -> tuple[int, int]:
    """Divide `total` texts into ``(n1, n0)``: n1 the rounded share, within the bounds."""
    n1 = int(np.clip(round(total * share), lo[0], hi[0]))
    n0 = int(np.clip(total - n1, lo[1], hi[1]))
    n1 = int(np.clip(total - n0, lo[0], hi[0]))  # what a full stratum 0 leaves to stratum 1
    return n1, n0


# ------------------------------------------------------------------------ validation


def _check_share(name: str, value: Any, needed: bool, metric: str) -> float:
    """Return a share in (0, 1); NaN for a false omission rate that precision does not use."""
    if value is None:
        if needed:
            raise ValueError(
                f"`{name}` is needed to plan for {metric}: give it, or a `pilot` of coded "
                "texts to estimate it from."
            )
        return math.nan
    share = check_real_scalar(name, value)
    if not needed:
        if not 0 <= share <= 1:
            raise ValueError(f"`{name}` must lie in [0, 1]; got {value!r}.")
        return share
    if not 0 < share < 1:
        what = "predicted positives" if name == "ppv" else "predicted negatives"
        raise ValueError(
            f"`{name}` must lie strictly between 0 and 1; got {value!r}. At 0 or 1 the "
            f"{what} would all be of one kind, adding no variance, and the plan would code "
            "as few of them as it can, so the sample could never show otherwise; plan at a "
            "cautious value (such as the far end of a pilot's interval) or give `pilot`."
        )
    return share


def _check_pilot(pilot: Any) -> np.ndarray | None:
    if pilot is None:
        return None
    arr = check_real_array("pilot", pilot)
    expected = "[[tp, fp, 0, 0], [0, 0, fn, tn]] (the coded predicted positives first)"
    if arr.shape != (2, 4):
        raise ValueError(
            f"`pilot` must be the cells of the two strata, {expected}; got shape {arr.shape}."
        )
    if np.any(arr < 0) or np.any(arr != np.round(arr)):
        raise ValueError(
            f"`pilot` must hold non-negative whole numbers of texts; got {arr.tolist()}."
        )
    if np.any(arr[0, 2:] > 0) or np.any(arr[1, :2] > 0):
        raise ValueError(
            f"`pilot` must be {expected}: a stratum of predicted positives holds no "
            f"negative prediction (fn, tn) and one of predicted negatives no positive "
            f"prediction (tp, fp); got {arr.astype(int).tolist()}."
        )
    return arr


def _from_pilot(name: str, given: Any, pilot: np.ndarray | None, needed: bool) -> Any:
    """Return the share given, else the pilot's Jeffreys estimate (x + 1/2) / (n + 1)."""
    if given is not None or pilot is None:
        return given
    row, texts = (0, "predicted positive") if name == "ppv" else (1, "predicted negative")
    positives, n = pilot[row, 0 if row == 0 else 2], pilot[row].sum()
    if n == 0:
        if not needed:
            return None
        raise ValueError(
            f"`pilot` holds no coded {texts}, which the plan needs to estimate `{name}`: "
            f"give `{name}`."
        )
    return float((positives + 0.5) / (n + 1))


def _corpus(
    metric: str, n_pos: int, n_neg: int, ppv: float, rate: float
) -> tuple[np.ndarray, tuple[int, int]]:
    """Return the corpus cells in whole texts and its strata's positives ``(K_1, K_0)``."""
    k1 = int(round(n_pos * ppv))
    k0 = 0 if math.isnan(rate) else int(round(n_neg * rate))
    if not 0 < k1 < n_pos:
        raise ValueError(
            f"`ppv` {ppv:g} of {n_pos} predicted positives is {k1} reference positives: "
            "the stratum would hold one kind of text only; give a ppv that leaves at "
            "least one text of each kind."
        )
    if metric != "precision" and not 0 < k0 < n_neg:
        raise ValueError(
            f"`false_omission_rate` {rate:g} of {n_neg} predicted negatives is {k0} "
            "reference positives: the stratum would hold one kind of text only; give a "
            "rate that leaves at least one text of each kind."
        )
    return np.array([k1, n_pos - k1, k0, n_neg - k0], dtype=float), (k1, k0)


def _plan_iv(
    metric: Any,
    half_width: Any,
    predicted_positive: Any,
    predicted_negative: Any,
    ppv: Any,
    false_omission_rate: Any,
    pilot: Any,
    confidence_level: Any,
    allocation: Any,
    method: Any,
) -> tuple[float, float, int, int, float, float]:
    """Check every argument of :func:`plan_stratified_sample`."""
    registry.STRATIFIED_PLAN_METRIC.check(metric)
    target = check_real_scalar("half_width", half_width)
    if not 0 < target < 0.5:
        raise ValueError(f"`half_width` must lie strictly between 0 and 0.5; got {half_width!r}.")
    level = float(check_confidence_level(confidence_level, scalar=True))
    registry.ALLOCATION.check(allocation)
    registry.STRATIFIED_PLAN_METHOD.check(method)
    n_pos, n_neg, ppv, rate = _corpus_iv(
        metric, predicted_positive, predicted_negative, ppv, false_omission_rate, pilot
    )
    return target, level, n_pos, n_neg, ppv, rate


def _corpus_iv(
    metric: str,
    predicted_positive: Any,
    predicted_negative: Any,
    ppv: Any,
    false_omission_rate: Any,
    pilot: Any,
) -> tuple[int, int, float, float]:
    """Check the corpus's description: stratum sizes and shares (or a pilot)."""
    n_pos = check_positive_int("predicted_positive", predicted_positive)
    n_neg = check_positive_int("predicted_negative", predicted_negative)
    for name, size in (("predicted_positive", n_pos), ("predicted_negative", n_neg)):
        if size > MAX_COUNT:
            raise ValueError(f"`{name}` must be at most {MAX_COUNT:.0e} texts; got {size}.")
    reads_negatives = metric != "precision"
    for name, size, needed in (
        ("predicted_positive", n_pos, True),
        ("predicted_negative", n_neg, reads_negatives),
    ):
        if needed and size < _MIN_CODED:
            raise ValueError(
                f"`{name}` must be at least {_MIN_CODED} for {metric}: a stratum of one text "
                f"cannot be sampled with a variance; got {size}."
            )
    cells = _check_pilot(pilot)
    ppv = _check_share("ppv", _from_pilot("ppv", ppv, cells, True), True, metric)
    rate = _check_share(
        "false_omission_rate",
        _from_pilot("false_omission_rate", false_omission_rate, cells, reads_negatives),
        reads_negatives,
        metric,
    )
    return n_pos, n_neg, ppv, rate


# ------------------------------------------------------------------------ allocation


def _stratum_sds(metric: str, corpus: np.ndarray, sizes: tuple[int, int]) -> np.ndarray:
    r"""Return the within-stratum SDs :math:`S_h` of the linearized values :math:`z = g \cdot c`.

    In stratum 1 a text's z is :math:`g_{tp}` or :math:`g_{fp}`, in stratum 0
    :math:`g_{fn}` or :math:`g_{tn}`: a two-valued variable of population variance
    (divisor :math:`N_h - 1`) :math:`(g_a - g_b)^2 K_h (N_h - K_h) / (N_h (N_h - 1))`.
    """
    g = metric_gradient(corpus, metric)
    sds = np.zeros(2)
    for h, (a, b) in enumerate(((0, 1), (2, 3))):
        size, k = sizes[h], corpus[a]
        if size > 1:
            sds[h] = abs(g[a] - g[b]) * math.sqrt(k * (size - k) / (size * (size - 1)))
    return sds


def _share(allocation: str, sizes: tuple[int, int], sds: np.ndarray) -> float:
    """Return the share of the coded texts drawn from the predicted positives."""
    if allocation == "equal":
        return 0.5
    if allocation == "proportional":
        return sizes[0] / (sizes[0] + sizes[1])
    weights = np.array(sizes, float) * sds  # Neyman: n_h proportional to N_h S_h
    return float(weights[0] / weights.sum())


def _linearized_variance(n: tuple[int, int], sizes: tuple[int, int], sds: np.ndarray) -> float:
    r"""Return :math:`\sum_h N_h^2 (1 - n_h / N_h) S_h^2 / n_h` (0 for a stratum coded whole)."""
    total = 0.0
    for n_h, size, sd in zip(n, sizes, sds, strict=True):
        if sd > 0:
            total += math.inf if n_h == 0 else size**2 * (1 - n_h / size) * sd**2 / n_h
    return total


def _normal_total(
    target: float, level: float, share: float, bounds: Any, sizes: Any, sds: np.ndarray
) -> int:
    r"""Return the fewest texts whose normal half-width :math:`z \sqrt{V}` is at most `target`."""
    z = float(special.ndtri(1 - (1 - level) / 2))
    limit = (target / z) ** 2
    lo, hi = sum(bounds[0]) - 1, sum(bounds[1])
    while hi - lo > 1:  # the variance falls with the total: bisection
        mid = (lo + hi) // 2
        if _linearized_variance(_split(mid, share, *bounds), sizes, sds) <= limit:
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------- expected half-width


def _law(size: int, positives: int, sampled: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the law of a stratum's sampled positives, Hypergeometric: outcomes, pmf."""
    if sampled == 0:
        return np.zeros(1, dtype=np.int64), np.ones(1)
    law = stats.hypergeom(size, positives, sampled)
    first = max(int(law.ppf(_TAIL)), sampled - (size - positives), 0)
    last = min(int(law.isf(_TAIL)), sampled, positives)
    x = np.arange(first, last + 1)
    pmf = law.pmf(x)
    return x, pmf / pmf.sum()


def _nodes(x: np.ndarray, pmf: np.ndarray, sampled: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the outcomes to compute and their weights: the expectation of an interpolant.

    Every outcome while there are at most :data:`_NODES` of them. Else the outcomes within
    :data:`_EDGE` of 0 or of `sampled`, where the half-width bends most (and at 0 and
    `sampled` the interval falls back to another form), are computed as they are, and
    :data:`_NODES` evenly spaced outcomes over the rest carry the pmf times the local
    cubic Lagrange basis (the four nearest nodes) of each outcome there: the expectation
    of the piecewise cubic interpolant of the half-width.
    """
    inner = (x >= _EDGE) & (x <= sampled - _EDGE)
    if inner.sum() <= _NODES:
        return x, pmf
    between, weight = x[inner], pmf[inner]
    grid = np.unique(np.linspace(between[0], between[-1], _NODES).round().astype(np.int64))
    left = np.clip(np.searchsorted(grid, between, side="right") - 2, 0, grid.size - 4)
    stencil = left[:, None] + np.arange(4)
    at = grid[stencil].astype(float)  # (outcomes, 4): the nodes of each outcome's cubic
    basis = np.ones(at.shape)
    for k in range(4):
        for j in range(4):
            if j != k:
                basis[:, k] *= (between - at[:, j]) / (at[:, k] - at[:, j])
    weights = np.bincount(stencil.ravel(), (weight[:, None] * basis).ravel(), grid.size)
    return np.concatenate([x[~inner], grid]), np.concatenate([pmf[~inner], weights])


def _half_widths(
    metric: str,
    method: str,
    level: float,
    sizes: tuple[int, int],
    n: tuple[int, int],
    x1: np.ndarray,
    x0: np.ndarray,
) -> np.ndarray:
    """Return the interval's half-width at every outcome (x1 tp of n1, x0 fn of n0).

    Each outcome is a sample, text by text, whose design-based interval
    :func:`perfci.sample_design.weighted_ci` computes, batched over the outcomes (in
    chunks of :data:`_CHUNK` texts).
    """
    n1, n0 = n
    texts = np.arange(n1 + n0)
    positive = texts < n1
    # the strata coded, as labels give them: label 1 the predicted positives, 0 the negatives
    coded = [h for h, n_h in ((0, n0), (1, n1)) if n_h > 0]
    stratum = positive.astype(np.int64) if coded == [0, 1] else np.zeros(texts.size, np.int64)
    weight = np.where(positive, sizes[0] / max(n1, 1), sizes[1] / max(n0, 1))
    grid1, grid0 = (g.ravel() for g in np.meshgrid(x1, x0, indexing="ij"))
    out = np.empty(grid1.size)
    rows = max(1, _CHUNK // texts.size)
    for start in range(0, grid1.size, rows):  # chunks bound the memory; each is batched
        a, b = grid1[start : start + rows, None], grid0[start : start + rows, None]
        cell = np.where(positive, np.where(texts < a, 0, 1), np.where(texts - n1 < b, 2, 3))
        cells = units_design(
            cell,
            np.broadcast_to(weight, cell.shape),
            np.broadcast_to(stratum, cell.shape),
            strata=np.array(coded),
            stratum_sizes=np.array([sizes[1 - h] for h in coded], float),
        )
        with warnings.catch_warnings():  # an undefined interval counts as [0, 1] below
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            ci = weighted_ci(cells, metric, method=method, confidence_level=level)
        half = (np.asarray(ci.high) - np.asarray(ci.low)) / 2
        out[start : start + rows] = np.where(np.isfinite(half), half, _UNDEFINED_HALF_WIDTH)
    return out.reshape(x1.size, x0.size)


def _expected(
    metric: str,
    method: str,
    level: float,
    sizes: tuple[int, int],
    positives: tuple[int, int],
    n: tuple[int, int],
) -> float:
    """Return :math:`E[(high - low) / 2]` over the hypergeometric laws of the two strata."""
    laws = [_law(sizes[h], positives[h], n[h]) for h in (0, 1)]
    (x1, w1), (x0, w0) = (_nodes(*laws[h], n[h]) for h in (0, 1))
    return float(w1 @ _half_widths(metric, method, level, sizes, n, x1, x0) @ w0)


def _fallback_probability(
    metric: str, sizes: tuple[int, int], positives: tuple[int, int], n: tuple[int, int]
) -> float:
    """Return the probability of coding no true positive or no false negative (NaN: precision).

    Either makes the estimate of recall 0 or 1 with a design variance of 0 (and leaves
    F1 without the predicted negatives' variance): exact hypergeometric probabilities.
    """
    if metric == "precision":
        return math.nan
    none = [stats.hypergeom.pmf(0, sizes[h], positives[h], n[h]) for h in (0, 1)]
    return float(1 - (1 - none[0]) * (1 - none[1]))


def expected_stratified_half_width(
    metric: str,
    n1: int,
    n0: int,
    *,
    predicted_positive: int,
    predicted_negative: int,
    ppv: float | None = None,
    false_omission_rate: float | None = None,
    pilot: Any = None,
    confidence_level: float = 0.95,
    method: str = "beta",
) -> float:
    r"""Return the expected half-width of the design-based interval of a stratified sample.

    Parameters
    ----------
    metric : {"recall", "precision", "f1"}
        The metric.
    n1, n0 : int
        Texts coded from the predicted positives and from the predicted negatives (0, or
        at least 2 and at most the stratum's corpus texts; precision reads no predicted
        negative, and takes ``n0 = 0``).
    predicted_positive, predicted_negative, ppv, false_omission_rate, pilot
        The corpus, as in :func:`plan_stratified_sample`.
    confidence_level : float, default 0.95
        Confidence level of the interval.
    method : {"beta", "logit"}, default "beta"
        The interval of :func:`perfci.sample_design.weighted_ci`.

    Returns
    -------
    float
        :math:`E[(\mathrm{high} - \mathrm{low})/2]` over repeated stratified samples of
        the corpus (see :func:`plan_stratified_sample`, Notes).

    Examples
    --------
    The common design of 300 predicted positives and 300 predicted negatives, and the
    Neyman plan that reaches the same half-width:

    >>> import perfci as pc
    >>> from perfci.stratified_planning import expected_stratified_half_width
    >>> corpus = dict(predicted_positive=1000, predicted_negative=20000, ppv=0.8,
    ...               false_omission_rate=0.02)
    >>> hw = expected_stratified_half_width("recall", 300, 300, **corpus)
    >>> plan = pc.plan_stratified_sample("recall", hw, **corpus)
    >>> print(f"300 + 300: {hw:.4f}; {plan.n1} + {plan.n0} = {plan.total_texts} texts")
    300 + 300: 0.1808; 23 + 326 = 349 texts
    """
    registry.STRATIFIED_PLAN_METRIC.check(metric)
    level = float(check_confidence_level(confidence_level, scalar=True))
    registry.STRATIFIED_PLAN_METHOD.check(method)
    n_pos, n_neg, share_ppv, rate = _corpus_iv(
        metric, predicted_positive, predicted_negative, ppv, false_omission_rate, pilot
    )
    sizes = (n_pos, n_neg)
    n = (_check_coded("n1", n1, n_pos), _check_coded("n0", n0, n_neg))
    if n[0] == 0 or (metric != "precision" and n[1] == 0):
        which = "n1" if n[0] == 0 else "n0"
        raise ValueError(
            f"`{which}` must be at least {_MIN_CODED} for {metric}: the metric reads that "
            "stratum; got 0."
        )
    _, positives = _corpus(metric, n_pos, n_neg, share_ppv, rate)
    return _expected(metric, method, level, sizes, positives, n)


def _check_coded(name: str, value: Any, size: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise ValueError(f"`{name}` must be a non-negative integer of texts; got {value!r}.")
    if value == 1 or value > size:
        raise ValueError(
            f"`{name}` must be 0 or between {_MIN_CODED} and the stratum's {size} corpus "
            f"texts (one coded text says nothing of a stratum's variance); got {value}."
        )
    return int(value)


# ---------------------------------------------------------------------------- search


def _search(evaluate: Any, start: int, lo: int, hi: int, target: float) -> tuple[int, float]:
    r"""Return the fewest texts t in [lo, hi] with evaluate(t) <= target, t - 1 above it.

    Secant steps on log half-width against log texts (the first with the slope -1/2 of
    a half-width falling as :math:`1/\sqrt{t}`), kept inside the bracket, then
    bisection; ``lo - 1`` counts as above the target, and coding every text (`hi`) has
    half-width 0.
    """
    seen: dict[int, float] = {}
    below, above = None, lo - 1
    t = int(np.clip(start, lo, hi))
    for step in range(64):
        if t not in seen:
            seen[t] = evaluate(t)
        if seen[t] <= target:
            below = t if below is None else min(below, t)
        else:
            above = max(above, t)
        if below is not None and below - above <= 1:
            return below, seen[below]
        guess = _secant(seen, target, t)
        if below is None:
            t = min(max(guess, t + 1), hi)
        elif step < 8:  # the guess, kept strictly inside the bracket
            t = int(np.clip(guess, above + 1, below - 1))
            if t in seen:
                t = below - 1 if below - 1 not in seen else (above + below) // 2
        else:
            t = (above + below) // 2
    raise RuntimeError("the search for the plan did not converge")  # pragma: no cover


def _secant(seen: dict[int, float], target: float, t: int) -> int:
    """Return where the half-width is predicted to reach `target`, on log-log scales.

    The line through the last total above the target and the first at or below it
    (else the last two totals); from one total, a half-width falling as 1 / sqrt(t).
    """
    positive = {u: h for u, h in seen.items() if h > 0}
    missed = [u for u, h in positive.items() if h > target]
    met = [u for u, h in positive.items() if h <= target]
    pair = [max(missed), min(met)] if missed and met else list(positive)[-2:]
    if len(pair) == 2:
        (u, v), (hu, hv) = pair, (positive[pair[0]], positive[pair[1]])
        slope = (math.log(hv) - math.log(hu)) / (math.log(v) - math.log(u))
        if slope < 0:
            return math.ceil(u * math.exp((math.log(target) - math.log(hu)) / slope))
    return math.ceil(t * (seen[t] / target) ** 2)


def _fewest(meets: Any, lo: int, hi: int) -> int:
    """Return the fewest texts in [lo, hi] that `meets` (a rule met from some total on)."""
    if meets(lo):
        return lo
    below, above = hi, lo
    while below - above > 1:
        mid = (above + below) // 2
        below, above = (mid, above) if meets(mid) else (below, mid)
    return below


def _note(metric: str, set_by_fallbacks: bool, limit: float) -> str:
    """Return the plan's note: that the fallback rule set it, or ""."""
    if not set_by_fallbacks:
        return ""
    what = "recall would be 1" if metric == "recall" else "F1 would lack their variance"
    return (
        f"the fallback rule sets this plan: with one text fewer, more than {limit:.3g} of "
        f"samples would code no false negative among the predicted negatives ({what}, "
        "its interval assuming no design effect) or no true positive"
    )


def plan_stratified_sample(
    metric: str,
    half_width: float,
    *,
    predicted_positive: int,
    predicted_negative: int,
    ppv: float | None = None,
    false_omission_rate: float | None = None,
    pilot: Any = None,
    confidence_level: float = 0.95,
    allocation: str = "neyman",
    method: str = "beta",
) -> StratifiedSamplePlan:
    r"""Plan a validation sample stratified by the classifier's prediction.

    Parameters
    ----------
    metric : {"recall", "precision", "f1"}
        The corpus metric the sample is to estimate.
    half_width : float
        The largest acceptable expected half-width, in (0, 0.5).
    predicted_positive, predicted_negative : int
        :math:`N_1` and :math:`N_0`: the corpus texts the classifier calls positive and
        negative.
    ppv : float, optional
        The share of predicted positives expected to be reference positives, in (0, 1).
    false_omission_rate : float, optional
        The share of predicted negatives expected to be reference positives, in (0, 1);
        not needed for precision, which reads the predicted positives only.
    pilot : array_like, optional
        Coded pilot texts of the two strata, ``[[tp, fp, 0, 0], [0, 0, fn, tn]]``
        (predicted positives first), from which the shares not given are estimated by
        Jeffreys' :math:`(x + 1/2) / (n + 1)`, so that a pilot with no false negative
        still plans a stratum of predicted negatives. A share given replaces the
        pilot's.
    confidence_level : float, default 0.95
        Confidence level of the interval.
    allocation : {"neyman", "equal", "proportional"}, default "neyman"
        How the coded texts are divided: Neyman's rule (the fewest texts for the
        target), as many of each stratum, or in proportion to the stratum sizes.
    method : {"beta", "logit"}, default "beta"
        The design-based interval of :func:`perfci.sample_design.weighted_ci` whose
        expected half-width is planned for (Korn-Graubard's, or the logit interval).

    Returns
    -------
    StratifiedSamplePlan
        ``n1``, ``n0``, ``total_texts`` and the expected half-width reached.

    Raises
    ------
    ValueError
        For bad input; for a ppv (or, for recall and F1, a false omission rate) of 0 or
        1, or one that leaves a stratum of one kind of text: the plan would then code as
        few texts of that stratum as it can, and nothing in the sample could check the
        assumption; and for a target that needs more than 20,000 coded texts.

    See Also
    --------
    expected_stratified_half_width : The expected half-width of a given design.
    perfci.sample_design.weighted_ci : The interval of the coded sample.
    plan_sample_size : Plans for a simple random sample.

    Notes
    -----
    *Allocation.* The metric of the weighted cells :math:`\hat T` is linearized at the
    corpus cells :math:`T`: :math:`\hat\theta - \theta \approx g \cdot (\hat T - T)`,
    :math:`g` the metric's gradient (:func:`perfci.metrics.metric_gradient`). A text's
    linearized value is :math:`z = g \cdot c`, c its one-hot cell, so within stratum h
    :math:`z` takes two values (:math:`g_{tp}` or :math:`g_{fp}` among predicted
    positives, :math:`g_{fn}` or :math:`g_{tn}` among predicted negatives) and has the
    population variance :math:`S_h^2 = (g_a - g_b)^2 K_h (N_h - K_h) / (N_h (N_h - 1))`,
    :math:`K_h` the stratum's reference positives. Simple random sampling without
    replacement within strata gives

    .. math:: V(n_1, n_0) = \sum_h N_h^2 \Bigl(1 - \frac{n_h}{N_h}\Bigr)
       \frac{S_h^2}{n_h} = \sum_h \frac{N_h^2 S_h^2}{n_h} - \sum_h N_h S_h^2.

    Minimizing :math:`n_1 + n_0` subject to :math:`V = v`: the Lagrangian
    :math:`\sum_h n_h + \lambda (\sum_h N_h^2 S_h^2 / n_h - \sum_h N_h S_h^2 - v)` has
    :math:`1 = \lambda N_h^2 S_h^2 / n_h^2`, so :math:`n_h = \sqrt\lambda\, N_h S_h`:
    Neyman's :math:`n_h \propto N_h S_h` [1]_. Putting it into the constraint,

    .. math:: n = n_1 + n_0 = \frac{(\sum_h N_h S_h)^2}{v + \sum_h N_h S_h^2},

    and :math:`v = (h / z_{1 - \alpha/2})^2` for the target h gives the normal plan
    (``normal_total_texts``). The second term is the finite population correction. A
    stratum whose share would exceed its corpus texts is coded whole (it adds no
    variance) and the rest goes to the other, which is again optimal for two strata; a
    coded stratum gets at least 2 texts. For recall
    :math:`g_{tp} - g_{fp} = (1 - R)/P` and :math:`g_{fn} - g_{tn} = -R/P` (P the
    corpus's reference positives), so the predicted negatives' share grows with
    :math:`N_0 \sqrt{\mathrm{for}(1 - \mathrm{for})}`; for precision
    :math:`g_{fn} = g_{tn} = 0`: no predicted negative is needed, and Neyman's rule
    codes none.

    *The half-width.* The normal plan is only a start: the interval users get is not
    :math:`\pm z \sqrt V`. With :math:`(n_1, n_0)` fixed, the sampled true positives are
    :math:`x_1 \sim \mathrm{Hypergeometric}(N_1, K_1, n_1)` and the sampled false
    negatives :math:`x_0 \sim \mathrm{Hypergeometric}(N_0, K_0, n_0)`, independent, and
    each outcome :math:`(x_1, x_0)` is a coded sample whose interval
    :func:`perfci.sample_design.weighted_ci` computes (batched over the outcomes, texts
    as units, the stratum sizes giving the weights and the finite population
    correction). The expected half-width is the sum over the outcomes weighted by their
    probabilities. Where a law has more than 21 outcomes more than 12 away from 0 and
    from :math:`n_h`, the interval is computed at 21 evenly spaced ones among those
    (and at every outcome nearer the ends, where it bends most) and the sum is that of
    the piecewise cubic interpolant between them; the tests bound its difference from
    the sum over every outcome (at most 2e-7 at the designs tried) below 1e-6. At most 1e-8 of
    probability is left out at each end of a law. An outcome whose interval is
    undefined (no relevant text sampled) counts as the whole [0, 1], half-width 0.5.

    *Fallbacks.* A coded sample with no false negative has a recall of 1 and a design
    variance of 0 (and one with no true positive a recall of 0), and its interval falls
    back to Korn-Graubard's at the relevant texts with no design effect
    (:mod:`perfci.sample_design`), far narrower than the design allows; F1's loses the
    predicted negatives' variance. A small expected half-width could then come from
    these samples alone, as the Wald interval's does in :func:`plan_sample_size`. For
    recall and F1 the plan therefore also keeps their probability,
    ``fallback_probability`` (exact, from the two laws), at most :math:`(1 - c)/2`, the
    share of samples an interval may miss on one side: about
    :math:`\ln(2/(1 - c)) \approx 3.7` false negatives expected among the coded
    predicted negatives at 95%. Where this rule, not the half-width, sets the plan,
    ``note`` says so. Precision reads one stratum, whose texts weigh alike: its
    fallback is Clopper-Pearson's interval of the coded texts, and no rule is needed.

    *The search.* The plan is the fewest texts, with the allocation's shares, that meet
    both rules while one text fewer does not: the fewest for the fallback rule by
    bisection, then secant steps on log half-width against log texts from the normal
    plan (or that fewest, if more); plans of more than 20,000 coded texts are refused
    rather than computed.

    *Which interval.* The plan is for the design-based ``"beta"`` (Korn-Graubard)
    interval, or ``"logit"``: their ends are functions of each outcome, so their
    expectation is exact. The recommended interval of such a sample, ``"poststratified"``
    (:data:`perfci.policy.WEIGHTED_METHOD`), is the interval of a posterior simulation
    and is not enumerated. At 16 plans for corpora of 300 to 2,000 predicted positives
    and 20,000 to 100,000 predicted negatives (1,000 stratified samples of each corpus
    drawn), its mean half-width was within 2.5% of Korn-Graubard's: for recall from 2%
    narrower to 1% wider, for precision 0.5-2% narrower, for F1 0.5-2.5% wider, and
    both 95% intervals covered at least 0.947 (within 0.007, the Monte-Carlo error). The
    plan is for the design-based interval; analysed with the recommended one, a sample
    may come out that much wider on average. Precision reads the predicted positives
    only: its Neyman plan codes no predicted negative, and the sample is then one
    stratum of :math:`N_1` texts.

    References
    ----------
    .. [1] Cochran, W. G. (1977). Sampling Techniques, 3rd ed., section 5.5. Wiley.

    Examples
    --------
    A corpus of 1,000 predicted positives (80% of them reference positives) and 20,000
    predicted negatives (2% of them positives): corpus recall 800 / 1,200 = 0.667.

    >>> import perfci as pc
    >>> plan = pc.plan_stratified_sample("recall", 0.1, predicted_positive=1000,
    ...                                  predicted_negative=20000, ppv=0.8,
    ...                                  false_omission_rate=0.02)
    >>> print(f"recall {plan.metric_value:.3f}: code {plan.n1} + {plan.n0} = "
    ...       f"{plan.total_texts} texts, expected half-width {plan.half_width:.4f}")
    recall 0.667: code 73 + 1019 = 1092 texts, expected half-width 0.1000
    >>> plan.normal_total_texts, round(plan.expected_false_negatives)
    (1016, 20)

    From a pilot of 40 coded predicted positives and 100 predicted negatives without a
    false negative (the rate planned at is Jeffreys' 0.5 / 101):

    >>> plan = pc.plan_stratified_sample("recall", 0.1, predicted_positive=1000,
    ...                                  predicted_negative=20000,
    ...                                  pilot=[[31, 9, 0, 0], [0, 0, 0, 100]])
    >>> print(f"ppv {plan.ppv:.3f}, for {plan.false_omission_rate:.4f}: "
    ...       f"{plan.n1} + {plan.n0} texts")
    ppv 0.768, for 0.0050: 35 + 913 texts
    >>> print(f"{plan.expected_false_negatives:.1f} false negatives expected, fallback "
    ...       f"probability {plan.fallback_probability:.3f}")
    4.5 false negatives expected, fallback probability 0.010

    """
    target, level, n_pos, n_neg, share_ppv, rate = _plan_iv(
        metric,
        half_width,
        predicted_positive,
        predicted_negative,
        ppv,
        false_omission_rate,
        pilot,
        confidence_level,
        allocation,
        method,
    )
    sizes = (n_pos, n_neg)
    corpus, positives = _corpus(metric, n_pos, n_neg, share_ppv, rate)
    sds = _stratum_sds(metric, corpus, sizes)
    share = _share(allocation, sizes, sds)
    bounds = _bounds(share, sizes)
    start = _normal_total(target, level, share, bounds, sizes, sds)
    if start > _MAX_CODED:
        raise ValueError(
            f"`half_width` {target:g} needs about {start:,} coded texts (by the normal "
            f"approximation), more than the {_MAX_CODED:,} whose expected half-width the plan "
            "computes; is the target too small?"
        )

    lo, hi = sum(bounds[0]), sum(bounds[1])
    limit = (1 - level) / 2

    def fallback(total: int) -> float:
        return _fallback_probability(metric, sizes, positives, _split(total, share, *bounds))

    fewest = lo if metric == "precision" else _fewest(lambda t: fallback(t) <= limit, lo, hi)

    def evaluate(total: int) -> float:
        return _expected(metric, method, level, sizes, positives, _split(total, share, *bounds))

    total, achieved = _search(evaluate, max(start, fewest), fewest, hi, target)
    n1, n0 = _split(total, share, *bounds)
    return StratifiedSamplePlan(
        metric=metric,
        n1=n1,
        n0=n0,
        total_texts=n1 + n0,
        half_width=achieved,
        target_half_width=target,
        confidence_level=level,
        method=method,
        allocation=allocation,
        share_positive=share,
        normal_total_texts=start,
        metric_value=float(metric_values(corpus, metric)),
        predicted_positive=n_pos,
        predicted_negative=n_neg,
        ppv=share_ppv,
        false_omission_rate=rate,
        expected_false_negatives=n0 * rate,
        fallback_probability=fallback(total),
        note=_note(metric, total == fewest > lo, limit),
    )
