"""The poststratified posterior of a corpus metric (perfci.bayes.stratified_posterior)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import perfci as pc


def test_one_stratum_of_a_huge_corpus_has_the_dirichlet_margin_in_closed_form():
    # One stratum, N >> n: the corpus accuracy is the share pi_tp + pi_tn of
    # Dirichlet(a + n), whose margin is Beta(a_tp + a_tn, a_fp + a_fn). Its quantiles
    # from 40,000 draws agree within 4 Monte-Carlo SEs (sqrt(q (1 - q) / D) / density).
    cells = np.array([[30, 5, 7, 58]])
    draws = 40_000
    for prior, a in (("jeffreys", 0.5), ("uniform", 1.0)):
        post = pc.bayes.stratified_posterior(
            cells, [10**12], "accuracy", prior=prior, draws=draws, rng=2
        )
        beta = stats.beta(88 + 2 * a, 12 + 2 * a)
        for q, value in ((0.025, post.low), (0.5, post.estimate), (0.975, post.high)):
            mc_se = np.sqrt(q * (1 - q) / draws) / beta.pdf(beta.ppf(q))
            assert abs(value - beta.ppf(q)) < 4 * mc_se


def test_the_bounding_prior_of_one_stratum_is_clopper_pearson():
    # One stratum, N >> n, recall x/n = tp/(tp + fn): the lower end's prior puts its text
    # on fn (recall's most negative gradient), the upper's on tp, so the ends are the
    # quantiles of Beta(x, n - x + 1) and Beta(x + 1, n - x), Clopper-Pearson's
    # (scipy.stats.binomtest(30, 40).proportion_ci("exact") gives the same two numbers).
    cells = np.array([[30, 5, 10, 55]])
    draws = 40_000
    post = pc.bayes.stratified_posterior(
        cells, [10**12], "recall", prior="bounding", draws=draws, rng=5
    )
    exact = stats.binomtest(30, 40).proportion_ci(0.95, method="exact")
    for q, value, beta, end in (
        (0.025, post.low, stats.beta(30, 11), exact.low),
        (0.975, post.high, stats.beta(31, 10), exact.high),
    ):
        assert beta.ppf(q) == pytest.approx(end, abs=1e-12)
        mc_se = np.sqrt(q * (1 - q) / draws) / beta.pdf(beta.ppf(q))
        assert abs(value - end) < 4 * mc_se


def test_the_bounding_prior_moves_each_end_outward_of_jeffreys():
    # Stratified by prediction with 9 false negatives among 300 coded predicted
    # negatives of 31,400: the bounding ends lie outside Jeffreys' ends by more than
    # their Monte-Carlo error (the same streams: the shift is the prior's).
    cells = np.array([[240, 60, 0, 0], [0, 0, 9, 291]])
    kwargs = {"draws": 20_000, "rng": 1}
    jeffreys = pc.bayes.stratified_posterior(cells, [2400, 31400], "recall", **kwargs)
    bounding = pc.bayes.stratified_posterior(
        cells, [2400, 31400], "recall", prior="bounding", **kwargs
    )
    assert bounding.low < jeffreys.low - 0.005
    assert bounding.high > jeffreys.high + 0.005
    assert bounding.low < bounding.estimate < bounding.high


def test_a_census_is_the_corpus_and_impossible_cells_get_no_prior():
    # Every stratum sampled whole: the corpus is the sample, the interval a point. A
    # stratum of predicted negatives never predicts a positive: with no false negative
    # sampled in a whole stratum, recall is exactly 1.
    cells = np.array([[40, 10, 0, 0], [0, 0, 0, 50]])
    post = pc.bayes.stratified_posterior(cells, [50, 50], "recall", rng=1)
    assert (post.low, post.estimate, post.high) == (1.0, 1.0, 1.0)
    precision = pc.bayes.stratified_posterior(cells, [50, 5000], "precision", rng=1)
    assert (precision.low, precision.high) == (0.8, 0.8)


def test_a_batch_equals_a_loop_of_single_calls():
    rng = np.random.default_rng(4)
    cells = np.stack(
        [
            np.array(
                [
                    [rng.integers(20, 80), rng.integers(5, 20), 0, 0],
                    [0, 0, rng.integers(0, 5), rng.integers(80, 100)],
                ]
            )
            for _ in range(5)
        ]
    )
    sizes = [1000, 20000]
    for prior in ("jeffreys", "bounding"):
        kwargs = {"prior": prior, "draws": 500}
        batch = pc.bayes.stratified_posterior(cells, sizes, "f1", rng=9, **kwargs)
        streams = pc.batch_generators(9, 5)
        for k in range(5):
            alone = pc.bayes.stratified_posterior(cells[k], sizes, "f1", rng=streams[k], **kwargs)
            assert (batch.low[k], batch.estimate[k], batch.high[k]) == (
                alone.low,
                alone.estimate,
                alone.high,
            )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([[1, 2, 3]], [10], "recall"), r"`cells` must have shape \(\.\.\., strata, 4\)"),
        (([[1, 2, 3, -1]], [10], "recall"), r"non-negative whole numbers"),
        (([[1, 2, 3, 4]], [5], "recall"), r"at least the texts sampled"),
        (([[1, 2, 3, 4]], [50], "auc"), r"metric"),
    ],
)
def test_bad_input_is_named(args, message):
    with pytest.raises(ValueError, match=message):
        pc.bayes.stratified_posterior(*args)
