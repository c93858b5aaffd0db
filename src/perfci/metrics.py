"""Classifier performance metrics as formulas over confusion-matrix counts.

Every function here takes counts whose last axis holds the four cells
``[tp, fp, fn, tn]`` and is vectorized over any leading axes. Multi-class averages
(``macro_*``, ``micro_*``) take one-vs-rest counts of shape ``(..., k, 4)``, the class
axis second to last, as :func:`perfci.confusion` returns them.

The rows of a confusion matrix are the reference ("truth", usually the human code) and
the columns the classifier; ``tp`` counts texts both call positive, ``fp`` texts only the
classifier calls positive, ``fn`` texts only the reference calls positive.

Undefined values (a zero denominator) are NaN, and :func:`compute_metric` warns with an
:class:`~perfci.UndefinedMetricWarning` that names the metric and the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._core import registry
from ._core.estimands import RELEVANT_TEXTS  # the texts each metric is computed from
from ._core.validation import check_counts_array, warn_undefined

__all__ = [
    "BINARY_METRICS",
    "CELL_POOLING",
    "CELLS",
    "METRICS",
    "MULTICLASS_METRICS",
    "PROPORTION_METRICS",
    "RELEVANT_TEXTS",
    "compute_metric",
    "metric_gradient",
    "proportion_counts",
    "right_wrong_cells",
]

#: Order of the cells on the last axis of every count array.
CELLS = ("tp", "fp", "fn", "tn")
_TP, _FP, _FN, _TN = range(4)

_PROPORTION_CELLS = {
    "accuracy": ((_TP, _TN), (_TP, _FP, _FN, _TN)),
    "recall": ((_TP,), (_TP, _FN)),
    "precision": ((_TP,), (_TP, _FP)),
    "specificity": ((_TN,), (_TN, _FP)),
    "npv": ((_TN,), (_TN, _FN)),
}
#: Cells each binary metric reads only through their sums (one group number per cell
#: of ``(tp, fp, fn, tn)``; :attr:`perfci._core.resampling.Statistic.pooling`): F1 reads
#: fp + fn, a proportion its numerator, the rest of its denominator and the texts
#: outside it. Kappa, MCC and balanced accuracy read every cell.
CELL_POOLING: dict[str, tuple[int, int, int, int]] = {
    "accuracy": (0, 1, 1, 0),
    "recall": (0, 1, 2, 1),
    "precision": (0, 1, 2, 2),
    "specificity": (0, 1, 0, 2),
    "npv": (0, 0, 1, 2),
    "f1": (0, 1, 1, 2),
    "ppa": (0, 1, 1, 2),
    "pna": (0, 1, 1, 2),
}

#: Proportion metrics (the names of :data:`perfci._core.registry.PROPORTION_METRIC`):
#: (cells in the numerator, cells in the denominator). The denominator is the metric's
#: *relevant n*.
PROPORTION_METRICS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    name: _PROPORTION_CELLS[name] for name in registry.PROPORTION_METRIC
}

# Why each metric can be undefined, for the warning.
_UNDEFINED_BECAUSE = {
    "accuracy": "there are no texts",
    "recall": "there are no reference positives (tp + fn = 0)",
    "precision": "there are no classifier positives (tp + fp = 0)",
    "specificity": "there are no reference negatives (tn + fp = 0)",
    "npv": "there are no classifier negatives (tn + fn = 0)",
    "f1": "neither rater calls any text positive (tp + fp + fn = 0)",
    "ppa": "neither rater calls any text positive (tp + fp + fn = 0)",
    "pna": "neither rater calls any text negative (tn + fp + fn = 0)",
    "kappa": "both raters put every text in one and the same class, so chance agreement is 1",
    "balanced_accuracy": "recall or specificity is undefined (no reference positives or "
    "no reference negatives)",
    "mcc": "a row or column of the confusion matrix is empty",
}


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _proportion(name: str) -> Callable[[np.ndarray], np.ndarray]:
    num_cells, den_cells = PROPORTION_METRICS[name]

    def metric(c: np.ndarray) -> np.ndarray:
        return _ratio(c[..., num_cells].sum(-1), c[..., den_cells].sum(-1))

    return metric


def _f1(c: np.ndarray) -> np.ndarray:
    tp, fp, fn = c[..., _TP], c[..., _FP], c[..., _FN]
    return _ratio(2 * tp, 2 * tp + fp + fn)


def _pna(c: np.ndarray) -> np.ndarray:
    tn, fp, fn = c[..., _TN], c[..., _FP], c[..., _FN]
    return _ratio(2 * tn, 2 * tn + fp + fn)


def _kappa(c: np.ndarray) -> np.ndarray:
    # Cohen's kappa written in counts, (po - pe) / (1 - pe) multiplied through by N^2:
    # exact for integer counts and free of the cancellation in 1 - pe.
    tp, fp, fn, tn = c[..., _TP], c[..., _FP], c[..., _FN], c[..., _TN]
    return _ratio(2 * (tp * tn - fp * fn), (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn))


def _balanced_accuracy(c: np.ndarray) -> np.ndarray:
    return (_proportion("recall")(c) + _proportion("specificity")(c)) / 2


def _mcc(c: np.ndarray) -> np.ndarray:
    tp, fp, fn, tn = c[..., _TP], c[..., _FP], c[..., _FN], c[..., _TN]
    den = (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
    return _ratio(tp * tn - fp * fn, np.sqrt(den))


_FORMULAS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    **{name: _proportion(name) for name in PROPORTION_METRICS},
    "f1": _f1,
    "ppa": _f1,  # 2a / (2a + b + c): the same formula as F1, read as agreement
    "pna": _pna,
    "kappa": _kappa,
    "balanced_accuracy": _balanced_accuracy,
    "mcc": _mcc,
}
# Every registered binary metric has its formula here, in the registry's (report) order.
_BINARY = {name: _FORMULAS[name] for name in registry.BINARY_METRIC}

#: Binary metric names, in report order (:data:`perfci._core.registry.BINARY_METRIC`).
BINARY_METRICS: tuple[str, ...] = registry.BINARY_METRIC.names

#: Metrics of a k x k matrix as a whole: ``multiclass_accuracy`` (the share of texts
#: classified right) and ``multiclass_kappa`` (Cohen's kappa of the matrix).
MULTICLASS_METRICS: tuple[str, ...] = registry.MULTICLASS_METRIC.names

#: Every metric name accepted by :func:`compute_metric`: the binary metrics, the metrics
#: of the k x k matrix, then the binary metrics' ``macro_`` and ``micro_`` averages
#: (:data:`perfci._core.registry.METRIC`).
METRICS: tuple[str, ...] = registry.METRIC.names


def check_counts(counts: Any, name: str = "counts") -> np.ndarray:
    """Return `counts` as a float array with last axis 4 and no negative entries."""
    arr = check_counts_array(name, counts)
    if arr.ndim == 0 or arr.shape[-1] != 4:
        raise ValueError(
            f"`{name}` must have a last axis of length 4 holding [tp, fp, fn, tn]; "
            f"got shape {arr.shape}."
        )
    if np.any(arr < 0):
        raise ValueError(f"`{name}` must be non-negative counts.")
    return arr


def difference_bound(metric: str) -> float:
    """Return the largest absolute difference of a binary metric between two classifiers.

    Every binary metric lies in [0, 1] except kappa and MCC, which lie in [-1, 1]; an
    interval of a difference is clipped to [-bound, bound].

    Examples
    --------
    >>> from perfci.metrics import difference_bound
    >>> difference_bound("recall"), difference_bound("kappa")
    (1.0, 2.0)
    """
    return 2.0 if metric in ("kappa", "mcc") else 1.0


def _multiclass(counts: np.ndarray, metric: str) -> np.ndarray:
    """k-class accuracy or kappa from one-vs-rest counts ``(..., k, 4)`` of single labels.

    Class k's tp are the matrix's diagonal, tp + fn its row (reference) total and tp + fp
    its column (classifier) total; every class row holds all N texts.
    """
    right = counts[..., _TP].sum(-1)
    texts = counts[..., 0, :].sum(-1)
    if metric == "multiclass_accuracy":
        return _ratio(right, texts)
    rows = counts[..., _TP] + counts[..., _FN]
    columns = counts[..., _TP] + counts[..., _FP]
    chance = (rows * columns).sum(-1)  # N^2 p_e
    # (p_o - p_e) / (1 - p_e), times N^2 above and below
    return _ratio(texts * right - chance, texts * texts - chance)


def right_wrong_cells(matrices: Any) -> np.ndarray:
    """Return binary cells ``[right, wrong, 0, 0]`` of k x k matrices ``(..., k, k)``.

    Their ``accuracy`` is the matrices' ``multiclass_accuracy``, a proportion of texts:
    :func:`perfci.metric_ci` and the harness's recommended rows give
    ``multiclass_accuracy`` the recommended interval of a proportion on these cells.

    Examples
    --------
    >>> from perfci.metrics import right_wrong_cells
    >>> right_wrong_cells([[5, 1, 0], [2, 6, 1], [0, 0, 3]]).tolist()
    [14.0, 4.0, 0.0, 0.0]
    """
    arr = np.asarray(matrices, dtype=float)
    right = np.trace(arr, axis1=-2, axis2=-1)
    zeros = np.zeros_like(right)
    return np.stack([right, arr.sum((-2, -1)) - right, zeros, zeros], -1)


def metric_values(counts: np.ndarray, metric: str) -> np.ndarray:
    """Evaluate `metric` on validated float counts, NaN where undefined, no warning.

    This is the kernel that resampling code calls on thousands of replicates at once.
    """
    if metric in _BINARY:
        return _BINARY[metric](counts)
    if counts.ndim >= 2 and metric in MULTICLASS_METRICS:
        return _multiclass(counts, metric)
    average, base = metric.split("_", 1)
    if counts.ndim < 2:
        raise ValueError(
            f"`counts` for {metric} must have shape (..., k, 4), one row per class; "
            f"got shape {counts.shape}."
        )
    if average == "micro":
        return _BINARY[base](counts.sum(axis=-2))
    # A macro average is undefined when any class's metric is: averaging over the
    # defined classes only would silently change what the number means.
    return _BINARY[base](counts).mean(axis=-1)


def _proportion_gradient(name: str, c: np.ndarray) -> np.ndarray:
    num_cells, den_cells = PROPORTION_METRICS[name]
    den = c[..., den_cells].sum(-1, keepdims=True)
    value = _proportion(name)(c)[..., None]
    in_num = np.isin(np.arange(4), num_cells)
    in_den = np.isin(np.arange(4), den_cells)
    return _ratio(in_num - value * in_den, den)


def _agreement_gradient(c: np.ndarray, cell: int) -> np.ndarray:
    # 2x / (2x + fp + fn) with x = tp (F1, PPA) or x = tn (PNA)
    x, fp, fn = c[..., cell], c[..., _FP], c[..., _FN]
    den = 2 * x + fp + fn
    value = _ratio(2 * x, den)
    g = np.zeros(c.shape)
    g[..., cell] = _ratio(2 - 2 * value, den)
    g[..., _FP] = g[..., _FN] = _ratio(-value, den)
    return np.where(np.isnan(value)[..., None], np.nan, g)


def _kappa_gradient(c: np.ndarray) -> np.ndarray:
    tp, fp, fn, tn = c[..., _TP], c[..., _FP], c[..., _FN], c[..., _TN]
    den = (tp + fp) * (fp + tn) + (tp + fn) * (fn + tn)
    value = _kappa(c)[..., None]
    d_num = 2 * np.stack([tn, -fn, -fp, tp], -1)
    d_den = np.stack(
        [
            (fp + tn) + (fn + tn),
            (fp + tn) + (tp + fp),
            (tp + fn) + (fn + tn),
            (tp + fp) + (tp + fn),
        ],
        -1,
    )
    return _ratio(d_num - value * d_den, den[..., None])


def _mcc_gradient(c: np.ndarray) -> np.ndarray:
    tp, fp, fn, tn = c[..., _TP], c[..., _FP], c[..., _FN], c[..., _TN]
    rows_p, cols_p, rows_n, cols_n = tp + fn, tp + fp, tn + fp, tn + fn
    root = np.sqrt(cols_p * rows_p * rows_n * cols_n)[..., None]
    value = _mcc(c)[..., None]
    d_num = np.stack([tn, -fn, -fp, tp], -1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # each cell sits in one row margin and one column margin of the matrix
        inverse = np.stack(
            [
                1 / cols_p + 1 / rows_p,
                1 / cols_p + 1 / rows_n,
                1 / rows_p + 1 / cols_n,
                1 / rows_n + 1 / cols_n,
            ],
            -1,
        )
        g = d_num / root - value / 2 * inverse
    return np.where(np.isnan(value), np.nan, g)


def metric_gradient(counts: np.ndarray, metric: str) -> np.ndarray:
    r"""Gradient of a binary metric with respect to its four cells, NaN where undefined.

    Parameters
    ----------
    counts : numpy.ndarray
        Validated float counts, last axis ``[tp, fp, fn, tn]``; leading axes are batch
        axes.
    metric : str
        One of :data:`BINARY_METRICS`.

    Returns
    -------
    numpy.ndarray
        :math:`\partial\,\mathrm{metric} / \partial c_k`, the shape of `counts`; NaN in
        every cell where the metric is undefined.

    Notes
    -----
    Every binary metric is a ratio of homogeneous polynomials of the same degree in the
    cells, so it is homogeneous of degree 0 and its gradient :math:`g` satisfies
    Euler's identity :math:`\sum_k c_k g_k = 0`. This is what linearization (delta-method)
    variances of pooled-count estimators use: the influence of a unit (a text, or a
    person with counts :math:`c_i`) is :math:`g \cdot c_i`. With
    :math:`a, b, c, d = tp, fp, fn, tn`:

    - a proportion :math:`f = S_{num}/S_{den}`:
      :math:`g_k = (1[k \in num] - f\,1[k \in den]) / S_{den}`;
    - F1 (and PPA) :math:`F = 2a/X`, :math:`X = 2a + b + c`:
      :math:`g = ((2 - 2F)/X, -F/X, -F/X, 0)`, PNA alike with :math:`d` for :math:`a`;
    - kappa :math:`= 2(ad - bc)/D`, :math:`D = (a + b)(b + d) + (a + c)(c + d)`:
      :math:`g = (\nabla[2(ad - bc)] - \kappa \nabla D) / D`;
    - MCC :math:`= (ad - bc)/\sqrt{P}`, :math:`P` the product of the four margins:
      :math:`g_k = \partial_k(ad - bc)/\sqrt{P} - \tfrac{\mathrm{MCC}}{2}
      \sum_{\text{margins } M \ni k} 1/M`;
    - balanced accuracy: the mean of the gradients of recall and specificity.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.metrics import metric_gradient
    >>> counts = np.array([8.0, 2.0, 2.0, 8.0])
    >>> metric_gradient(counts, "recall")  # recall 0.8 of 10 positives
    array([ 0.02,  0.  , -0.08,  0.  ])
    >>> float(metric_gradient(counts, "kappa") @ counts)  # Euler: degree 0
    0.0
    """
    if metric in PROPORTION_METRICS:
        return _proportion_gradient(metric, counts)
    if metric in ("f1", "ppa"):
        return _agreement_gradient(counts, _TP)
    if metric == "pna":
        return _agreement_gradient(counts, _TN)
    if metric == "kappa":
        return _kappa_gradient(counts)
    if metric == "balanced_accuracy":
        return (
            _proportion_gradient("recall", counts) + _proportion_gradient("specificity", counts)
        ) / 2
    if metric == "mcc":
        return _mcc_gradient(counts)
    raise ValueError(f"`metric` must be one of {sorted(BINARY_METRICS)}; got {metric!r}.")


def undefined_reason(metric: str) -> str:
    """Why `metric` can be undefined (a zero denominator), in words."""
    if metric in _BINARY:
        return _UNDEFINED_BECAUSE[metric]
    if metric in MULTICLASS_METRICS:
        return _UNDEFINED_BECAUSE[metric.split("_", 1)[1]]
    base = metric.split("_", 1)[1]
    return f"{base} is undefined for at least one class ({_UNDEFINED_BECAUSE[base]})"


def compute_metric(counts: Any, metric: str) -> np.ndarray | np.float64:
    r"""Compute a performance metric from confusion-matrix counts.

    Parameters
    ----------
    counts : array_like
        Counts with last axis ``[tp, fp, fn, tn]``; any leading axes are batch axes.
        For ``macro_*`` and ``micro_*`` metrics the second-to-last axis holds the
        classes (one-vs-rest counts, shape ``(..., k, 4)``). Counts may be
        non-integer (for example after adding pseudo counts).
    metric : str
        One of :data:`METRICS`.

    Returns
    -------
    numpy.ndarray or numpy.float64
        The metric, with the leading shape of `counts` (and without the class axis for
        averaged metrics); a scalar for a single matrix. NaN where undefined.

    Warns
    -----
    UndefinedMetricWarning
        Where the metric is undefined (a zero denominator), naming the reason.

    Notes
    -----
    With :math:`a = tp`, :math:`b = fp`, :math:`c = fn`, :math:`d = tn` and
    :math:`N = a + b + c + d`:

    ===================== ==============================================================
    ``accuracy``          :math:`(a + d) / N`
    ``recall``            :math:`a / (a + c)` (sensitivity)
    ``precision``         :math:`a / (a + b)` (positive predictive value)
    ``specificity``       :math:`d / (d + b)`
    ``npv``               :math:`d / (d + c)` (negative predictive value)
    ``f1``                :math:`2a / (2a + b + c)`, the harmonic mean of precision and
                          recall
    ``ppa``               :math:`2a / (2a + b + c)`, percent positive agreement [1]_
    ``pna``               :math:`2d / (2d + b + c)`, percent negative agreement [1]_
    ``kappa``             :math:`(p_o - p_e) / (1 - p_e)` with :math:`p_o = (a + d)/N`,
                          :math:`p_e = [(a + b)(a + c) + (c + d)(b + d)] / N^2`,
                          computed as :math:`2(ad - bc) / [(a + b)(b + d) + (a + c)(c + d)]`
    ``balanced_accuracy`` (recall + specificity) / 2
    ``mcc``               :math:`(ad - bc) / \sqrt{(a + b)(a + c)(d + b)(d + c)}`
    ===================== ==============================================================

    ``multiclass_accuracy`` is the share of texts whose class the classifier gives,
    :math:`\sum_k n_{kk} / N` of the k x k matrix, and ``multiclass_kappa`` Cohen's kappa
    of the matrix, :math:`(p_o - p_e) / (1 - p_e)` with :math:`p_o` that share and
    :math:`p_e = \sum_k n_{k+} n_{+k} / N^2` (``sklearn.metrics.cohen_kappa_score``);
    both read the one-vs-rest counts of single-label data (tp on the diagonal).
    ``macro_<m>`` is the unweighted mean of ``<m>`` over the classes (NaN if ``<m>`` is
    undefined for any class); ``micro_<m>`` is ``<m>`` of the counts summed over the
    classes. For single-label multi-class data, ``micro_recall``, ``micro_precision``
    and ``micro_f1`` all equal ``multiclass_accuracy``; ``micro_accuracy`` is not it (it
    counts each text once per class, the true negatives of the other classes included).

    References
    ----------
    .. [1] Anglin, K. "Estimating uncertainty in classifier performance with
       applications to large language models and nested data", section 1.1.

    Examples
    --------
    >>> import perfci as pc
    >>> counts = [88, 12, 12, 288]          # tp, fp, fn, tn
    >>> float(pc.compute_metric(counts, "recall"))
    0.88
    >>> round(float(pc.compute_metric(counts, "kappa")), 4)
    0.84
    >>> pc.compute_metric([[88, 12, 12, 288], [5, 0, 0, 95]], "f1")
    array([0.88, 1.  ])
    """
    registry.METRIC.check(metric)
    arr = check_counts(counts)
    if metric not in _BINARY and (arr.ndim < 2 or arr.shape[-2] == 0):
        raise ValueError(
            f"`counts` for {metric} must have shape (..., k, 4), one row per class and at "
            f"least one class; got shape {arr.shape}."
        )
    values = metric_values(arr, metric)
    undefined = np.isnan(values)
    if undefined.any():
        why = undefined_reason(metric)
        if metric.startswith("micro_"):
            why = _UNDEFINED_BECAUSE[metric.split("_", 1)[1]]
        warn_undefined(metric, why, int(undefined.sum()), int(undefined.size))
    return values[()] if values.ndim == 0 else values


def proportion_counts(counts: Any, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Successes and relevant n of a proportion metric.

    Parameters
    ----------
    counts : array_like
        Counts with last axis ``[tp, fp, fn, tn]``.
    metric : str
        One of :data:`PROPORTION_METRICS`: ``accuracy``, ``recall``, ``precision``,
        ``specificity`` or ``npv``.

    Returns
    -------
    successes, trials : numpy.ndarray
        Numerator and denominator (the relevant n) with the leading shape of `counts`.

    Examples
    --------
    >>> import perfci as pc
    >>> x, n = pc.proportion_counts([264, 20, 36, 1680], "recall")
    >>> int(x), int(n)
    (264, 300)
    """
    registry.PROPORTION_METRIC.check(metric)
    arr = check_counts(counts)
    num_cells, den_cells = PROPORTION_METRICS[metric]
    return arr[..., num_cells].sum(-1), arr[..., den_cells].sum(-1)
