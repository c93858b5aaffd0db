r"""Cross-validated classifiers: intervals about the fitting procedure, not one model.

A fine-tuned classifier is often evaluated by (grouped, repeated) K-fold cross-validation:
fold k's texts are coded by a model fit on the other folds, and the out-of-fold labels
are pooled. Those labels are not one model's: each fold has its own model, and all of
them were fit on the same texts that score them. What cross-validation estimates is the
performance of the *fitting procedure* at the training size it used (the mean over
training sets of that size of the population metric of the model fit on one), not the
performance of any one model (Bates, Hastie and Tibshirani 2023). The intervals here are
about that estimand, named in each result's ``estimand``, and include the sources
``"splits"`` (which texts trained which model) besides texts and persons.

**From out-of-fold labels** (:func:`cv_ci`, :func:`cv_counts`). With R repeats (each a
partition into K folds and its out-of-fold labels) the estimate is the mean over repeats
of the pooled out-of-fold metric :math:`\hat\theta_r = f(C_r)`. Unit i (a person with
`groups`, else a text) in repeat r has cells :math:`c_{ri}` and the linearized value
:math:`u_{ri} = \nabla f(C_r) \cdot c_{ri}`.

- ``"naive"``: the out-of-fold labels as one classifier's, the cluster-robust variance of
  the persons (or texts), :math:`V_u = \frac{m}{m - 1} \sum_i \bar u_i^2` with
  :math:`\bar u_i` the mean of :math:`u_{ri}` over repeats; df the effective number of
  persons less one. The field's default.
- ``"fold_clusters"``: the folds are the clusters and the persons are nested in them (a
  person's texts share a fold): fold k's value is :math:`U_{rk} = \sum_{i \in k} u_{ri}`,
  the variance :math:`V_f = \frac{1}{R} \sum_r \frac{K_r}{K_r - 1} \sum_k U_{rk}^2` (the
  repeats' mean: their estimates are dependent, and at most this variable), and the t
  quantile has K - 1 df. Fold-to-fold variation, of the models and of the texts they
  score, is in the variance, at the price of few df and a noisy variance.
- ``"larger_variance"`` (recommended): :math:`\max(V_u, V_f)` with the persons' df: the
  folds' variance where the models' differences make it the larger, never less than
  the persons' (with persons nested in folds, the two-way cluster-robust variance of
  persons and folds is :math:`V_f`; its few folds make it noisy, and the persons'
  variance is its floor).

None sees all the dependence that the shared training texts put between folds (Bates,
Hastie and Tibshirani's point); the atlas (atlas-cv) shows where that matters, and the
nested scheme below estimates it.

**Nested cross-validation** (:func:`nested_cv_ci`, :func:`nested_cv_counts`): Bates,
Hastie and Tibshirani's estimate of the mean squared error of the cross-validation
estimate. In each of R random partitions, a model is fit without every pair of folds
(i, j) and scores both; :math:`e_{ij}` is the metric on fold i of the model fit without i
and j. For an outer fold i, the inner cross-validation estimate :math:`\bar e_i` (the
pooled metric over the folds j != i of the models fit without i and j) is compared with
fold i's own :math:`e_{il}` for each other fold l: the pivots :math:`\bar e_i - e_{il}`.
The variance inflation

.. math:: \hat\iota = \min\left(K, \max\left(1, (K - 1)\left(
   \frac{\widehat{\mathrm{Var}}(\bar e_i - e_{il})}{\widehat{\mathrm{Var}}(e_{ij})}
   - 1\right)\right)\right)

multiplies the naive variance: that of one ordinary cross-validation's out-of-fold labels
(``"naive"``'s, of each run, averaged over B runs). The estimate :math:`\hat e`, the
pooled metric of all pair models (training size n(K - 2)/K), is bias-corrected to the
full size n: :math:`\hat\theta = \hat e - (\hat e - \hat\theta_{CV})(1 + ((K - 2)/(K -
1))^{3/2})` with :math:`\hat\theta_{CV}` the mean of the B ordinary estimates, and the
interval is :math:`\hat\theta \pm q \sqrt{\hat\iota}\, \mathrm{se}`, clipped to the
metric's range. Its estimand is the procedure's performance at the full training size n.
Two departures from the authors' scheme, for persons: the naive variance is the persons'
cluster-robust one, and q is the t quantile with the effective number of persons less one
(normal without persons, as theirs); and the pivots use every other fold l (they draw one
at random): the same variance, estimated with less noise and deterministically.

Folds of persons (:func:`grouped_folds`) keep a person's texts in one fold, so a model
never sees the person it codes; with persons, folds of texts leak and are refused by
``"fold_clusters"`` and by the nested scheme.
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from scipy import special, stats

from ._core import registry
from ._core.labels import as_label_array, check_aligned, factorize_sorted
from ._core.recommended import CV_METHOD
from ._core.results import IntervalResult, sources_of
from ._core.validation import UndefinedMetricWarning, check_confidence_level, check_rng
from .counting import normalize_labels
from .design import effective_clusters
from .metrics import RELEVANT_TEXTS, metric_gradient, metric_values

__all__ = [
    "CV_METHODS",
    "CVInterval",
    "cv_ci",
    "cv_counts",
    "grouped_folds",
    "nested_cv_ci",
    "nested_cv_counts",
]

#: How the interval of a cross-validated metric is computed (:data:`registry.CV_METHOD`).
CV_METHODS: tuple[str, ...] = registry.CV_METHOD.names
#: Metrics on [-1, 1] (their interval is on Fisher's z scale; the others on the logit's).
_SIGNED = ("kappa", "mcc")
_NESTED_METHOD = "nested cross-validation (Bates, Hastie and Tibshirani 2023)"


@dataclass(frozen=True, repr=False)
class CVInterval(IntervalResult):
    """A cross-validated metric with its confidence interval, about the fitting procedure.

    Attributes
    ----------
    metric : str
        The metric.
    estimate, low, high : float or numpy.ndarray
        The estimate and the interval ends (arrays for a batch of data sets).
    confidence_level : float
        The confidence level.
    method : str
        How the interval was computed.
    estimand : str
        What the interval is about, in words: the fitting procedure's metric at a
        training size.
    se, df : float or numpy.ndarray
        Standard error (after any inflation) and the t quantile's degrees of freedom
        (infinite for the nested scheme's normal quantile).
    n_folds, n_repeats : int
        Folds of each partition and partitions (repeats).
    units : int or numpy.ndarray
        Persons (with `groups`), else texts, with a relevant text.
    training_fraction : float
        The share of the data each model the estimand is about is fit on: (K - 1)/K for
        the out-of-fold intervals, 1 for the nested scheme.
    inflation : float or numpy.ndarray
        The nested scheme's variance inflation over the naive variance (NaN for the
        out-of-fold intervals).
    persons : bool
        Whether persons are units (`groups`).
    """

    _derived: ClassVar[tuple[str, ...]] = ("sources",)
    _repr_fields: ClassVar[tuple[str, ...]] = ("se", "df")

    metric: str
    estimate: Any
    low: Any
    high: Any
    confidence_level: float
    method: str
    estimand: str
    se: Any
    df: Any
    n_folds: int
    n_repeats: int
    units: Any
    training_fraction: float
    inflation: Any
    persons: bool

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes: texts, persons, splits."""
        return sources_of(persons=self.persons, splits=True)


