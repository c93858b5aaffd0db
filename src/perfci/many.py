r"""Many classifiers on the same texts: simultaneous intervals and rank confidence sets.

A study that compares five prompts with a baseline, or ranks eight models, on one set of
coded texts makes many comparisons at once: five separate 95% intervals cover jointly far
less than 95%, and the prompt that ranks first on these texts looks better than it is.
This module gives intervals that hold jointly.

**The joint distribution.** Classifier k has the pooled cells :math:`C_k` of every text and
the metric :math:`\hat\theta_k = f(C_k)`; unit i (a person with `groups`, else a text) has
cells :math:`c_{ik}` and the linearized value :math:`u_{ik} = \nabla f(C_k) \cdot c_{ik}`
(:func:`perfci.metrics.metric_gradient`). A comparison p of classifiers a and b has the
difference :math:`\hat d_p = \hat\theta_a - \hat\theta_b` and the values
:math:`D_{ip} = u_{ia} - u_{ib}`; the differences' cluster-robust covariance is

.. math:: \hat\Sigma_{pq} = \sqrt{\frac{m_p}{m_p - 1} \frac{m_q}{m_q - 1}}
   \sum_i D_{ip} D_{iq},

with :math:`m_p` the units with a text relevant to either classifier of comparison p. Each
difference's standard error and t statistic are those of :func:`perfci.compare`'s
cluster-robust interval (its df the effective number of persons less one, :math:`G^*_p -
1`, or the relevant texts less one without persons).

**Simultaneous intervals** (``adjust="max_t"``, the default): :math:`\hat d_p \pm c\,
\mathrm{se}_p` with c the 1 - alpha quantile of :math:`\max_p |T_p|`, T multivariate t with
the correlation of :math:`\hat\Sigma` and the smallest df of the comparisons, computed from
a fixed scrambled Sobol sequence of :data:`SOBOL_POINTS` points (deterministic; its
error in c is about 1e-3). The adjusted p-value of comparison p is the share of the
sequence with :math:`\max |T| \ge |t_p|`. ``"bonferroni"`` uses :math:`t_{1 - \alpha /
(2P)}` for P comparisons, ``"holm"`` the same intervals with Holm's step-down p-values,
``"none"`` the unadjusted intervals. With two classifiers there is one comparison and
:func:`compare_many` is :func:`perfci.compare` (its recommended interval).

**Rank confidence sets** (Mogstad, Romano, Shaikh and Wilhelm 2024): from the simultaneous
intervals of all pairwise differences, classifier k's rank (1 the best, the highest
metric) is at least 1 plus the classifiers whose difference from k is surely positive,
and at most K less those whose difference is surely negative; the sets cover every true
rank at once at the level. The classifier ranked first on the same texts was chosen by
them: its interval in :func:`rank_ci` is the simultaneous one of all K metrics (max-t over
the K estimates), which covers whichever classifier is chosen.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats
from scipy.stats import qmc

from ._core import registry
from ._core.labels import as_label_array, check_aligned, factorize_sorted, plain
from ._core.recommended import MANY_ADJUSTMENT, RECOMMENDED
from ._core.validation import UndefinedMetricWarning, check_confidence_level
from .counting import normalize_labels
from .design import effective_clusters
from .metrics import RELEVANT_TEXTS, metric_gradient, metric_values

__all__ = [
    "ADJUSTMENTS",
    "MAX_CLASSIFIERS",
    "SOBOL_POINTS",
    "compare_many",
    "difference_contrasts",
    "joint_many",
    "many_intervals",
    "rank_ci",
    "rank_sets",
]

#: How the intervals of many comparisons are made to hold together (registry.MANY_ADJUST).
ADJUSTMENTS = registry.MANY_ADJUST.names
#: Points of the scrambled Sobol sequence of the max-t quantile (fixed seed: deterministic).
SOBOL_POINTS = 2**16
_SOBOL_SEED = 20261203
#: The most classifiers of one call: the joint cells number 2 ** (K + 1).
MAX_CLASSIFIERS = 12
# Gauss-Legendre nodes over the quantiles of the t's scale S, and the largest number
# the sorted law of max |Z| is asked about (a float32).
_S_NODES = 64
_LARGEST = 1e30


def _classifiers(preds: Any, n_texts: int = -1) -> tuple[list[str], list[Any]]:
    """Return the classifiers' names and label columns of a table, a mapping or a 2-D array.

    A list or tuple of `n_texts`-long label sequences (of another number than `n_texts`)
    holds one classifier each, named by position; otherwise a list is rows of texts.
    """
    if isinstance(preds, pd.DataFrame):
        names, columns = [str(c) for c in preds.columns], [preds[c] for c in preds.columns]
    elif isinstance(preds, Mapping):
        names, columns = [str(k) for k in preds], list(preds.values())
    elif _per_classifier(preds, n_texts):
        names, columns = [str(j) for j in range(len(preds))], list(preds)
    else:
        arr = np.asarray(preds, dtype=object)
        if arr.ndim != 2:
            raise ValueError(
                "`preds` must be a table with one column of labels per classifier (a "
                "DataFrame, a mapping of names to labels, a list of label arrays or a 2-D "
                f"array of texts x classifiers); got {arr.ndim} dimension(s)."
            )
        names, columns = [str(j) for j in range(arr.shape[1])], list(arr.T)
    if len(names) < 2:
        raise ValueError(f"`preds` must hold at least two classifiers; got {len(names)}.")
    if len(names) > MAX_CLASSIFIERS:
        raise ValueError(
            f"`preds` may hold at most {MAX_CLASSIFIERS} classifiers; got {len(names)} "
            "(a 2-D array is read as texts x classifiers: pass a mapping of names to labels)."
        )
    if len(set(names)) != len(names):
        raise ValueError(f"`preds` must name each classifier once; got {names}.")
    return names, columns


def _n_texts(y_true: Any) -> int:
    """Return the texts of `y_true` (-1 for a scalar, refused later)."""
    return int(np.shape(np.asarray(y_true, dtype=object))[0]) if np.ndim(y_true) else -1


def _per_classifier(preds: Any, n_texts: int) -> bool:
    """Return whether `preds` is a list or tuple of label sequences, one per classifier.

    A square one (as many sequences as texts, each of a label per text) could be either
    texts x classifiers or classifiers x texts, and is refused.
    """
    if not isinstance(preds, list | tuple) or not preds:
        return False
    if any(isinstance(c, str | bytes) or np.ndim(c) != 1 for c in preds):
        return False
    lengths = {len(c) for c in preds}
    if len(preds) != n_texts:  # rows of texts would be n_texts of them
        return lengths == {n_texts} or len(preds) <= MAX_CLASSIFIERS
    if lengths == {n_texts}:
        raise ValueError(
            f"`preds` is a list of {n_texts} sequences of {n_texts} labels: it could be "
            "texts x classifiers or classifiers x texts; pass a mapping of names to labels "
            "or a DataFrame."
        )
    return False


def joint_many(
    y_true: Any, preds: Any, *, groups: Any = None, positive: Any = None
) -> tuple[list[str], np.ndarray]:
    """Count the texts of each joint cell of a reference and K classifiers' labels.

    Joint cell j of ``2 ** (K + 1)`` holds the texts whose reference label is bit K of j
    and whose classifier k's label is bit ``K - 1 - k`` (1 = positive).

    Returns
    -------
    names : list of str
        The classifiers.
    joint : numpy.ndarray of int
        ``(2 ** (K + 1),)``, or per person ``(persons, 2 ** (K + 1))`` with `groups`.
    """
    n_texts = _n_texts(y_true)
    names, columns = _classifiers(preds, n_texts)
    for name, column in zip(names, columns, strict=True):
        if np.shape(np.asarray(column, dtype=object)) != (n_texts,):
            raise ValueError(
                f"`preds` column {name!r} must hold one label per text of `y_true` "
                f"({max(n_texts, 0)}); got shape {np.shape(np.asarray(column, dtype=object))}."
            )
    keys = [f"_{j}" for j in range(len(names))]
    label_names = {k: f"`preds` column {n!r}" for k, n in zip(keys, names, strict=True)}
    labels = normalize_labels(
        {"y_true": y_true, **dict(zip(keys, columns, strict=True))},
        positive=positive,
        names={"y_true": "`y_true`", **label_names},
    )
    k = len(names)
    bits = np.stack(
        [labels.values["y_true"] == labels.positive]
        + [labels.values[key] == labels.positive for key in keys],
        axis=1,
    )
    code = bits.astype(np.int64) @ (1 << np.arange(k, -1, -1))
    size = 1 << (k + 1)
    if groups is None:
        return names, np.bincount(code, minlength=size)
    person = as_label_array("groups", groups)
    if person.shape != code.shape:
        raise ValueError(f"`groups` must hold one person id per text ({code.size}).")
    _, unit = factorize_sorted(person)
    persons = int(unit.max(initial=-1)) + 1
    if persons < 2:
        raise ValueError(
            "`groups` holds a single person: there is no variance between persons to "
            "compare classifiers on (give two or more, or no groups for independent texts)."
        )
    return names, np.bincount(unit * size + code, minlength=persons * size).reshape(persons, size)


def _cell_map(k: int) -> np.ndarray:
    """Return ``(2 ** (K + 1), K, 4)``: the confusion cell of each classifier in each joint cell."""
    j = np.arange(1 << (k + 1))
    truth = (j >> k) & 1
    pred = (j[:, None] >> (k - 1 - np.arange(k))) & 1
    cell = np.where(truth[:, None] == 1, np.where(pred == 1, 0, 2), np.where(pred == 1, 1, 3))
    return (cell[..., None] == np.arange(4)).astype(float)


def _statistics(
    joint: np.ndarray, k: int, metric: str, nested: bool, contrasts: np.ndarray
) -> dict[str, Any]:
    """Return the estimates, covariance and df of linear contrasts of K metrics, batched.

    `contrasts` ``(P, K)`` turns the K metrics into P statistics (a difference: +1, -1).
    Units are persons (`nested`, joint ``(..., persons, J)``) or joint cells weighted by
    their texts (joint ``(..., J)``).
    """
    mapping = _cell_map(k)  # (J, K, 4)
    joint = np.asarray(joint, dtype=float)
    if nested:
        cells = np.einsum("...uj,jkc->...ukc", joint, mapping)
        pooled = cells.sum(-3)
    else:
        pooled = np.einsum("...j,jkc->...kc", joint, mapping)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimate = metric_values(pooled, metric)  # (..., K)
        gradient = np.nan_to_num(metric_gradient(pooled, metric))  # (..., K, 4)
    relevant = np.isin(np.argmax(mapping, -1), RELEVANT_TEXTS[metric][0])  # (J, K)
    involved = np.abs(contrasts) > 0  # (P, K)
    # a text is relevant to a statistic if it is relevant to any classifier it involves
    mask = (relevant[:, None, :] & involved[None, :, :]).any(-1).astype(float)  # (J, P)
    if nested:
        values = np.einsum("...ukc,...kc->...uk", cells, gradient) @ contrasts.T  # (..., U, P)
        weights = joint @ mask  # (..., U, P): relevant texts of each unit
        m = np.count_nonzero(weights, axis=-2).astype(float)
        products = np.einsum("...up,...uq->...pq", values, values)
    else:
        per_cell = np.einsum("jkc,...kc->...jk", mapping, gradient) @ contrasts.T  # (..., J, P)
        m = joint @ mask  # (..., P)
        products = np.einsum("...j,...jp,...jq->...pq", joint, per_cell, per_cell)
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(m >= 2, m / np.maximum(m - 1, 1), np.nan)
        covariance = np.sqrt(factor[..., :, None] * factor[..., None, :]) * products
        if nested:
            df = np.asarray(effective_clusters(np.moveaxis(weights, -1, -2)), float) - 1
            df = np.maximum(np.where(np.isfinite(df), df, m - 1), 1.0)
        else:
            df = np.maximum(m - 1, 1.0)
    se = np.sqrt(np.maximum(np.diagonal(covariance, axis1=-2, axis2=-1), 0))
    return {
        "estimate": estimate,
        "statistic": _contrast(estimate, contrasts),
        "covariance": covariance,
        "se": se,
        "df": df,
        "m": m,
    }


def _contrast(estimate: np.ndarray, contrasts: np.ndarray) -> np.ndarray:
    """Return each contrast of the K estimates, NaN only where an estimate it uses is NaN."""
    involved = contrasts != 0
    terms = np.where(involved, estimate[..., None, :] * contrasts, 0.0)
    missing = (involved & np.isnan(estimate)[..., None, :]).any(-1)
    return np.where(missing, np.nan, np.nan_to_num(terms).sum(-1))


def _sobol(dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Return fixed quasi-random standard normals ``(S, dim)`` and uniforms ``(S,)``."""
    points = qmc.Sobol(dim + 1, scramble=True, seed=_SOBOL_SEED).random(SOBOL_POINTS)
    points = np.clip(points, 1e-12, 1 - 1e-12)
    return stats.norm.ppf(points[:, :dim]), points[:, dim]


