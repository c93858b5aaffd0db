"""The scoring kernel of stratified samples from a finite corpus (kind ``stratified_corpus``).

Every method sees the same stratified-by-prediction samples of the cell's corpus
(:mod:`~perfci.harness.corpus`) and is scored against the corpus's own metric:

- family ``weighted``, ``weighting = "design"``: :func:`perfci.weighted_ci` (what
  :func:`perfci.metric_ci` computes with ``weights``/``strata``/``stratum_sizes``) on the
  batch, with texts as units and the finite population correction, or with persons as
  clusters within strata (``clusters = "persons"``, what ``groups=`` gives);
  ``weighting = "none"``: the interval researchers compute when they ignore the design,
  :func:`perfci.proportion_ci` by the recommended method on the unweighted counts (texts
  treated as a simple random sample; proportion metrics only);
- family ``bayes_stratified``: :func:`perfci.bayes.stratified_posterior`, each stratum
  its own Dirichlet-multinomial, poststratified by the stratum sizes (what
  ``method="poststratified"`` of the ``weighted`` family reads its interval off, with
  the design-based estimate kept inside it).
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import policy
from .._core import registry
from .corpus import corpus_of, draw_stratified
from .kernels import score
from .populations import person_parameters
from .schema import Scale, Suite

__all__ = ["stratified_cell"]


def stratified_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score every method on stratified samples of the cell's corpus."""
    from ..analytic import proportion_ci
    from ..bayes.stratified import stratified_posterior
    from ..metrics import metric_values, proportion_counts
    from ..sample_design import units_design, weighted_ci

    params = person_parameters(suite, cell)
    metric = params["metric"]
    corpus = corpus_of(params)
    truth = float(metric_values(corpus.cells, metric))
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    samples = draw_stratified(
        corpus,
        int(params["sampled"]),
        float(params["positive_share"]),
        scale.replications,
        data_rng,
    )
    strata = np.array(["predicted positive", "predicted negative"])
    out = np.empty((len(suite.methods), 6))
    rows = np.arange(scale.replications)[:, None]
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if m.family == "bayes_stratified":
                per_stratum = np.zeros((scale.replications, 2, 4))
                np.add.at(per_stratum, (rows, samples.stratum, samples.cell), 1.0)
                post = stratified_posterior(
                    per_stratum,
                    samples.stratum_sizes,
                    metric,
                    prior=o["prior"],
                    draws=o["draws"],
                    confidence_level=level,
                    rng=rng,
                )
                out[i] = score(post.low, post.high, truth)
                continue
            if o["weighting"] == "none":
                if metric not in registry.PROPORTION_METRIC:
                    out[i] = 0.0  # an analytic interval of a proportion: not scored
                    continue
                pooled = np.zeros((scale.replications, 4))
                np.add.at(pooled, (rows, samples.cell), 1.0)
                x, n = proportion_counts(pooled, metric)
                plain = proportion_ci(x, n, method=policy.PROPORTION_METHOD, confidence_level=level)
                out[i] = score(plain.low, plain.high, truth)
                continue
            clustered = o["clusters"] == "persons"
            design = units_design(
                samples.cell,
                samples.weight,
                samples.stratum,
                strata=strata,
                unit=samples.stratum * corpus.persons + samples.person if clustered else None,
                person=samples.person if clustered else None,
                stratum_sizes=None if clustered else samples.stratum_sizes,
            )
            ci = weighted_ci(design, metric, method=o["method"], confidence_level=level, rng=rng)
            out[i] = score(ci.low, ci.high, truth)
    return out