def _check_metric(metric: str) -> str:
    return registry.BINARY_METRIC.check(metric)


def _relevant(counts: np.ndarray, metric: str) -> np.ndarray:
    return counts[..., list(RELEVANT_TEXTS[metric][0])].sum(-1)


def _transform(metric: str) -> tuple[Any, Any, Any]:
    """Return the interval's scale: g, its inverse and g'."""
    if metric in _SIGNED:
        return np.arctanh, np.tanh, lambda x: 1 / (1 - x * x)
    return special.logit, special.expit, lambda x: 1 / (x * (1 - x))


def _range(metric: str) -> tuple[float, float]:
    return (-1.0, 1.0) if metric in _SIGNED else (0.0, 1.0)


def _ends(
    estimate: np.ndarray, se: np.ndarray, quantile: np.ndarray, metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """Return the interval's ends on the metric's transformed scale (NaN at its bounds)."""
    g, inverse, slope = _transform(metric)
    lo, hi = _range(metric)
    inside = (estimate > lo) & (estimate < hi) & (se > 0)
    with np.errstate(all="ignore"):
        centre = g(np.where(inside, estimate, (lo + hi) / 2))
        half = quantile * se * slope(np.where(inside, estimate, (lo + hi) / 2))
        low = np.where(inside, inverse(centre - half), np.nan)
        high = np.where(inside, inverse(centre + half), np.nan)
    return low, high


def _warn_bounds(estimate: np.ndarray, low: np.ndarray, metric: str) -> None:
    bad = np.isnan(low)
    if not bad.any():
        return
    at_bound = bad & np.isfinite(estimate)
    what = (
        "the estimate is at the bound of the metric's range or has no variance (a "
        "linearized interval is degenerate there)"
        if at_bound.any()
        else "the metric is undefined (no relevant text)"
    )
    where = "" if estimate.ndim == 0 else f" for {int(bad.sum())} of {bad.size} data sets"
    warnings.warn(
        f"The cross-validation interval of {metric} is undefined{where}: {what}; returning "
        "NaN ends.",
        UndefinedMetricWarning,
        stacklevel=3,
    )


def _unit_values(counts: np.ndarray, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the pooled metric ``(...)`` and each unit's linearized value ``(..., U)``."""
    pooled = counts.sum(-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = metric_values(pooled, metric)
        gradient = np.nan_to_num(metric_gradient(pooled, metric))
    return estimate, np.einsum("...uc,...c->...u", counts, gradient)


def _check_folds(
    folds: Any, shape: tuple[int, ...], n_folds: int | None = None
) -> tuple[np.ndarray, int]:
    arr = np.asarray(folds)
    if arr.shape != shape:
        raise ValueError(f"`folds` must have shape {shape} (one fold per unit); got {arr.shape}.")
    if arr.size and (not np.issubdtype(arr.dtype, np.integer) or arr.min() < -1):
        raise ValueError(
            "`folds` must hold fold numbers 0, 1, ..., K - 1 (and -1 for a unit no fold scored)."
        )
    k = int(arr.max(initial=-1)) + 1 if n_folds is None else max(int(n_folds), 0)
    if n_folds is not None and arr.size and arr.max() >= k:
        raise ValueError(f"`folds` holds a fold number at least `n_folds` ({k}).")
    if k < 2:
        raise ValueError(f"`folds` must hold at least two folds; got {k}.")
    return arr.astype(np.int64), k


def cv_counts(
    counts: Any,
    folds: Any,
    metric: str,
    *,
    nested: bool = True,
    method: str = CV_METHOD,
    confidence_level: float = 0.95,
    n_folds: int | None = None,
) -> CVInterval:
    """Interval of a cross-validated metric from per-unit out-of-fold counts, batched.

    Parameters
    ----------
    counts : array_like of int
        ``(..., R, U, 4)``: unit u's out-of-fold ``[tp, fp, fn, tn]`` in repeat r, a unit
        a person (`nested`) or a text; leading axes index data sets.
    folds : array_like of int
        ``(..., R, U)``: the fold (0 to K - 1) that scored unit u in repeat r.
    metric : str
        A binary metric.
    nested : bool, default True
        Whether the units are persons (the result's sources).
    method : {"larger_variance", "fold_clusters", "naive"}, default "larger_variance"
        The interval (module notes), :data:`perfci.policy.CV_METHOD`.
    confidence_level : float, default 0.95
        The confidence level.
    n_folds : int, optional
        K, if not the largest fold number plus one.

    Returns
    -------
    CVInterval
        About the fitting procedure's metric at training size (K - 1)/K of the data.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.splits import cv_counts
    >>> rng = np.random.default_rng(1)
    >>> counts = rng.multinomial(10, [0.4, 0.1, 0.1, 0.4], size=(1, 20))  # 1 repeat
    >>> folds = np.arange(20)[None, :] % 5
    >>> ci = cv_counts(counts, folds, "recall")
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] df={ci.df:.1f}")
    0.724 [0.614, 0.812] df=17.3
    """
    _check_metric(metric)
    registry.CV_METHOD.check(method)
    level = float(check_confidence_level(confidence_level, scalar=True))
    c = np.asarray(counts, dtype=float)
    if c.ndim < 3 or c.shape[-1] != 4:
        raise ValueError(f"`counts` must have shape (..., repeats, units, 4); got {c.shape}.")
    fold, k = _check_folds(folds, c.shape[:-1], n_folds)
    repeats = c.shape[-3]
    per_repeat, values = _unit_values(c, metric)  # (..., R), (..., R, U)
    estimate = per_repeat.mean(-1)
    relevant = _relevant(c, metric)  # (..., R, U)
    units = np.count_nonzero(relevant.sum(-2), axis=-1)
    onehot = fold[..., None] == np.arange(k)  # (..., R, U, K)
    fold_values = np.einsum("...ru,...ruk->...rk", values, onehot)
    fold_sizes = np.einsum("...ru,...ruk->...rk", relevant, onehot)
    kr = np.count_nonzero(fold_sizes, axis=-1)
    mean_values = values.mean(-2)
    m = units.astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        var_folds = (np.where(kr >= 2, kr / (kr - 1), np.nan) * (fold_values**2).sum(-1)).mean(-1)
        var_units = np.where(m >= 2, m / (m - 1), np.nan) * (mean_values**2).sum(-1)
        df_units = np.asarray(effective_clusters(relevant.sum(-2)), float) - 1
    df_units = np.maximum(np.where(np.isfinite(df_units), df_units, m - 1), 1.0)
    units_name = "persons" if nested else "texts"
    partitions = f"{k} folds, {repeats} partition{'s' * (repeats > 1)}"
    if method == "fold_clusters":
        variance, df = var_folds, np.full(np.shape(estimate), k - 1.0)
        what = f"folds as clusters ({partitions})"
    elif method == "larger_variance":
        variance, df = np.fmax(var_folds, var_units), df_units
        what = (
            f"the larger of the {units_name}' and the folds' cluster-robust variance ({partitions})"
        )
    else:
        variance, df = var_units, df_units
        what = f"{units_name} as clusters, the folds' models as one"
    se = np.sqrt(np.maximum(variance, 0.0))
    quantile = stats.t.ppf(0.5 + level / 2, df)
    low, high = _ends(estimate, se, quantile, metric)
    _warn_bounds(np.asarray(estimate), np.asarray(low), metric)
    scale = "Fisher z" if metric in _SIGNED else "logit"
    return CVInterval(
        metric=metric,
        estimate=estimate[()],
        low=low[()],
        high=high[()],
        confidence_level=level,
        method=f"cross-validation, {what}, t on the {scale} scale",
        estimand=(
            f"the fitting procedure's {metric} at training size {k - 1}/{k} of the data (of "
            "a text coded by the model fit on a random training set of that size, not by "
            "one fold's model), on the population of "
            f"{'persons and their texts' if nested else 'texts'}"
        ),
        se=se[()],
        df=df[()],
        n_folds=k,
        n_repeats=repeats,
        units=units[()],
        training_fraction=(k - 1) / k,
        inflation=np.full(np.shape(estimate), np.nan)[()],
        persons=nested,
    )


def nested_cv_counts(
    pair_counts: Any,
    oof_counts: Any,
    metric: str,
    *,
    bias: bool = True,
    nested: bool = True,
    confidence_level: float = 0.95,
) -> CVInterval:
    """Nested cross-validation interval from the counts of its models, batched.

    Parameters
    ----------
    pair_counts : array_like of int
        ``(..., R, K, K, 4)``: entry ``[r, i, j]`` the ``[tp, fp, fn, tn]`` on fold i of
        partition r of the model fit without folds i and j (the diagonal is not used).
    oof_counts : array_like of int
        ``(..., B, U, 4)``: each unit's out-of-fold counts in B >= 1 ordinary K-fold
        cross-validations (a unit a person, `nested`, or a text): the naive variance
        (the mean over the B of the units' cluster-robust variance) and the bias
        correction.
    metric : str
        A binary metric.
    bias : bool, default True
        Whether to correct the estimate to the full training size.
    nested : bool, default True
        Whether the units are persons.
    confidence_level : float, default 0.95
        The confidence level.

    Returns
    -------
    CVInterval
        About the fitting procedure's metric at the full training size.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.splits import nested_cv_counts
    >>> rng = np.random.default_rng(2)
    >>> pairs = rng.multinomial(40, [0.4, 0.1, 0.1, 0.4], size=(10, 5, 5))  # 10 partitions
    >>> oof = rng.multinomial(10, [0.4, 0.1, 0.1, 0.4], size=(2, 20))  # 2 CVs of 20 persons
    >>> ci = nested_cv_counts(pairs, oof, "recall")
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] inflation {ci.inflation:.2f}")
    0.810 [0.732, 0.888] inflation 1.00
    """
    _check_metric(metric)
    level = float(check_confidence_level(confidence_level, scalar=True))
    pairs = np.asarray(pair_counts, dtype=float)
    if pairs.ndim < 4 or pairs.shape[-1] != 4 or pairs.shape[-2] != pairs.shape[-3]:
        raise ValueError(
            f"`pair_counts` must have shape (..., repeats, K, K, 4); got {pairs.shape}."
        )
    k, repeats = pairs.shape[-2], pairs.shape[-4]
    if k < 3:
        raise ValueError(f"nested cross-validation needs at least 3 folds; got {k}.")
    oof = np.asarray(oof_counts, dtype=float)
    if oof.ndim < 3 or oof.shape[-1] != 4 or oof.shape[-3] < 1:
        raise ValueError(
            "`oof_counts` must have shape (..., cross-validations >= 1, units, 4); got "
            f"{oof.shape}."
        )
    off = ~np.eye(k, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        fold_metric = metric_values(pairs, metric)  # (..., R, K, K): [i, j] on fold i
        # outer fold i's inner estimate: fold j's counts of the model fit without i and j
        inner = np.where(off[..., None], np.swapaxes(pairs, -2, -3), 0.0).sum(-2)
        inner_metric = metric_values(inner, metric)  # (..., R, K)
        raw = metric_values(pairs.sum((-4, -3, -2)), metric)
    pivots = np.where(off, inner_metric[..., :, None] - fold_metric, np.nan)
    flat = (*pivots.shape[:-3], -1)
    var_pivot = np.nanvar(pivots.reshape(flat), axis=-1, ddof=1)
    group = np.where(off, fold_metric, np.nan).reshape(flat)
    var_group = np.nanvar(group, axis=-1, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        inflation = np.clip((var_pivot / var_group - 1) * (k - 1), 1.0, float(k))
    per_run, values = _unit_values(oof, metric)  # (..., B), (..., B, U)
    relevant = _relevant(oof, metric)
    m = np.count_nonzero(relevant, axis=-1).astype(float)  # (..., B)
    with np.errstate(invalid="ignore", divide="ignore"):
        naive = (np.where(m >= 2, m / (m - 1), np.nan) * (values**2).sum(-1)).mean(-1)
        df = np.asarray(effective_clusters(relevant), float).mean(-1) - 1
    units = m.max(-1)
    df = np.maximum(np.where(np.isfinite(df), df, units - 1), 1.0)
    if not nested:
        df = np.full(np.shape(df), np.inf)
    correction = (raw - per_run.mean(-1)) * (1 + ((k - 2) / (k - 1)) ** 1.5)
    estimate = raw - correction if bias else raw
    se = np.sqrt(np.maximum(naive, 0.0) * inflation)
    lo, hi = _range(metric)
    quantile = stats.t.ppf(0.5 + level / 2, df)
    finite = np.isfinite(se) & (se > 0) & np.isfinite(estimate)
    low = np.where(finite, np.clip(estimate - quantile * se, lo, hi), np.nan)
    high = np.where(finite, np.clip(estimate + quantile * se, lo, hi), np.nan)
    _warn_bounds(np.asarray(estimate), np.asarray(low), metric)
    quantile_name = "t with the persons' df" if nested else "normal"
    return CVInterval(
        metric=metric,
        estimate=estimate[()],
        low=low[()],
        high=high[()],
        confidence_level=level,
        method=(
            f"{_NESTED_METHOD}, {k} folds, {repeats} repeats, {quantile_name}, "
            f"{'bias-corrected' if bias else 'no bias correction'}"
        ),
        estimand=(
            f"the fitting procedure's {metric} at the full training size (the data's), on "
            f"the population of {'persons and their texts' if nested else 'texts'}"
        ),
        se=se[()],
        df=df[()],
        n_folds=k,
        n_repeats=repeats,
        units=units[()],
        training_fraction=1.0,
        inflation=inflation[()],
        persons=nested,
    )


# ---------------------------------------------------------------------------- labels


def _check_int(name: str, value: Any, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"`{name}` must be an integer of at least {least}; got {value!r}.")


def grouped_folds(
    n_folds: int,
    *,
    groups: Any = None,
    n_texts: int | None = None,
    repeats: int = 1,
    rng: Any = None,
) -> np.ndarray:
    """Draw random folds of persons (or texts), balanced in their number.

    Parameters
    ----------
    n_folds : int
        K, at least 2.
    groups : array_like, optional
        Person ids, one per text: each person's texts share a fold.
    n_texts : int, optional
        Without `groups`, the texts to fold; with them, if given, their number.
    repeats : int, default 1
        Independent partitions.
    rng : seed or numpy.random.Generator, optional
        The random stream.

    Returns
    -------
    numpy.ndarray of int
        ``(repeats, texts)``: each text's fold, 0 to K - 1, in each partition.

    Examples
    --------
    >>> from perfci.splits import grouped_folds
    >>> grouped_folds(2, groups=["a", "a", "b", "c", "c", "d"], rng=0)
    array([[1, 1, 0, 1, 1, 0]])
    """
    _check_int("n_folds", n_folds, 2)
    _check_int("repeats", repeats, 1)
    gen = check_rng(rng)
    if groups is not None:
        ids = as_label_array("groups", groups)
        if n_texts is not None:
            _check_int("n_texts", n_texts, 1)
            if int(n_texts) != ids.size:
                raise ValueError(
                    f"`n_texts` is {n_texts}, but `groups` holds {ids.size} person ids (one "
                    "per text); give `n_texts` equal to their number, or leave it unset."
                )
        _, unit = factorize_sorted(ids)
    elif n_texts is not None:
        _check_int("n_texts", n_texts, 2)
        unit = np.arange(int(n_texts))
    else:
        raise ValueError("grouped_folds needs `groups` or `n_texts`.")
    n_units = int(unit.max(initial=-1)) + 1
    if not 2 <= int(n_folds) <= n_units:
        raise ValueError(
            f"`n_folds` must be between 2 and the number of "
            f"{'persons' if groups is not None else 'texts'} ({n_units}); got {n_folds}."
        )
    order = np.argsort(gen.random((int(repeats), n_units)), axis=-1)
    fold_of_unit = np.empty_like(order)
    np.put_along_axis(fold_of_unit, order, np.arange(n_units) % int(n_folds), axis=-1)
    return fold_of_unit[:, unit]


def _columns(name: str, values: Any, n: int) -> list[np.ndarray]:
    """Return the columns of a 1-D or 2-D argument (texts x repeats)."""
    if isinstance(values, pd.DataFrame):
        cols = [values[c].to_numpy(dtype=object) for c in values.columns]
    else:
        arr = np.asarray(values, dtype=object)
        if arr.ndim == 1:
            cols = [arr]
        elif arr.ndim == 2:
            cols = list(arr.T)
        else:
            raise ValueError(f"`{name}` must be 1-D or a texts x repeats table; got {arr.ndim}-D.")
    for col in cols:
        if col.shape != (n,):
            raise ValueError(
                f"`{name}` must hold one value per text of `y_true` ({n}); got {col.shape[0]}."
            )
    return cols


def _fold_numbers(col: np.ndarray, r: int) -> np.ndarray:
    if pd.isna(col).any():
        raise ValueError(f"`folds` column {r} has missing values: every text needs its fold.")
    _, number = factorize_sorted(col)
    return number


def cv_ci(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *,
    folds: Any,
    groups: Any = None,
    method: str = CV_METHOD,
    confidence_level: float = 0.95,
    positive: Any = None,
) -> CVInterval:
    """Interval of a cross-validated metric from out-of-fold labels, about the procedure.

    Parameters
    ----------
    y_true : array_like
        Reference labels, one per text.
    y_pred : array_like or pandas.DataFrame
        Out-of-fold labels: one column, or one column per repeat of the cross-validation
        (texts x repeats).
    metric : str
        A binary metric.
    folds : array_like or pandas.DataFrame
        Each text's fold (any labels), in the shape of `y_pred`; one column is shared by
        every repeat (several training seeds on the same folds).
    groups : array_like, optional
        Person ids, one per text. Except with ``"naive"``, a person's texts must share a
        fold in each repeat (folds of persons, :func:`grouped_folds`).
    method : {"larger_variance", "fold_clusters", "naive"}, default "larger_variance"
        The interval (module notes), :data:`perfci.policy.CV_METHOD`.
    confidence_level : float, default 0.95
        The confidence level.
    positive : object, optional
        The positive label, as in :func:`perfci.confusion`.

    Returns
    -------
    CVInterval
        About the fitting procedure's metric at training size (K - 1)/K of the data; its
        sources include ``"splits"``.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> folds = pc.grouped_folds(5, groups=texts["person"], rng=3)[0]
    >>> ci = pc.cv_ci(texts["human"], texts["model"], "recall", folds=folds,
    ...               groups=texts["person"])
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] about {ci.sources}")
    0.880 [0.821, 0.922] about ('texts', 'persons', 'splits')
    """
    check_aligned(y_true=y_true, y_pred=y_pred, folds=folds, groups=groups)
    _check_metric(metric)
    registry.CV_METHOD.check(method)
    n = np.shape(np.asarray(y_true, dtype=object))[0] if np.ndim(y_true) else 0
    preds = _columns("y_pred", y_pred, n)
    fold_columns = _columns("folds", folds, n)
    if len(fold_columns) == 1:
        fold_columns = fold_columns * len(preds)
    if len(fold_columns) != len(preds):
        raise ValueError(
            f"`folds` must have one column per column of `y_pred` ({len(preds)}) or one; got "
            f"{len(fold_columns)}."
        )
    keys = [f"_{r}" for r in range(len(preds))]
    labels = normalize_labels(
        {"y_true": y_true, **dict(zip(keys, preds, strict=True))},
        positive=positive,
        names={"y_true": "`y_true`", **{k: f"`y_pred` column {r}" for r, k in enumerate(keys)}},
    )
    truth = labels.values["y_true"] == labels.positive
    if groups is not None:
        person = as_label_array("groups", groups)
        if person.shape != (n,):
            raise ValueError(f"`groups` must hold one person id per text of `y_true` ({n}).")
        _, unit = factorize_sorted(person)
    else:
        unit = np.arange(n)
    n_units = int(unit.max(initial=-1)) + 1
    counts = np.empty((len(preds), n_units, 4), dtype=np.int64)
    unit_folds = np.empty((len(preds), n_units), dtype=np.int64)
    k = 0
    for r, key in enumerate(keys):  # one pass per repeat: R is small
        predicted = labels.values[key] == labels.positive
        cell = np.where(truth, np.where(predicted, 0, 2), np.where(predicted, 1, 3))
        counts[r] = np.bincount(unit * 4 + cell, minlength=n_units * 4).reshape(n_units, 4)
        number = _fold_numbers(fold_columns[r], r)
        first = np.full(n_units, -1)
        first[unit[::-1]] = number[::-1]
        if method != "naive" and np.any(first[unit] != number):
            raise ValueError(
                f"`folds` column {r} puts texts of one person in different folds: "
                f"method {method!r} needs folds of persons (perfci.grouped_folds), or "
                "use method='naive'."
            )
        unit_folds[r] = first
        k = max(k, int(number.max(initial=-1)) + 1)
    return cv_counts(
        counts,
        unit_folds,
        metric,
        nested=groups is not None,
        method=method,
        confidence_level=confidence_level,
        n_folds=k,
    )


def _take(x: Any, index: np.ndarray) -> Any:
    if hasattr(x, "iloc"):
        return x.iloc[index]
    if isinstance(x, np.ndarray):
        return x[index]
    if hasattr(x, "tocsr"):  # a scipy sparse matrix
        return x.tocsr()[index]
    return [x[i] for i in index]


def _clone(estimator: Any) -> Any:
    try:
        from sklearn.base import clone
    except ImportError:  # scikit-learn is optional: a deep copy of an unfit estimator
        return copy.deepcopy(estimator)
    try:
        return clone(estimator)
    except TypeError:  # not a scikit-learn estimator, only its interface
        return copy.deepcopy(estimator)


def _fit_predict(estimator: Any, x: Any, y: np.ndarray, train: np.ndarray, test: np.ndarray):
    model = _clone(estimator)
    model.fit(_take(x, train), y[train])
    predicted = np.asarray(model.predict(_take(x, test)))
    if predicted.shape != (test.size,):
        raise ValueError(
            f"`estimator.predict` must return one label per text; got shape {predicted.shape}."
        )
    return predicted


def nested_cv_ci(
    estimator: Any,
    X: Any,
    y_true: Any,
    metric: str,
    *,
    groups: Any = None,
    n_folds: int = 10,
    repeats: int = 50,
    bias_repeats: int | None = None,
    confidence_level: float = 0.95,
    positive: Any = None,
    rng: Any = None,
) -> CVInterval:
    """Nested cross-validation interval of a fitting procedure's metric.

    Parameters
    ----------
    estimator : object
        Has ``fit(X, y)`` and ``predict(X)`` (scikit-learn's interface); cloned for
        every fit (:func:`sklearn.base.clone` where scikit-learn is installed, else a
        deep copy).
    X : array_like, pandas.DataFrame, sparse matrix or list
        The texts' features (or the texts, for a pipeline that reads them), one row each.
    y_true : array_like
        Reference labels, one per text (0/1 or two labels; `positive` says which).
    metric : str
        A binary metric.
    groups : array_like, optional
        Person ids: the folds are folds of persons.
    n_folds : int, default 10
        K, at least 3 (the authors' default).
    repeats : int, default 50
        Random partitions of the nested scheme, each ``K (K - 1) / 2`` fits (the
        authors' default; fewer give a noisier inflation).
    bias_repeats : int, optional
        Ordinary cross-validations for the bias correction (K fits each); default
        ``ceil(repeats / 5)``; 0 for no correction (one is still run: the naive
        variance).
    confidence_level : float, default 0.95
        The confidence level.
    positive : object, optional
        The positive label.
    rng : seed or numpy.random.Generator, optional
        The folds' random stream.

    Returns
    -------
    CVInterval
        About the procedure's metric at the full training size (module notes).

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> from sklearn.linear_model import LogisticRegression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((120, 3))
    >>> y = (X[:, 0] + rng.standard_normal(120) > 0).astype(int)
    >>> ci = pc.nested_cv_ci(LogisticRegression(), X, y, "accuracy", n_folds=5,
    ...                      repeats=4, rng=1)
    >>> bool(ci.low < ci.estimate < ci.high), ci.training_fraction, ci.sources
    (True, 1.0, ('texts', 'splits'))
    """
    _check_metric(metric)
    _check_int("n_folds", n_folds, 3)
    _check_int("repeats", repeats, 1)
    bias_repeats = -(-int(repeats) // 5) if bias_repeats is None else bias_repeats
    _check_int("bias_repeats", bias_repeats, 0)
    for attribute in ("fit", "predict"):
        if not callable(getattr(estimator, attribute, None)):
            raise ValueError(f"`estimator` must have a `{attribute}` method (scikit-learn's API).")
    gen = check_rng(rng)
    labels = normalize_labels({"y_true": y_true}, positive=positive, names={"y_true": "`y_true`"})
    y = np.asarray(labels.values["y_true"])
    truth = y == labels.positive
    n = truth.size
    rows = X.shape[0] if hasattr(X, "shape") else len(X)
    if rows != n:
        raise ValueError(f"`X` must hold one row per text of `y_true` ({n}); got {rows}.")
    if groups is not None:
        _, unit = factorize_sorted(as_label_array("groups", groups))
        if unit.shape != (n,):
            raise ValueError(f"`groups` must hold one person id per text of `y_true` ({n}).")
    else:
        unit = np.arange(n)
    n_units = int(unit.max(initial=-1)) + 1
    k = int(n_folds)
    if n_units < k:
        raise ValueError(f"`n_folds` ({k}) must be at most the number of units ({n_units}).")

    def cells(predicted: np.ndarray, index: np.ndarray) -> np.ndarray:
        hit = np.asarray(predicted) == labels.positive
        t = truth[index]
        return np.where(t, np.where(hit, 0, 2), np.where(hit, 1, 3))

    groups_arg = unit if groups is not None else None
    nested_folds = grouped_folds(k, groups=groups_arg, n_texts=n, repeats=repeats, rng=gen)
    pair_counts = np.zeros((int(repeats), k, k, 4), dtype=np.int64)
    for r in range(int(repeats)):  # the user's model fits: K (K - 1) / 2 per repeat
        fold = nested_folds[r]
        for i in range(k):
            for j in range(i + 1, k):
                test = np.flatnonzero((fold == i) | (fold == j))
                train = np.flatnonzero((fold != i) & (fold != j))
                cell = cells(_fit_predict(estimator, X, y, train, test), test)
                for a in (i, j):
                    on = fold[test] == a
                    pair_counts[r, a, i + j - a] = np.bincount(cell[on], minlength=4)
    runs = max(bias_repeats, 1)  # one ordinary cross-validation gives the naive variance
    oof = np.zeros((runs, n_units, 4), dtype=np.int64)
    ordinary = grouped_folds(k, groups=groups_arg, n_texts=n, repeats=runs, rng=gen)
    for b in range(runs):
        for i in range(k):
            test = np.flatnonzero(ordinary[b] == i)
            train = np.flatnonzero(ordinary[b] != i)
            cell = cells(_fit_predict(estimator, X, y, train, test), test)
            np.add.at(oof[b], (unit[test], cell), 1)
    return nested_cv_counts(
        pair_counts,
        oof,
        metric,
        bias=bias_repeats > 0,
        nested=groups is not None,
        confidence_level=confidence_level,
    )