class _SortedLaw:
    """P(max |T| <= c) of data sets from their sorted draws of max |Z| and S's nodes.

    Every row's draws go in one sorted array of integer keys, the row times 2**31 plus
    the bits of the draw as a float32 (whose order is the numbers' order for numbers
    >= 0), so that one ``searchsorted`` serves every row and a row's answer does not
    depend on the other rows (a batch equals a loop).
    """

    def __init__(self, m: np.ndarray, scale: np.ndarray, weights: np.ndarray):
        self.rows = m.shape[0]
        self.offset = np.arange(self.rows, dtype=np.int64)[:, None] << 31
        self.keys = (_bits(m) + self.offset).ravel()
        self.scale, self.weights = scale, weights

    def probability(self, c: np.ndarray) -> np.ndarray:
        """Return P(max |T| <= c) for c ``(rows, k)``: a sum over the nodes of S."""
        at = _bits(np.minimum(c[..., None] * self.scale[:, None, :], _LARGEST))
        found = np.searchsorted(self.keys, (at + self.offset[..., None]).ravel(), side="right")
        below = found.reshape(at.shape) - np.arange(self.rows)[:, None, None] * SOBOL_POINTS
        return (below / SOBOL_POINTS * self.weights).sum(-1)


def _bits(x: np.ndarray) -> np.ndarray:
    """Return the bits of numbers >= 0 as float32, as int64: their order is the numbers'."""
    return np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)


