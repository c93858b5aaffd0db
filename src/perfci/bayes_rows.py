"""The Bayesian rows of :func:`perfci.report` (``bayes=True``), beside each frequentist row.

For a proportion metric of nested texts, the hierarchical beta-binomial's ``population``
estimand (and, with the prior check, the interval under the alternative prior); for
every other metric of nested texts, the ``population`` estimand of the hierarchical
margins model; for independent texts, the posterior under the default prior. The
Bayesian models are in :mod:`perfci.bayes`, imported when a row is asked for.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._core.estimands import relevant_texts
from ._core.validation import UndefinedMetricWarning
from .counting import ConfusionCounts
from .metric import AVERAGED_METRICS
from .metrics import PROPORTION_METRICS, proportion_counts
from .report_table import flagged_note, interval_row

__all__ = ["bayes_rows"]


def bayes_rows(
    counts: ConfusionCounts,
    metric: str,
    level: float,
    sampler: str,
    rng: np.random.Generator,
    sensitivity: bool = False,
) -> list[dict]:
    """Credible intervals beside the frequentist row of a metric (report(bayes=True)).

    With `sensitivity`, the hierarchical beta-binomial's row is followed by the interval
    under the alternative prior (exact grid), whose note says whether the two differ
    materially (:func:`perfci.bayes.prior_sensitivity`).
    """
    from . import bayes

    nested = counts.groups is not None
    with warnings.catch_warnings():
        # a failed diagnostic is reported in the row's note instead
        warnings.simplefilter("ignore", bayes.BayesianDiagnosticsWarning)
        if metric in PROPORTION_METRICS and nested:
            x, n = proportion_counts(counts.counts, metric)
            result = bayes.fit_proportion_counts(x, n, sampler=sampler, rng=rng)
            # the population estimand only: the one the frequentist row is about
            ci = result.interval("population", "eti", level)
            rows = [
                interval_row(
                    metric,
                    ci.estimate,
                    ci.low,
                    ci.high,
                    f"bayes beta-binomial, population ({result.sampler}, eti)",
                    int(n.sum()),
                    int(np.count_nonzero(n)),
                    ("text-weighted rate of the population of persons", flagged_note(result)),
                )
            ]
            if sensitivity:
                check = result.prior_sensitivity("population", level, rng=rng)
                other = check.alternative
                verdict = (
                    f"differs materially from prior {check.prior!r}: {check.reason}"
                    if check.differs
                    else f"agrees with prior {check.prior!r}: {check.reason}"
                )
                rows.append(
                    interval_row(
                        metric,
                        other.estimate,
                        other.low,
                        other.high,
                        f"bayes beta-binomial, population, prior {check.alternative_prior} "
                        "(grid, eti)",
                        int(n.sum()),
                        int(np.count_nonzero(n)),
                        (f"prior sensitivity: {verdict}",),
                    )
                )
            return rows
    return _bayes_metric_rows(counts, metric, level, rng)


def _bayes_metric_rows(
    counts: ConfusionCounts, metric: str, level: float, rng: np.random.Generator
) -> list[dict]:
    """Return the Bayesian row of a metric other than a proportion of nested texts.

    Nested texts: the population estimand of the hierarchical margins model
    (:func:`perfci.bayes.nested_metric_intervals`, the exact grid whatever the sampler);
    independent texts: the posterior under the default prior
    (:func:`perfci.bayes.confusion_posterior`), closed form where it has one.
    """
    from . import bayes

    nested = counts.groups is not None
    averaged = metric in AVERAGED_METRICS
    cells = counts.matrix if averaged else counts.counts
    assert cells is not None  # a multi-class count always has its matrices
    total = cells.sum(0) if nested else cells
    relevant = int(relevant_texts(total, metric))
    with warnings.catch_warnings():
        # a fallback or a prior-only posterior is said in the row's note instead
        warnings.simplefilter("ignore", bayes.PriorOnlyWarning)
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        if nested:
            ci: Any = bayes.nested_metric_intervals(cells, metric, confidence_level=level, rng=rng)
            method = "bayes hierarchical margins, population (grid, eti)"
            persons: Any = int(ci.persons)
            notes: tuple[str, ...] = (
                "metric of the text-weighted pooled cells of the population of persons",
                "FLAGGED: a margin has fewer than 2 persons (one pooled rate)"
                if ci.flagged
                else "",
            )
        else:
            posterior = bayes.confusion_posterior(total, multiclass=averaged)
            ci = posterior.interval(metric, "eti", level, rng=rng)
            how = "closed form" if posterior.closed_form(metric) else "draws"
            method = f"bayes {posterior.prior} prior, {how} (eti)"
            persons = pd.NA
            notes = ("no relevant text: the interval is the prior's",) if relevant == 0 else ()
    if not np.isfinite(ci.low):
        return []  # no posterior of the population (one person): no row
    return [interval_row(metric, ci.estimate, ci.low, ci.high, method, relevant, persons, notes)]
