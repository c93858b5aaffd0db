"""The former home of the confusion-matrix models, kept so that its imports keep working.

The models now live one concern per module: :mod:`~perfci.bayes.posterior` (independent
texts), :mod:`~perfci.bayes.nested` (texts nested in persons) and
:mod:`~perfci.bayes.paired` (the paired difference of two classifiers).
"""

from .nested import (
    MARGIN_GRID_SHAPE,
    MetricCredibleInterval,
    nested_metric_intervals,
    shared_nested_metric_intervals,
)
from .paired import PairedCredibleInterval, compare, compare_counts
from .posterior import (
    CONFUSION_PRIORS,
    DEFAULT_PRIOR,
    DRAWS,
    MIN_CONCENTRATION,
    ConfusionPosterior,
    PriorOnlyWarning,
    confusion_posterior,
)

__all__ = [
    "CONFUSION_PRIORS",
    "DEFAULT_PRIOR",
    "DRAWS",
    "MARGIN_GRID_SHAPE",
    "MIN_CONCENTRATION",
    "ConfusionPosterior",
    "MetricCredibleInterval",
    "PairedCredibleInterval",
    "PriorOnlyWarning",
    "compare",
    "compare_counts",
    "confusion_posterior",
    "nested_metric_intervals",
    "shared_nested_metric_intervals",
]