def _max_abs_t_quantiles(
    covariance: np.ndarray, df: np.ndarray, defined: np.ndarray, level: float, t_stat: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Return the max-t critical value ``(n,)`` and adjusted p-values ``(n, P)`` of data sets.

    T = Z / S is multivariate t: Z normal with the correlation of `covariance`
    (statistics not `defined` left out) and :math:`\nu S^2 \sim \chi^2_\nu`, `df` = nu.
    The law of M = max |Z| is read off a fixed scrambled Sobol sequence (chunks of data
    sets bound the memory); P(max |T| <= c) = E[F_M(c S)] is a Gauss-Legendre sum over
    the quantiles of S, and c its root by bisection.
    """
    n, p = t_stat.shape
    sd = np.sqrt(np.maximum(np.diagonal(covariance, axis1=-2, axis2=-1), 0))
    keep = defined & (sd > 0)
    safe = np.where(keep, sd, 1.0)
    corr = covariance / (safe[:, :, None] * safe[:, None, :])
    corr = np.where(keep[:, :, None] & keep[:, None, :], corr, 0.0)
    corr = np.where(np.eye(p, dtype=bool) & ~keep[:, :, None], 1.0, corr)  # left out: apart
    eigenvalues, vectors = np.linalg.eigh(corr)
    root = vectors * np.sqrt(np.clip(eigenvalues, 0, None))[:, None, :]
    normals, _ = _sobol(p)
    nodes, node_weights = np.polynomial.legendre.leggauss(_S_NODES)
    scale = np.sqrt(stats.chi2.ppf((nodes[None, :] + 1) / 2, df[:, None]) / df[:, None])
    node_weights = node_weights / 2  # (n, nodes) quantiles of S and their weights
    critical = np.full(n, np.nan)
    p_adjusted = np.full((n, p), np.nan)
    chunk = max(1, int(2**24 // (SOBOL_POINTS * p)))  # about 128 MB of draws at most
    for start in range(0, n, chunk):  # chunks of data sets, each vectorized
        part = slice(start, start + chunk)
        z = np.abs(np.einsum("sq,npq->nsp", normals, root[part]))
        m = np.sort(np.where(keep[part][:, None, :], z, 0.0).max(-1), axis=-1)
        law = _SortedLaw(m, scale[part], node_weights)
        low = np.zeros((m.shape[0], 1))
        high = np.full((m.shape[0], 1), float(stats.t.ppf(1 - (1 - level) / (2 * p), df.min())))
        high = np.maximum(high, np.max(m, -1, keepdims=True) * 2)
        for _ in range(60):  # bisection of every row at once: 60 halvings
            mid = (low + high) / 2
            below = law.probability(mid) < level
            low, high = np.where(below, mid, low), np.where(below, high, mid)
        critical[part] = high[:, 0]
        # an infinite t (no variance) is beyond every draw: keep it finite for the product
        observed = np.minimum(np.abs(np.nan_to_num(t_stat[part], nan=0.0)), _LARGEST)
        p_adjusted[part] = 1 - law.probability(observed)
    return critical, np.where(keep, p_adjusted, np.nan)


def many_intervals(
    joint: Any,
    classifiers: int,
    metric: str,
    contrasts: Any,
    *,
    nested: bool = False,
    confidence_level: float = 0.95,
    adjust: str = MANY_ADJUSTMENT,
) -> dict[str, Any]:
    """Simultaneous intervals of linear contrasts of K classifiers' metrics, batched.

    The counts core of :func:`compare_many` and :func:`rank_ci`.

    Parameters
    ----------
    joint : array_like
        :func:`joint_many`'s counts, with any leading axes of data sets: ``(..., J)``, or
        ``(..., persons, J)`` with `nested` (J = 2 ** (classifiers + 1)).
    classifiers : int
        K.
    metric : str
        A binary metric.
    contrasts : array_like, shape (P, K)
        Each statistic's weights of the K metrics (a difference a - b: +1 at a, -1 at b;
        a metric itself: 1 at it).
    nested : bool, default False
        Whether the axis before the cells is persons.
    confidence_level : float, default 0.95
        The level the P intervals hold at together (each alone for ``"none"``).
    adjust : {"max_t", "bonferroni", "holm", "none"}, default "max_t"
        The adjustment (module notes).

    Returns
    -------
    dict
        ``estimate`` ``(..., K)``, and per statistic ``(..., P)``: ``statistic``,
        ``low``, ``high``, ``se``, ``df``, ``p_value``, ``p_adjusted``, and
        ``critical`` (the critical value of each interval).
    """
    registry.BINARY_METRIC.check(metric)
    level = float(check_confidence_level(confidence_level, scalar=True))
    registry.MANY_ADJUST.check(adjust)
    weights = np.asarray(contrasts, dtype=float)
    k = int(classifiers)
    counts = np.asarray(joint)
    if weights.ndim != 2 or weights.shape[1] != k or counts.shape[-1] != 1 << (k + 1):
        raise ValueError(
            f"`contrasts` must have shape (P, {k}) and `joint` {1 << (k + 1)} cells last; "
            f"got {weights.shape} and {counts.shape}."
        )
    found = _statistics(counts, k, metric, nested, weights)
    statistic, se, df = found["statistic"], found["se"], found["df"]
    batch = statistic.shape[:-1]
    p = weights.shape[0]
    alpha = 1 - level
    with np.errstate(invalid="ignore", divide="ignore"):
        t_stat = statistic / se
        p_value = 2 * stats.t.sf(np.abs(t_stat), df)
    defined = np.isfinite(statistic) & (se > 0) & (found["m"] >= 2)
    if adjust == "max_t" and p > 1:
        flat = int(np.prod(batch, dtype=np.int64))
        critical_one, p_adjusted = _max_abs_t_quantiles(
            found["covariance"].reshape(flat, p, p),
            # the fewest df of the statistics that have an interval (1: none has)
            np.where(defined, df, np.inf).min(-1, initial=np.inf).reshape(flat).clip(1, 1e12),
            defined.reshape(flat, p),
            level,
            t_stat.reshape(flat, p),
        )
        critical = np.broadcast_to(critical_one.reshape(*batch, 1), statistic.shape)
        p_adjusted = p_adjusted.reshape(*batch, p)
    elif adjust == "none" or p == 1:
        critical = stats.t.ppf(1 - alpha / 2, df)
        p_adjusted = p_value
    else:
        critical = stats.t.ppf(1 - alpha / (2 * p), df)
        p_adjusted = np.minimum(p * p_value, 1.0) if adjust == "bonferroni" else _holm(p_value)
    half = np.where(defined, critical * se, np.nan)
    # an interval wider than what the statistic can be claims nothing more: clip to it
    low_bound, high_bound = _range(weights, metric)
    low = np.maximum(statistic - half, low_bound)
    high = np.minimum(statistic + half, high_bound)
    # a single metric on [0, 1] takes its band on the logit scale (the delta method keeps
    # the correlations), as its own intervals do near 0 and 1
    single = (np.count_nonzero(weights, -1) == 1) & (weights.sum(-1) == 1)
    if metric not in ("kappa", "mcc") and single.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            inside = (statistic > 0) & (statistic < 1)
            centre = special.logit(np.where(inside, statistic, 0.5))
            spread = half / np.where(inside, statistic * (1 - statistic), 1.0)
            low = np.where(single & inside, special.expit(centre - spread), low)
            high = np.where(single & inside, special.expit(centre + spread), high)
    return {
        "estimate": found["estimate"],
        "statistic": statistic,
        "low": low,
        "high": high,
        "se": se,
        "df": df,
        "p_value": np.where(defined, p_value, np.nan),
        "p_adjusted": np.where(defined, p_adjusted, np.nan),
        "critical": np.asarray(critical, dtype=float),
    }


def _range(contrasts: np.ndarray, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Return the lowest and highest value of each contrast of metrics on [0, 1] or [-1, 1]."""
    low_metric = -1.0 if metric in ("kappa", "mcc") else 0.0
    # sum of w * value over metrics each in [low_metric, 1]: the extremes take each end
    low = np.where(contrasts > 0, contrasts * low_metric, contrasts).sum(-1)
    high = np.where(contrasts > 0, contrasts, contrasts * low_metric).sum(-1)
    return low, high


