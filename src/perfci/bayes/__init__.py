r"""Bayesian hierarchical models: posteriors and credible intervals for person-level rates.

A proportion metric on texts nested in persons (recall on each person's reference
positives, say) is modelled with the hierarchical beta-binomial of
:mod:`perfci.models.beta_binomial`. Four estimands have credible intervals:

``population`` (the default)
    the text-weighted rate of the population of persons the classifier will be applied
    to, :math:`\sum_j N_j p_j / \sum_j N_j` over all its persons: the estimand of the
    frequentist nested intervals, and the one to set beside them. The sampled persons'
    posterior rates, weighted by their sizes in the population (``population_sizes``,
    by default their labelled texts), plus the persons not sampled, whose size-weighted
    deviations are modelled as exchangeable (:mod:`perfci._core.population`), so a
    relation between a person's size and rate is carried by the data, not assumed away;
``mu``
    the mean person-level rate of the superpopulation of persons (each person counts
    once). It equals the population rate only when a person's number of texts is
    unrelated to their rate;
``sampled_persons`` (formerly ``text_weighted``)
    :math:`\sum_i u_i p_i / \sum_i u_i` of the sampled persons only (their rate on
    unlimited texts). It leaves out which persons were sampled, so it is narrower than
    the population's interval and is never set beside a frequentist one;
``person``
    each person's rate :math:`p_i` (partial pooling).

Samplers: ``"grid"``: the exact posterior of (mu, s) by two-dimensional quadrature of the
stable marginal likelihood, batched over data sets (:func:`grid_intervals`;
:func:`shared_grid_intervals` for several estimands from one posterior), with person rates
drawn from their exact conditionals; ``"nutpie"`` (the marginalized model is compiled once
per prior, kept in an on-disk cache for later processes, :mod:`~perfci.bayes.compile_cache`,
and refit to new data); ``"pymc"`` (PyMC's own NUTS); and ``"auto"``, the default, which
is the grid for the beta-binomial (exact there) and nutpie for the hierarchical
confusion model, which no grid computes. A result's ``sampler`` says which one ran.

Every metric of the confusion matrix has its credible intervals too:
:func:`confusion_posterior` for independent texts (:mod:`~perfci.bayes.posterior`: the
exact posterior under a conjugate prior, closed form where the metric is a monotone
function of one Beta, else from draws; default prior ``"metric_jeffreys"``),
:func:`stratified_posterior` for a corpus metric from a stratified sample
(:mod:`~perfci.bayes.stratified`: a Dirichlet-multinomial per stratum, poststratified by
the known stratum sizes), :func:`nested_metric_intervals` for texts nested in persons
(:mod:`~perfci.bayes.nested`:
the hierarchical model by margins, prevalence, recall and specificity each their own
hierarchical beta-binomial on the exact grid; estimands ``population`` and
``sampled_persons``), and :func:`compare` / :func:`compare_counts` for the paired
difference of two classifiers on the same texts (:mod:`~perfci.bayes.paired`).

Names follow perfci's rule, a function of labels ``X`` and of counts ``X_counts``:
:func:`fit_proportion` (labels) and :func:`fit_proportion_counts` (per-person counts) fit
the hierarchical beta-binomial, :func:`fit_confusion_counts` the hierarchical confusion
model. Their former names ``fit`` (now ``fit_proportion_counts``), ``fit_labels`` (now
``fit_proportion``, which takes `groups` by keyword after the metric) and
``fit_confusion`` (now ``fit_confusion_counts``) still work, with a FutureWarning. Every
function and method here takes the credible level as `confidence_level` (``level``, the
former name, still works with a FutureWarning; both together are an error).

Every result carries diagnostics (R-hat, bulk and tail ESS, divergences); a fit that
fails them is flagged, and a :class:`BayesianDiagnosticsWarning` says so. A fit also
says which posterior moments of the concentration kappa exist (``BayesFit.tail``): under
the ``"bda3"`` prior its mean is infinite, which flags the fit (its credible intervals,
being quantiles, stay valid), and :meth:`BayesFit.summary` reports kappa by quantiles.
:func:`prior_sensitivity` gives an interval under both priors and says whether they
differ materially.

Importing this package imports neither PyMC, nutpie, ArviZ nor xarray; fitting does.
The package is laid out by concern, each module importing only those before it:
:mod:`~perfci.bayes.samplers` (running MCMC, diagnostics),
:mod:`~perfci.bayes.compile_cache` (compiled nutpie models on disk),
:mod:`~perfci.bayes.tails` (which moments of kappa exist), :mod:`~perfci.bayes.intervals`
(the credible interval result), :mod:`~perfci.bayes.grid` (the exact grid intervals),
:mod:`~perfci.bayes.sensitivity` (prior sensitivity), :mod:`~perfci.bayes.results` (the
fits), :mod:`~perfci.bayes.posterior`, :mod:`~perfci.bayes.nested` and
:mod:`~perfci.bayes.paired` (the confusion-matrix models; :mod:`~perfci.bayes.confusion`
re-exports them from their former home), :mod:`~perfci.bayes.performance` (the
performance models of covariates, with :mod:`~perfci.bayes.performance_design`),
:mod:`~perfci.bayes.fitting` (the functions that fit) and :mod:`~perfci.bayes.plots`.
Outside the package it imports only
:mod:`perfci._core` (the NumPy cores :mod:`perfci._core.grid` and
:mod:`perfci._core.margins` among them), :mod:`perfci.metrics`, :mod:`perfci.counting`,
:mod:`perfci.models` and :mod:`perfci.plotting` (the figure style of every plot).
"""

