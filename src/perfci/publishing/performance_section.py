"""The validation report's performance model: its fit, tables, figure and sentence.

With ``covariates=`` :func:`perfci.validation_report` fits
:func:`perfci.bayes.performance_model` to the report's main metric (recall where it is
reported) and keeps what a paper shows of it: the coefficients (logit scale), the
effects on the metric's scale for new persons, the metric over the sample's mix and,
with ``target=``, poststratified to the target's mix (:func:`performance_parts`); their
tables (:func:`coefficient_table`, :func:`effect_table`), the forest of the effects
(:func:`effect_figure`) and the methods paragraph's sentence
(:func:`performance_sentence`).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import pandas as pd

from .tables import Table, interval, level_text, number

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = [
    "PERFORMANCE_REFERENCE",
    "coefficient_table",
    "effect_figure",
    "effect_table",
    "performance_part",
    "performance_parts",
    "performance_sentence",
]

#: The reference the sentence cites (multilevel regression and poststratification).
PERFORMANCE_REFERENCE = (
    "Park DK, Gelman A, Bafumi J (2004). Bayesian multilevel estimation with "
    "poststratification: state-level estimates from national polls. Political Analysis "
    "12(4): 375-385."
)


def performance_part(
    covariates: Any,
    target: Any,
    target_weight: str | None,
    weighted: bool,
    counts: Any,
    chosen: str | None,
    y_true: Any,
    y_pred: Any,
    groups: Any,
    level: float,
    generator: Any,
) -> tuple[Any, Any, dict[str, Any] | None]:
    """Fit the performance model of the main metric `chosen` (with `covariates`), or nothing.

    `counts` are :func:`perfci.confusion`'s of the report; the model draws from one child
    stream of `generator`.
    """
    if covariates is None:
        return None, None, None
    if weighted or counts.classes is not None or chosen is None:
        raise ValueError(
            "`covariates` fit a performance model of a binary proportion metric of an "
            "unweighted sample: give binary labels (or `positive`), a proportion metric "
            "and no `weights`, `strata` or `stratum_sizes`."
        )
    return performance_parts(
        y_true,
        y_pred,
        chosen,
        groups=groups,
        covariates=covariates,
        target=target,
        target_weight=target_weight,
        positive=counts.positive,
        confidence_level=level,
        rng=generator.spawn(1)[0],
    )


def performance_parts(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *,
    groups: Any,
    covariates: Any,
    target: Any,
    target_weight: str | None,
    positive: Any,
    confidence_level: float,
    rng: Any,
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """Fit the performance model; return its coefficients, effects and summary."""
    from ..bayes import performance_model

    fit = performance_model(
        y_true,
        y_pred,
        metric,
        groups=groups,
        covariates=covariates,
        positive=positive,
        confidence_level=confidence_level,
        rng=rng,
    )
    coefficients = fit.coefficients()
    effects = fit.effects()
    population = fit.population()
    summary: dict[str, Any] = {
        "metric": metric,
        "margins": list(fit.margins),
        "terms": [t.name for t in fit.design.terms],
        "persons": None if fit.persons is None else len(fit.persons),
        "population": _interval(population),
        "target": None,
        "flagged": fit.flagged,
        "reasons": list(fit.reasons),
        "diagnostics": dict(fit.diagnostics),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the check's own draws say nothing new
        check = fit.posterior_predictive_check(rng=rng)
    summary["ppc_p_value"] = dict(check.attrs["p_value"])
    if target is not None:
        if not isinstance(target, pd.DataFrame):
            raise ValueError("`target` must be a DataFrame of covariate patterns (or a corpus).")
        summary["target"] = _interval(fit.poststratify(target, weight=target_weight))
        summary["target_rows"] = len(target)
    return coefficients, effects, summary


def _interval(ci: Any) -> dict[str, Any]:
    return {
        "estimate": float(ci.estimate),
        "low": float(ci.low),
        "high": float(ci.high),
        "estimand": ci.estimand,
    }


def coefficient_table(
    coefficients: pd.DataFrame, summary: dict, level: float, digits: int
) -> Table:
    """Return the table of the model's coefficients on the logit scale."""
    three = len(summary["margins"]) > 1
    rows = []
    for r in coefficients.to_dict("records"):
        cells = [str(r["margin"])] if three else []
        cells += [
            str(r["term"]),
            number(r["mean"], digits, signed=True),
            number(r["sd"], digits),
            interval(r["low"], r["high"], digits, signed=True),
            number(r["rhat"], 3),
            f"{float(r['ess_bulk']):.0f}",
        ]
        rows.append(tuple(cells))
    headers = (("Margin",) if three else ()) + (
        "Term",
        "Mean",
        "SD",
        f"{level_text(level)} credible interval",
        "R-hat",
        "ESS",
    )
    numeric = ((False,) if three else ()) + (False, True, True, False, True, True)
    flagged = (
        " The fit failed its diagnostics: " + "; ".join(summary["reasons"]) + "."
        if (summary["flagged"])
        else ""
    )
    caption = (
        f"Performance model of {summary['metric']}: the coefficients of a hierarchical "
        "logistic regression of each relevant text's success on "
        f"{', '.join(summary['terms']) or 'no covariate'}, on the logit scale (a numeric "
        "term per unit of its column, a categorical one against its reference level), and "
        "the SD of the persons' effects; posterior means, SDs and equal-tailed credible "
        f"intervals.{flagged}"
    )
    return Table("performance", caption, headers, numeric, tuple(rows))