def _holm(p: np.ndarray) -> np.ndarray:
    """Return Holm's step-down adjusted p-values along the last axis (NaN stays NaN)."""
    finite = np.isfinite(p)
    count = finite.sum(-1, keepdims=True)
    order = np.argsort(np.where(finite, p, np.inf), axis=-1, kind="stable")
    ranked = np.take_along_axis(np.where(finite, p, np.nan), order, -1)
    steps = (count - np.arange(p.shape[-1])) * ranked
    running = np.fmax.accumulate(np.nan_to_num(steps, nan=-np.inf), axis=-1)
    adjusted = np.empty_like(p, dtype=float)
    np.put_along_axis(adjusted, order, np.minimum(running, 1.0), -1)
    return np.where(finite, adjusted, np.nan)


def _check(metric: str, confidence_level: Any, adjust: str) -> float:
    registry.BINARY_METRIC.check(metric)
    registry.MANY_ADJUST.check(adjust)
    return float(check_confidence_level(confidence_level, scalar=True))


def _pairs(names: list[str], baseline: Any) -> tuple[list[tuple[int, int]], str]:
    if baseline is None:
        k = len(names)
        return [(a, b) for a in range(k) for b in range(a + 1, k)], "every pair"
    key = plain(baseline) if not isinstance(baseline, str) else baseline
    if str(key) not in names:
        raise ValueError(f"`baseline` must be one of the classifiers {names}; got {baseline!r}.")
    b = names.index(str(key))
    return [(a, b) for a in range(len(names)) if a != b], f"baseline {names[b]}"