from .compile_cache import CompileCacheWarning
from .fitting import (
    SAMPLERS,
    fit,
    fit_confusion,
    fit_confusion_counts,
    fit_labels,
    fit_proportion,
    fit_proportion_counts,
)
from .grid import grid_intervals, shared_grid_intervals
from .intervals import ESTIMANDS, CredibleInterval
from .intervals import INTERVAL_KINDS as INTERVAL_KINDS
from .nested import MetricCredibleInterval, nested_metric_intervals, shared_nested_metric_intervals
from .paired import PairedCredibleInterval, compare, compare_counts
from .performance import PerformanceFit, performance_model
from .plots import plot_forest, plot_posterior
from .posterior import (
    CONFUSION_PRIORS,
    DEFAULT_PRIOR,
    ConfusionPosterior,
    PriorOnlyWarning,
    confusion_posterior,
)
from .results import BayesFit, ConfusionFit
from .samplers import MAX_RHAT as MAX_RHAT
from .samplers import MIN_ESS as MIN_ESS
from .samplers import BayesianDiagnosticsWarning
from .sensitivity import PriorSensitivity, prior_sensitivity
from .stratified import StratifiedPosterior, stratified_posterior

__all__ = [
    "CONFUSION_PRIORS",
    "DEFAULT_PRIOR",
    "ESTIMANDS",
    "SAMPLERS",
    "BayesFit",
    "BayesianDiagnosticsWarning",
    "CompileCacheWarning",
    "ConfusionFit",
    "ConfusionPosterior",
    "CredibleInterval",
    "MetricCredibleInterval",
    "PairedCredibleInterval",
    "PerformanceFit",
    "PriorOnlyWarning",
    "PriorSensitivity",
    "StratifiedPosterior",
    "compare",
    "compare_counts",
    "confusion_posterior",
    "fit",
    "fit_confusion",
    "fit_confusion_counts",
    "fit_labels",
    "fit_proportion",
    "fit_proportion_counts",
    "grid_intervals",
    "nested_metric_intervals",
    "performance_model",
    "plot_forest",
    "plot_posterior",
    "prior_sensitivity",
    "shared_grid_intervals",
    "shared_nested_metric_intervals",
    "stratified_posterior",
]
