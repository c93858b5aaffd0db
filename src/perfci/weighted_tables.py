r"""Weighted and stratified samples in :func:`perfci.metric_ci`, ``report``, ``compare``.

The entry points route here when `weights`, `strata` or `stratum_sizes` is given
(:mod:`perfci.sample_design` holds the design and its intervals). Each row, comparison and
subgroup difference is design-based:

- a metric: :func:`perfci.sample_design.weighted_ci` (the recommended interval unless
  `method` says otherwise);
- a subgroup's metric (a *domain*, R survey's ``subset()`` of a design): the texts outside
  the subgroup stay sampled units of their strata with no cells, so the domain's size is
  estimated, not known, and the linearized intervals apply (the poststratified posterior
  needs the strata to be the domain's);
- a paired difference of two classifiers on the same texts, and the difference of a
  subgroup from a reference subgroup: :math:`\hat d = \hat\theta_A - \hat\theta_B` with the
  linearized values :math:`z_j = z_{A,j} - z_{B,j}` of every sampling unit
  (:func:`perfci.sample_design.linearized_values`), its variance the stratified variance
  of their total (``svycontrast`` of two ``svyratio`` in R), and
  :math:`\hat d \pm t_{df}\,\mathrm{se}` with the design's degrees of freedom (units with
  a relevant text, less the strata with one).

The estimand is the metric of the corpus the sample was drawn from (texts as the units),
or of the population of persons when persons were sampled (`groups`).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import special

from ._core import registry
from ._core.labels import as_label_array, factorize_sorted, has_columns, plain
from ._core.recommended import RECOMMENDED
from ._core.validation import UndefinedMetricWarning, check_confidence_level, given
from .metric import MetricCI
from .metrics import BINARY_METRICS
from .report_table import assembled_table, metric_row
from .sample_design import (
    DesignCells,
    design_cells,
    linearized_values,
    relevant_cells,
    weighted_ci,
)

if TYPE_CHECKING:
    from .paired import Comparison

__all__ = [
    "design_given",
    "refuse_unset",
    "weighted_comparison",
    "weighted_group_differences",
    "weighted_metric_ci",
    "weighted_report",
]


def design_given(weights: Any, strata: Any, stratum_sizes: Any) -> bool:
    """Return whether any design argument is given (the entry points route here then)."""
    return any(value is not None for value in (weights, strata, stratum_sizes))


def _left_unset(value: Any) -> bool:
    """Return whether an option was left to its default (UNSET, None or "recommended")."""
    return not given(value) or value is None or (isinstance(value, str) and value == RECOMMENDED)


def refuse_unset(unused: dict[str, Any]) -> None:
    """Raise for an option of the simple-random-sample intervals that was set."""
    given = [name for name, value in unused.items() if not _left_unset(value)]
    if given:
        raise ValueError(
            f"`{given[0]}` does not apply to a weighted or stratified sample (`weights`, "
            "`strata` or `stratum_sizes` given): its interval is design-based, with the "
            "linearized variance and the design's degrees of freedom. Leave it unset."
        )


def _check_metric(metric: str, name: str = "metric") -> None:
    if metric not in registry.BINARY_METRIC and metric != "prevalence":
        raise ValueError(
            f"`{name}`: a weighted or stratified sample has design-based intervals for the "
            f"binary metrics and 'prevalence'; got {metric!r}."
        )


def _one_label_per_text(**labels: Any) -> None:
    if any(has_columns(value) for value in labels.values()):
        raise ValueError(
            "a weighted or stratified sample takes one reference and one classifier label "
            "per text: repeated runs and several annotators are not supported with "
            "`weights`, `strata` or `stratum_sizes`."
        )


def _as_metric_ci(ci: Any, cells: DesignCells, metric: str) -> MetricCI:
    relevant = list(relevant_cells(metric))
    in_domain = cells.counts[:, relevant].sum(-1) > 0
    persons = int(np.unique(cells.person[in_domain]).size) if cells.clustered else None
    return MetricCI(
        metric=metric,
        estimate=ci.estimate,
        low=ci.low,
        high=ci.high,
        confidence_level=ci.confidence_level,
        method=f"{ci.method} (weighted: {cells.description})",
        population=ci.population,
        relevant_n=ci.relevant_n,
        persons=persons,
        icc=float("nan"),
        design_effect=ci.relevant_n / ci.n_eff if ci.n_eff > 0 else float("nan"),
        n_eff=ci.n_eff,
        result=ci,
    )


def weighted_metric_ci(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *,
    groups: Any,
    weights: Any,
    strata: Any,
    stratum_sizes: Any,
    method: str,
    positive: Any,
    confidence_level: Any,
    rng: Any,
    unused: dict[str, Any],
) -> MetricCI:
    """:func:`perfci.metric_ci` of a weighted or stratified sample, as a :class:`MetricCI`.

    `unused` holds the options of the simple-random-sample intervals (design, df
    adjustment, bootstrap options), which must be left at "recommended": the design-based
    interval has its own variance and degrees of freedom.
    """
    refuse_unset(unused)
    _one_label_per_text(y_true=y_true, y_pred=y_pred)
    _check_metric(metric)
    cells = design_cells(
        y_true,
        y_pred,
        positive=positive,
        weights=weights,
        strata=strata,
        stratum_sizes=stratum_sizes,
        groups=groups,
    )
    ci = weighted_ci(cells, metric, method=method, confidence_level=confidence_level, rng=rng)
    return _as_metric_ci(ci, cells, metric)


def _subgroups(by: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the sorted subgroups of `by` and each text's index among them."""
    values = as_label_array("by", by)  # the label intake: missing values refused
    if values.shape != (n,):
        raise ValueError(f"`by` must hold one subgroup label per text ({n}).")
    return factorize_sorted(values)