def difference_contrasts(pairs: list[tuple[int, int]], k: int) -> np.ndarray:
    """Return the ``(P, K)`` contrasts of the differences a - b of `pairs`."""
    out = np.zeros((len(pairs), k))
    for row, (a, b) in enumerate(pairs):
        out[row, a], out[row, b] = 1.0, -1.0
    return out


def compare_many(
    y_true: Any,
    preds: Any,
    metric: str,
    *,
    groups: Any = None,
    baseline: Any = None,
    confidence_level: float = 0.95,
    adjust: str = MANY_ADJUSTMENT,
    positive: Any = None,
    rng: Any = None,
) -> pd.DataFrame:
    """Differences of a metric between many classifiers on the same texts, holding jointly.

    Parameters
    ----------
    y_true : array_like
        Reference labels, one per text.
    preds : pandas.DataFrame, mapping, list or array_like
        One column of labels per classifier (a DataFrame's columns or a mapping's keys
        name them; a 2-D array's columns, texts x classifiers, are named "0", "1", ...,
        and so are the label arrays of a list or tuple, one per classifier).
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    groups : array_like, optional
        Person ids, one per text: persons are the clusters of the covariance.
    baseline : object, optional
        The classifier the others are compared with; default every pair.
    confidence_level : float, default 0.95
        The level at which the intervals hold together (each alone for ``"none"``).
    adjust : {"max_t", "bonferroni", "holm", "none"}, default "max_t"
        The simultaneous adjustment (module notes), :data:`perfci.policy.MANY_ADJUSTMENT`;
        with every pair and few persons, ``"bonferroni"`` covered where max-t fell short
        (atlas-many).
    positive : object, optional
        The positive label, as in :func:`perfci.confusion`.
    rng : numpy.random.Generator, int or None, optional
        Random generator or seed of every random draw: with exactly two classifiers the
        one comparison is :func:`perfci.compare`'s recommended one, which may draw a
        paired bootstrap; three or more draw nothing (the max-t band is read off a
        fixed quasi-random sequence).

    Returns
    -------
    pandas.DataFrame
        One row per comparison: ``classifier``, ``versus``, ``estimate`` and
        ``estimate_versus`` (their metrics), ``difference`` (classifier minus versus),
        ``low``, ``high``, ``se``, ``df``, ``p_value`` (unadjusted), ``p_adjusted`` and
        ``method``. ``attrs`` holds ``confidence_level``, ``adjust``, ``comparisons`` and
        ``critical_value`` (of the max-t or Bonferroni band; per row for the t
        quantiles of different df).

    Warns
    -----
    UndefinedMetricWarning
        For comparisons whose difference is undefined or has no variance (NaN ends).

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> preds = texts[["model", "model_b", "run2", "run3"]]
    >>> table = pc.compare_many(texts["human"], preds, "recall", groups=texts["person"],
    ...                         baseline="model")
    >>> table[["classifier", "versus", "difference", "low", "high", "p_adjusted"]].round(3)
      classifier versus  difference    low   high  p_adjusted
    0    model_b  model      -0.036 -0.071 -0.001       0.042
    1       run2  model       0.032 -0.004  0.068       0.094
    2       run3  model      -0.008 -0.036  0.021       0.848
    """
    check_aligned(y_true=y_true, preds=preds, groups=groups)
    level = _check(metric, confidence_level, adjust)
    names, joint = joint_many(y_true, preds, groups=groups, positive=positive)
    pairs, against = _pairs(names, baseline)
    if len(pairs) == 1:
        return _one_comparison(y_true, preds, names, pairs[0], metric, groups, level, positive, rng)
    found = many_intervals(
        joint,
        len(names),
        metric,
        difference_contrasts(pairs, len(names)),
        nested=groups is not None,
        confidence_level=level,
        adjust=adjust,
    )
    _warn_undefined(found, [f"{names[a]} - {names[b]}" for a, b in pairs])
    clusters = "persons as clusters" if groups is not None else "texts as clusters"
    method = (
        f"cluster-robust linearization ({clusters}), {adjust.replace('_', '-')} over "
        f"{len(pairs)} comparisons ({against})"
        if adjust != "none"
        else f"cluster-robust linearization ({clusters}), unadjusted"
    )
    estimate = found["estimate"]
    table = pd.DataFrame(
        {
            "classifier": [names[a] for a, _ in pairs],
            "versus": [names[b] for _, b in pairs],
            "estimate": [estimate[a] for a, _ in pairs],
            "estimate_versus": [estimate[b] for _, b in pairs],
            "difference": found["statistic"],
            "low": found["low"],
            "high": found["high"],
            "se": found["se"],
            "df": found["df"],
            "p_value": found["p_value"],
            "p_adjusted": found["p_adjusted"],
            "method": method,
        }
    )
    critical = found["critical"]
    table.attrs.update(
        confidence_level=level,
        adjust=adjust,
        comparisons=len(pairs),
        critical_value=float(critical[0]) if np.ptp(critical) == 0 else critical.tolist(),
    )
    return table


