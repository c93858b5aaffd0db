"""perfci: honest confidence intervals for classifier performance metrics.

Counts first: labels become confusion-matrix counts once (:func:`confusion`), and every
metric, interval and operating characteristic is computed from counts, vectorized.
"""

from . import bayes, policy
from ._core.validation import UndefinedMetricWarning
from .analytic import ANALYTIC_METHODS, ProportionCI, proportion_ci
from .bootstrap import (
    BOOTSTRAP_INTERVALS,
    SCHEMES,
    BootstrapCI,
    DegenerateBootstrapWarning,
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
from .metrics import (
    BINARY_METRICS,
    CELLS,
    METRICS,
    PROPORTION_METRICS,
    compute_metric,
    proportion_counts,
)
from .planning import (
    SampleSizePlan,
    half_width_curves,
    plan_sample_size,
    plot_half_width_curves,
)
from .reporting import HIERARCHICAL_MIN_TEXTS, MetricCI, metric_ci, report

__version__ = "0.1.0.dev0"

__all__ = [
    "ANALYTIC_METHODS",
    "BINARY_METRICS",
    "BOOTSTRAP_INTERVALS",
    "CELLS",
    "DESIGNS",
    "DF_ADJUSTMENTS",
    "HIERARCHICAL_MIN_TEXTS",
    "METRICS",
    "PROPORTION_METRICS",
    "SCHEMES",
    "BootstrapCI",
    "ClusteredProportionCI",
    "Comparison",
    "ConfusionCounts",
    "DegenerateBootstrapWarning",
    "MetricCI",
    "OperatingCharacteristics",
    "ProportionCI",
    "SampleSizePlan",
    "UndefinedMetricWarning",
    "bayes",
    "bootstrap_ci",
    "clustered_proportion_ci",
    "compare",
    "compute_metric",
    "confusion",
    "design_effect",
    "effective_sample_size",
    "exact_coverage",
    "expected_half_width",
    "half_width_curves",
    "icc",
    "load_example",
    "metric_ci",
    "operating_characteristics",
    "plan_sample_size",
    "plot_half_width_curves",
    "policy",
    "proportion_ci",
    "proportion_counts",
    "report",
]