def effect_table(effects: pd.DataFrame, summary: dict, level: float, digits: int) -> Table:
    """Return the table of the effects on the metric's scale, and the poststratified metric."""
    metric = summary["metric"]
    rows = [
        (
            f"{r['term']}: {r['contrast']}",
            number(r["estimate"], digits, signed=True),
            interval(r["low"], r["high"], digits, signed=True),
            f"{float(r['probability_positive']):.3f}",
        )
        for r in effects.to_dict("records")
    ]
    for key, label in (("population", "the sample's mix"), ("target", "the target's mix")):
        found = summary.get(key)
        if found is not None:
            rows.append(
                (
                    f"{metric} over {label}",
                    number(found["estimate"], digits),
                    interval(found["low"], found["high"], digits),
                    "–",
                )
            )
    headers = ("Quantity", "Posterior median", f"{level_text(level)} credible interval",
               "P(> 0)")  # fmt: skip
    caption = (
        f"Effects on {metric} for new persons (each term's levels compared over the sample's "
        f"own mix of the other covariates), and {metric} for new persons over the sample's "
        "covariate mix"
        + (" and poststratified to the target's" if summary.get("target") is not None else "")
        + "."
    )
    return Table("effects", caption, headers, (False, True, False, True), tuple(rows))


def effect_figure(effects: pd.DataFrame, metric: str, level: float) -> Figure:
    """Draw the forest of the effects on the metric's scale."""
    from ..bayes.performance import plot_effect_table

    if effects.empty:
        raise ValueError("`which` 'effects' needs a performance model with a covariate.")
    return plot_effect_table(effects, metric, level)


def performance_sentence(summary: dict, citation: str) -> str:
    """Return the methods paragraph's sentence on the performance model."""
    metric = summary["metric"]
    terms = summary["terms"]
    listed = ", ".join(terms) if terms else "no covariate"
    persons = " with a random intercept per person" if summary["persons"] is not None else ""
    margins = summary["margins"]
    modelled = (
        f"each text's success for {metric}"
        if len(margins) == 1
        else f"{metric}'s margins ({', '.join(margins)}), each text's success for each,"
    )
    target = (
        f" and poststratified to a target of {summary['target_rows']} covariate patterns {citation}"
        if summary.get("target") is not None
        else ""
    )
    diagnostics = summary["diagnostics"]
    return (
        f"A hierarchical logistic regression of {modelled} on {listed}{persons} (weakly "
        "informative priors: Normal(0, 1.5) on the intercept and Normal(0, 1) on each "
        "standardized coefficient, a HalfNormal(1) person SD) was fit in PyMC and sampled "
        f"with nutpie (largest R-hat {diagnostics['r_hat']:.3f}, smallest bulk ESS "
        f"{diagnostics['ess_bulk']:.0f}); its effects are differences in {metric} for new "
        f"persons, and {metric} was estimated over the sample's covariate mix{target}."
    )