def _warn_undefined(found: dict[str, Any], labels: list[str]) -> None:
    bad = ~np.isfinite(found["low"])
    if bad.any():
        which = ", ".join(label for label, b in zip(labels, bad, strict=True) if b)
        warnings.warn(
            f"no interval for {which}: the difference is undefined or has no variance.",
            UndefinedMetricWarning,
            stacklevel=3,
        )


def _one_comparison(
    y_true: Any,
    preds: Any,
    names: list[str],
    pair: tuple[int, int],
    metric: str,
    groups: Any,
    level: float,
    positive: Any,
    rng: Any = None,
) -> pd.DataFrame:
    """Two classifiers: the one comparison is :func:`perfci.compare`'s recommended one."""
    from .comparison import compare

    _, columns = _classifiers(preds, _n_texts(y_true))
    a, b = pair
    result: Any = compare(
        y_true,
        columns[a],
        columns[b],
        metric,
        groups=groups,
        method=RECOMMENDED,
        positive=positive,
        confidence_level=level,
        rng=rng,
    )
    table = pd.DataFrame(
        {
            "classifier": [names[a]],
            "versus": [names[b]],
            "estimate": [result.estimate_a],
            "estimate_versus": [result.estimate_b],
            "difference": [result.difference],
            "low": [result.low],
            "high": [result.high],
            "se": [result.robust_se],
            "df": [result.df],
            "p_value": [result.p_value],
            "p_adjusted": [result.p_value],
            "method": [result.method],
        }
    )
    table.attrs.update(
        confidence_level=level, adjust="one comparison", comparisons=1, critical_value=np.nan
    )
    return table


