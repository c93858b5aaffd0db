"""perfci: honest confidence intervals for classifier performance metrics.

Counts first: labels become confusion-matrix counts once (:func:`confusion`), and every
metric, interval and operating characteristic is computed from counts, vectorized.

Names are imported on first use (PEP 562), so ``import perfci`` is cheap: SciPy, pandas,
xarray and PyMC load only when a function that needs them is called.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"

#: Subpackages and modules reachable as attributes (``pc.bayes``, ``pc.harness``, ...).
_SUBMODULES = ("bayes", "figures", "harness", "plotting", "policy", "publishing")
#: Every public name and the module that defines it.
_NAMES = {
    "AGREEMENT_METHODS": "agreement",
    "AGREEMENT_STATISTICS": "agreement",
    "ANALYTIC_METHODS": "analytic",
    "AUC_METHODS": "auc",
    "AnnotatorsCI": "annotators",
    "AgreementCI": "agreement",
    "BINARY_METRICS": "metrics",
    "BOOTSTRAP_INTERVALS": "bootstrap",
    "BootstrapCI": "bootstrap",
    "CELLS": "metrics",
    "ClusteredProportionCI": "design",
    "Comparison": "comparison",
    "ConfusionCounts": "counting",
    "DESIGNS": "design",
    "DF_ADJUSTMENTS": "design",
    "DegenerateBootstrapWarning": "bootstrap",
    "PersonsIgnoredWarning": "bootstrap",
    "DegenerateIntervalWarning": "auc",
    "HIERARCHICAL_MIN_TEXTS": "reporting",
    "LEVELS_OF_MEASUREMENT": "agreement",
    "METRICS": "metrics",
    "MetricCI": "metric",
    "metric_ci_counts": "metric",
    "OperatingCharacteristics": "exact",
    "PilotEstimates": "planning",
    "PROPORTION_METRICS": "metrics",
    "ProportionCI": "analytic",
    "RocAucCI": "auc",
    "RocAucComparison": "auc",
    "RunsCI": "runs",
    "SCHEMES": "bootstrap",
    "SampleSizePlan": "planning",
    "StratifiedSamplePlan": "stratified_planning",
    "UndefinedMetricWarning": "_core.validation",
    "WeightedCI": "sample_design",
    "DesignCells": "sample_design",
    "design_cells": "sample_design",
    "weighted_ci": "sample_design",
    "ValidationReport": "publishing",
    "agreement_report": "agreement",
    "annotator_agreement": "agreement",
    "annotator_ci": "annotators",
    "annotator_table": "annotators",
    "auc_ci": "auc",
    "batch_generators": "_core.validation",
    "bootstrap_ci": "bootstrap",
    "clustered_proportion_ci": "design",
    "compare": "comparison",
    "compare_auc": "auc",
    "compare_groups": "subgroups",
    "compare_many": "many",
    "rank_ci": "many",
    "CVInterval": "splits",
    "cv_ci": "splits",
    "grouped_folds": "splits",
    "nested_cv_ci": "splits",
    "compute_metric": "metrics",
    "confusion": "counting",
    "design_effect": "design",
    "effective_sample_size": "design",
    "exact_coverage": "exact",
    "expected_half_width": "exact",
    "half_width_curves": "planning",
    "icc": "design",
    "load_example": "datasets",
    "metric_ci": "reporting",
    "operating_characteristics": "exact",
    "pilot_estimates": "planning",
    "plan_sample_size": "planning",
    "plan_stratified_sample": "stratified_planning",
    "plot_half_width_curves": "planning",
    "proportion_ci": "analytic",
    "proportion_counts": "metrics",
    "report": "reporting",
    "runs_ci": "runs",
    "validation_report": "publishing",
}

if TYPE_CHECKING:  # static analysers see the eager imports
    from . import bayes, policy
    from ._core.validation import UndefinedMetricWarning, batch_generators
    from .agreement import (
        AGREEMENT_METHODS,
        AGREEMENT_STATISTICS,
        LEVELS_OF_MEASUREMENT,
        AgreementCI,
        agreement_report,
        annotator_agreement,
    )
    from .analytic import ANALYTIC_METHODS, ProportionCI, proportion_ci
    from .annotators import AnnotatorsCI, annotator_ci, annotator_table
    from .auc import (
        AUC_METHODS,
        DegenerateIntervalWarning,
        RocAucCI,
        RocAucComparison,
        auc_ci,
        compare_auc,
    )
    from .bootstrap import (
        BOOTSTRAP_INTERVALS,
        SCHEMES,
        BootstrapCI,
        DegenerateBootstrapWarning,
        PersonsIgnoredWarning,
        bootstrap_ci,
    )
    from .comparison import Comparison, compare
    from .counting import ConfusionCounts, confusion
    from .datasets import load_example
    from .design import (
        DESIGNS,
        DF_ADJUSTMENTS,
        ClusteredProportionCI,
        clustered_proportion_ci,
        design_effect,
        effective_sample_size,
        icc,
    )
    from .exact import (
        OperatingCharacteristics,
        exact_coverage,
        expected_half_width,
        operating_characteristics,
    )
    from .many import compare_many, rank_ci
    from .metric import MetricCI, metric_ci_counts
    from .metrics import (
        BINARY_METRICS,
        CELLS,
        METRICS,
        PROPORTION_METRICS,
        compute_metric,
        proportion_counts,
    )
    from .planning import (
        PilotEstimates,
        SampleSizePlan,
        half_width_curves,
        pilot_estimates,
        plan_sample_size,
        plot_half_width_curves,
    )
    from .publishing import ValidationReport, validation_report
    from .reporting import HIERARCHICAL_MIN_TEXTS, metric_ci, report
    from .runs import RunsCI, runs_ci
    from .sample_design import DesignCells, WeightedCI, design_cells, weighted_ci
    from .splits import CVInterval, cv_ci, grouped_folds, nested_cv_ci
    from .stratified_planning import StratifiedSamplePlan, plan_stratified_sample
    from .subgroups import compare_groups


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_NAMES, *_SUBMODULES})


__all__ = [
    "AGREEMENT_METHODS",
    "AGREEMENT_STATISTICS",
    "ANALYTIC_METHODS",
    "AUC_METHODS",
    "AnnotatorsCI",
    "BINARY_METRICS",
    "BOOTSTRAP_INTERVALS",
    "CELLS",
    "DESIGNS",
    "DF_ADJUSTMENTS",
    "HIERARCHICAL_MIN_TEXTS",
    "LEVELS_OF_MEASUREMENT",
    "METRICS",
    "PROPORTION_METRICS",
    "SCHEMES",
    "AgreementCI",
    "BootstrapCI",
    "ClusteredProportionCI",
    "Comparison",
    "ConfusionCounts",
    "DegenerateBootstrapWarning",
    "DegenerateIntervalWarning",
    "MetricCI",
    "OperatingCharacteristics",
    "PersonsIgnoredWarning",
    "PilotEstimates",
    "ProportionCI",
    "RocAucCI",
    "RocAucComparison",
    "RunsCI",
    "SampleSizePlan",
    "StratifiedSamplePlan",
    "UndefinedMetricWarning",
    "ValidationReport",
    "agreement_report",
    "annotator_agreement",
    "annotator_ci",
    "annotator_table",
    "auc_ci",
    "batch_generators",
    "bayes",
    "bootstrap_ci",
    "clustered_proportion_ci",
    "compare",
    "compare_auc",
    "compare_groups",
    "compare_many",
    "compute_metric",
    "CVInterval",
    "cv_ci",
    "grouped_folds",
    "nested_cv_ci",
    "confusion",
    "design_effect",
    "effective_sample_size",
    "exact_coverage",
    "expected_half_width",
    "half_width_curves",
    "icc",
    "load_example",
    "metric_ci",
    "metric_ci_counts",
    "operating_characteristics",
    "pilot_estimates",
    "plan_sample_size",
    "plan_stratified_sample",
    "plot_half_width_curves",
    "policy",
    "proportion_ci",
    "WeightedCI",
    "DesignCells",
    "design_cells",
    "rank_ci",
    "weighted_ci",
    "proportion_counts",
    "report",
    "runs_ci",
    "validation_report",
]