def weighted_report(
    y_true: Any,
    y_pred: Any,
    *,
    groups: Any,
    weights: Any,
    strata: Any,
    stratum_sizes: Any,
    by: Any,
    metrics: list[str] | None,
    positive: Any,
    confidence_level: float,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Return the rows of :func:`perfci.report` for a weighted or stratified sample.

    One row per metric (default: every binary metric and ``prevalence``), then, with
    `by`, per subgroup (domain estimates). Rows undefined for the data are left out with
    a warning, as :func:`perfci.report` does.
    """
    _one_label_per_text(y_true=y_true, y_pred=y_pred)
    chosen = list(metrics) if metrics is not None else [*BINARY_METRICS, "prevalence"]
    for m in chosen:
        _check_metric(m, "metrics")
    design = {"positive": positive, "weights": weights, "strata": strata}
    design |= {"stratum_sizes": stratum_sizes, "groups": groups}
    cells = design_cells(y_true, y_pred, **design)
    n = int(np.size(np.asarray(y_true, dtype=object)))
    domains: list[tuple[str, Any]] = [("all", None)]
    if by is not None:
        labels, codes = _subgroups(by, n)
        domains += [(plain(label), codes == k) for k, label in enumerate(labels)]
    rows, skipped = [], []
    for name, domain in domains:
        subset = cells if domain is None else design_cells(y_true, y_pred, domain=domain, **design)
        for m in chosen:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", UndefinedMetricWarning)
                ci = weighted_ci(subset, m, confidence_level=confidence_level, rng=rng)
            if not np.isfinite(ci.estimate) or not np.isfinite(ci.low):
                why = str(caught[0].message) if caught else f"{m} is undefined"
                skipped.append(why if domain is None else f"{name}: {why}")
                continue
            row = metric_row(_as_metric_ci(ci, subset, m))
            rows.append({"by": name, **row} if by is not None else row)
    return assembled_table([pd.DataFrame(rows)] if rows else [], skipped)


def _difference(
    cells_a: DesignCells,
    cells_b: DesignCells,
    metric: str,
    level: float,
) -> dict[str, Any]:
    """Return the design-based difference of a metric between two cell sets' units."""
    estimate_a, z_a = linearized_values(cells_a, metric)
    estimate_b, z_b = linearized_values(cells_b, metric)
    difference = estimate_a - estimate_b
    se = np.sqrt(max(float(cells_a.total_variance(z_a - z_b)), 0.0))
    relevant = list(relevant_cells(metric))
    holds = cells_a.present & (
        (cells_a.counts[..., relevant].sum(-1) > 0) | (cells_b.counts[..., relevant].sum(-1) > 0)
    )
    df = float(holds.sum() - (cells_a.per_stratum(holds) > 0).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        t = special.stdtrit(df, (1 + level) / 2) if df >= 1 else np.nan
        p_value = 2 * special.stdtr(df, -abs(difference) / se) if se > 0 else np.nan
    defined = np.isfinite(difference) and df >= 1 and se > 0
    low = difference - t * se if defined else np.nan
    high = difference + t * se if defined else np.nan
    return {
        "estimate_a": float(estimate_a),
        "estimate_b": float(estimate_b),
        "difference": float(difference),
        "low": float(low),
        "high": float(high),
        "se": se,
        "df": df,
        "p_value": float(p_value),
    }


def _warn_undefined_difference(what: str, d: dict[str, Any]) -> None:
    if not np.isfinite(d["low"]):
        reason = (
            "undefined for the data"
            if not np.isfinite(d["difference"])
            else "without degrees of freedom (the units holding a relevant text no more "
            "than their strata) or without design variance"
        )
        warnings.warn(
            f"the design-based interval of {what} is {reason}: NaN.",
            UndefinedMetricWarning,
            stacklevel=4,
        )


def weighted_comparison(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    metric: str,
    *,
    groups: Any,
    weights: Any,
    strata: Any,
    stratum_sizes: Any,
    method: str,
    positive: Any,
    confidence_level: Any,
    unused: dict[str, Any],
) -> Comparison:
    """:func:`perfci.compare` of two classifiers on a weighted or stratified sample.

    The design-based t interval of the paired difference (module notes); `method` must be
    "recommended" (the only interval there is).
    """
    from .paired import Comparison  # scipy.stats: only when a comparison is made

    refuse_unset({**unused, "method": method})
    _one_label_per_text(y_true=y_true, pred_a=pred_a, pred_b=pred_b)
    _check_metric(metric)
    level = float(check_confidence_level(confidence_level, scalar=True))
    design = {"positive": positive, "weights": weights, "strata": strata}
    design |= {"stratum_sizes": stratum_sizes, "groups": groups}
    cells_a = design_cells(y_true, pred_a, **design)
    cells_b = design_cells(y_true, pred_b, **design)
    d = _difference(cells_a, cells_b, metric, level)
    _warn_undefined_difference(f"the difference in {metric}", d)
    n_texts = int(np.size(np.asarray(y_true, dtype=object)))
    # the sampled texts on which the two disagree (each is in a different cell by A and B)
    differ = np.abs(cells_a.counts - cells_b.counts).sum(-1) / 2
    persons = int(np.unique(cells_a.person).size) if cells_a.clustered else None
    return Comparison(
        metric=metric,
        estimate_a=d["estimate_a"],
        estimate_b=d["estimate_b"],
        difference=d["difference"],
        low=d["low"],
        high=d["high"],
        confidence_level=level,
        method=f"design-based linearization, t with {d['df']:g} df (weighted: "
        f"{cells_a.description})",
        p_value=d["p_value"],
        test=f"design-based t ({d['df']:g} df)",
        robust_low=d["low"],
        robust_high=d["high"],
        robust_se=d["se"],
        df=d["df"],
        disagreement=float(differ.sum() / cells_a.counts.sum()),
        n_texts=n_texts,
        persons=persons,
        newcombe_low=float("nan"),
        newcombe_high=float("nan"),
        design_effect=float("nan"),
        mcnemar_pvalue=float("nan"),
        discordant=(0, 0),
        bootstrap=None,
        effective_persons=None,
    )


def _persons(cells: DesignCells, relevant: list[int]) -> Any:
    """Return the persons with a relevant text (pd.NA when texts are the units)."""
    if not cells.clustered:
        return pd.NA
    holds = cells.counts[..., relevant].sum(-1) > 0
    return int(np.unique(cells.person[holds]).size)


def weighted_group_differences(
    y_true: Any,
    y_pred: Any,
    metric: str,
    by: Any,
    *,
    groups: Any,
    weights: Any,
    strata: Any,
    stratum_sizes: Any,
    reference: Any,
    method: str,
    positive: Any,
    confidence_level: Any,
    unused: dict[str, Any],
) -> pd.DataFrame:
    """:func:`perfci.compare_groups` on a weighted or stratified sample (domain differences).

    Each subgroup other than the reference: the design-based t interval of its domain
    estimate minus the reference's, both on the same units (module notes).
    """
    refuse_unset({**unused, "method": method})
    _one_label_per_text(y_true=y_true, y_pred=y_pred)
    _check_metric(metric)
    level = float(check_confidence_level(confidence_level, scalar=True))
    design = {"positive": positive, "weights": weights, "strata": strata}
    design |= {"stratum_sizes": stratum_sizes, "groups": groups}
    labels, codes = _subgroups(by, int(np.size(np.asarray(y_true))))
    if labels.size < 2:
        raise ValueError(f"`by` must hold at least two subgroups; got {labels.size}.")
    names = [plain(label) for label in labels]
    if reference is None:
        ref = 0
    elif reference in names:
        ref = names.index(reference)
    else:
        raise ValueError(f"`reference` must be one of the subgroups {names!r}; got {reference!r}.")
    cells = [design_cells(y_true, y_pred, domain=codes == k, **design) for k in range(len(names))]
    relevant = list(relevant_cells(metric))
    rows = []
    for k, name in enumerate(names):
        if k == ref:
            continue
        d = _difference(cells[k], cells[ref], metric, level)
        _warn_undefined_difference(f"{metric} of {name!r} minus {names[ref]!r}", d)
        rows.append(
            {
                "subgroup": name,
                "reference": names[ref],
                "metric": metric,
                "estimate": d["estimate_a"],
                "estimate_reference": d["estimate_b"],
                "difference": d["difference"],
                "low": d["low"],
                "high": d["high"],
                "relevant_n": int(cells[k].counts[..., relevant].sum()),
                "relevant_n_reference": int(cells[ref].counts[..., relevant].sum()),
                "persons": _persons(cells[k], relevant),
                "persons_reference": _persons(cells[ref], relevant),
                "method": f"design-based domain difference, t with {d['df']:g} df (weighted: "
                f"{cells[k].description})",
                "se": d["se"],
                "df": d["df"],
                "effective_persons": np.nan,
                "effective_persons_reference": np.nan,
            }
        )
    table = pd.DataFrame(rows)
    table.attrs.update(confidence_level=level, simultaneous=None, comparisons=len(rows))
    return table