def rank_ci(
    y_true: Any,
    preds: Any,
    metric: str,
    *,
    groups: Any = None,
    confidence_level: float = 0.95,
    positive: Any = None,
) -> pd.DataFrame:
    """Confidence sets for the ranks of many classifiers, holding for all ranks at once.

    Parameters
    ----------
    y_true, preds, metric, groups, confidence_level, positive
        As in :func:`compare_many`.

    Returns
    -------
    pandas.DataFrame
        One row per classifier, best first: ``classifier``, ``estimate``, ``rank`` (1 the
        highest estimate), ``rank_low``, ``rank_high`` (the simultaneous rank set of
        Mogstad, Romano, Shaikh and Wilhelm), and ``low``, ``high``: the simultaneous
        interval of its metric (max-t over all K), valid for a classifier chosen by
        these ranks. ``attrs`` holds ``confidence_level`` and the critical values.

    Warns
    -----
    UndefinedMetricWarning
        Naming each classifier without an interval and why (its metric undefined on
        these texts): NaN ends.

    Notes
    -----
    A classifier whose metric has no variance (a perfect one: recall 1 on every
    reference positive) cannot share the max-t band: it gets the interval
    :func:`perfci.metric_ci` recommends for it at level ``1 - alpha / K``, and the others
    the max-t band at level ``1 - alpha (K - D) / K`` for D such classifiers, so that
    the K intervals still hold together.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> preds = texts[["model", "model_b", "run2", "run3"]]
    >>> ranks = pc.rank_ci(texts["human"], preds, "recall", groups=texts["person"])
    >>> ranks[["classifier", "estimate", "rank", "rank_low", "rank_high"]].round(3)
      classifier  estimate  rank  rank_low  rank_high
    0       run2     0.912     1         1          3
    1      model     0.880     2         1          4
    2       run3     0.873     3         1          4
    3    model_b     0.845     4         2          4
    """
    check_aligned(y_true=y_true, preds=preds, groups=groups)
    level = _check(metric, confidence_level, "max_t")
    names, joint = joint_many(y_true, preds, groups=groups, positive=positive)
    k = len(names)
    nested = groups is not None
    half = [(a, b) for a in range(k) for b in range(a + 1, k)]
    ends = many_intervals(
        joint, k, metric, difference_contrasts(half, k), nested=nested, confidence_level=level
    )
    rank_low, rank_high = rank_sets(ends["low"], ends["high"], half, k)
    own = _own_intervals(joint, names, metric, nested, level)
    estimate = own["estimate"]
    order = np.argsort(-estimate, kind="stable")
    rank = np.empty(k, dtype=int)
    rank[order] = np.arange(1, k + 1)
    table = pd.DataFrame(
        {
            "classifier": [names[j] for j in order],
            "estimate": estimate[order],
            "rank": rank[order],
            "rank_low": rank_low[order],
            "rank_high": rank_high[order],
            "low": own["low"][order],
            "high": own["high"][order],
        }
    )
    table.attrs.update(
        confidence_level=level,
        critical_value_ranks=float(ends["critical"][0]),
        critical_value_metrics=float(own["critical"][0]),
    )
    return table


def _own_intervals(
    joint: np.ndarray, names: list[str], metric: str, nested: bool, level: float
) -> dict[str, Any]:
    """Return the simultaneous intervals of the K metrics of :func:`rank_ci`.

    A classifier whose metric has no variance (a perfect one: recall 1) has no place in
    the max-t band; it takes its own recommended interval (:func:`perfci.metric_ci_counts`)
    at level ``1 - alpha / K``, and the max-t band of the others the rest of alpha, so
    that the K intervals still hold together (Bonferroni's split).
    """
    from .metric import metric_ci_counts

    k = len(names)
    own = many_intervals(joint, k, metric, np.eye(k), nested=nested, confidence_level=level)
    alone = np.isfinite(own["estimate"]) & ~np.isfinite(own["low"])
    share = (1 - level) / k
    if alone.any() and not alone.all():
        rest = 1 - share * (k - int(alone.sum()))
        own = many_intervals(joint, k, metric, np.eye(k), nested=nested, confidence_level=rest)
    mapping = _cell_map(k)
    reasons = {j: f"its {metric} is undefined on these texts" for j in range(k)}
    for j in np.flatnonzero(alone).tolist():
        try:
            ci = metric_ci_counts(
                np.asarray(joint, dtype=np.int64) @ mapping[:, j, :].astype(np.int64),
                metric,
                nested=nested,
                confidence_level=1 - share,
                rng=0,  # fixed: rank_ci is deterministic
            )
        except ValueError as error:
            reasons[j] = f"its {metric} has no variance and {error}"
            continue
        own["low"][j], own["high"][j] = ci.low, ci.high
    missing = [j for j in range(k) if not np.isfinite(own["low"][j])]
    if missing:
        which = "; ".join(f"{names[j]} ({reasons[j]})" for j in missing)
        warnings.warn(f"rank_ci has no interval for {which}.", UndefinedMetricWarning, stacklevel=3)
    return own


def rank_sets(
    low: np.ndarray, high: np.ndarray, pairs: list[tuple[int, int]], k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return each classifier's lowest and highest rank from simultaneous difference ends.

    `low`, `high` ``(..., P)`` bound the differences a - b of `pairs` (a < b); rank 1 is
    the highest metric. Undefined ends (NaN) decide nothing.
    """
    above = np.zeros((*np.shape(low)[:-1], k, k), dtype=bool)  # [a, b]: a surely above b
    for p, (a, b) in enumerate(pairs):  # pairs of classifiers, not data: a handful
        above[..., a, b] = low[..., p] > 0
        above[..., b, a] = high[..., p] < 0
    return 1 + above.sum(-2), k - above.sum(-1)
