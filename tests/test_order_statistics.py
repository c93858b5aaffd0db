"""The bootstrap of a proportion drawn from the law of its interval's order statistics.

References: exact enumeration of every outcome of B resamples (the binomial law of each,
``numpy.quantile`` for the percentile ends, the BCa formulas written out), and the
public path that draws every resample (``draws="resamples"``).
"""

import itertools
import warnings
from collections import Counter

import numpy as np
import pytest
from scipy import stats

import perfci as pc


def _exact_interval_law(t, size, n_resamples, interval, level=0.95):
    """P(low, high) of the bootstrap interval over every outcome of B resamples."""
    support = np.arange(size + 1)
    pmf = stats.binom.pmf(support, size, t / size)
    theta = t / size
    quantile_levels = np.array([(1 - level) / 2, (1 + level) / 2])
    law = {}
    for outcome in itertools.product(support, repeat=n_resamples):
        replicates = np.array(outcome) / size
        levels = quantile_levels
        if interval == "bca":
            below = (np.sum(replicates < theta) + 0.5 * np.sum(replicates == theta)) / n_resamples
            single = np.all(replicates == replicates[0])
            if not single and 0 < below < 1:
                jack = np.array([(t - 1) / (size - 1)] * t + [t / (size - 1)] * (size - t))
                d = jack.mean() - jack
                a = (d**3).sum() / (6 * (d**2).sum() ** 1.5) if (d**2).sum() > 0 else 0.0
                z0, z = stats.norm.ppf(below), stats.norm.ppf(quantile_levels)
                denominator = 1 - a * (z0 + z)
                if np.all(denominator > 0):
                    levels = stats.norm.cdf(z0 + (z0 + z) / denominator)
        key = tuple(np.round(np.quantile(replicates, levels), 10))
        law[key] = law.get(key, 0.0) + float(np.prod(pmf[list(outcome)]))
    return law


@pytest.mark.parametrize(
    ("x", "n", "lam", "interval"),
    [(3, 4, 0, "percentile"), (3, 4, 0, "bca"), (1, 3, 1, "percentile"), (1, 3, 1, "bca")],
)
def test_interval_has_its_exact_law_under_b_resamples(x, n, lam, interval):
    # 5 resamples of 4 or 5 texts: every outcome enumerated; 40,000 drawn intervals
    # against that law (chi-square, cells pooled below 5 expected). At 60%, 5 resamples
    # are the floor (each tail of 20% holds one); at 95% the floor is 40, too many to
    # enumerate.
    b, sets, level = 5, 40_000, 0.6
    law = _exact_interval_law(x + lam, n + 2 * lam, b, interval, level)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.DegenerateBootstrapWarning)
        ci = pc.bootstrap_ci(
            np.tile([x, n - x], (sets, 1)),
            "proportion",
            interval=interval,
            pseudo_count=lam,
            n_resamples=b,
            confidence_level=level,
            rng=11,
            nested=False,
        )
    assert ci.draws == "order_statistics" and ci.distribution is None
    keys = list(zip(np.round(ci.low, 10), np.round(ci.high, 10), strict=True))
    assert set(keys) <= set(law), set(keys) - set(law)
    outcomes = sorted(law)
    tally = Counter(keys)
    observed = np.array([tally[k] for k in outcomes], dtype=float)
    expected = np.array([law[k] for k in outcomes]) * sets
    keep = expected >= 5
    observed = np.r_[observed[keep], observed[~keep].sum()]
    expected = np.r_[expected[keep], expected[~keep].sum()]
    if expected[-1] < 5:
        observed, expected = observed[:-1], expected[:-1]
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-4


@pytest.mark.parametrize(
    ("x", "n", "lam", "interval"),
    [(26, 30, 0, "percentile"), (26, 30, 1, "bca"), (3, 40, 0, "bca"), (120, 200, 2, "percentile")],
)
def test_order_statistics_equal_every_resample_in_distribution(x, n, lam, interval):
    # the two paths of the public function on 4,000 data sets each: the ends' means and
    # SDs agree within Monte-Carlo error (4.5 SE), the BCa z0 likewise
    sets = 4_000
    counts = np.tile([x, n - x], (sets, 1))
    options = dict(interval=interval, pseudo_count=lam, n_resamples=400, nested=False)
    fast = pc.bootstrap_ci(counts, "proportion", rng=3, **options)
    slow = pc.bootstrap_ci(counts, "proportion", rng=4, draws="resamples", **options)
    assert fast.draws == "order_statistics" and slow.draws == "resamples"
    pairs = [(fast.low, slow.low), (fast.high, slow.high)]
    if interval == "bca":
        pairs.append((fast.bias_correction, slow.bias_correction))
    for a, b in pairs:
        se = np.sqrt(a.var() / sets + b.var() / sets)
        assert abs(a.mean() - b.mean()) <= 4.5 * se + 1e-12
        # the SD of a sample SD: about SD / sqrt(2 (K - 1)) each
        se_sd = np.sqrt((a.var() + b.var()) / (2 * (sets - 1)))
        assert abs(a.std() - b.std()) <= 4.5 * se_sd + 1e-12
    p = (x + lam) / (n + 2 * lam)
    assert fast.standard_error == pytest.approx(np.sqrt(p * (1 - p) / (n + 2 * lam)), rel=1e-12)
    assert np.all(fast.estimate == x / n)


def test_a_batch_equals_the_loop_of_single_calls():
    counts = np.array([[18, 2], [0, 0], [7, 13], [20, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batch = pc.bootstrap_ci(counts, "proportion", interval="bca", rng=5, nested=False)
    generators = pc.batch_generators(5, len(counts))
    for k, cells in enumerate(counts):
        if cells.sum() == 0:  # no texts: NaN in a batch, an error alone
            assert np.isnan(batch.low[k]) and np.isnan(batch.estimate[k])
            with pytest.raises(ValueError, match="at least one text"):
                pc.bootstrap_ci(cells, "proportion", rng=generators[k])
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pc.DegenerateBootstrapWarning)
            one = pc.bootstrap_ci(cells, "proportion", interval="bca", rng=generators[k])
        assert (one.low, one.high, one.bias_correction) == (
            batch.low[k],
            batch.high[k],
            pytest.approx(batch.bias_correction[k], nan_ok=True),
        )
        assert one.fallback_reason == (batch.fallback_reason[k] if batch.bca_fallback[k] else None)
    # every success: each replicate is 1, BCa falls back for a single value, as it does
    # when every resample is drawn
    assert batch.fallback_reason[3] == "the bootstrap distribution is a single value"


def test_draws_is_checked_and_other_metrics_draw_every_resample():
    with pytest.raises(ValueError, match="`draws`"):
        pc.bootstrap_ci([3, 7], "proportion", draws="exact")
    ci = pc.bootstrap_ci([3, 1, 2, 9], "recall", n_resamples=50, rng=1)
    assert ci.draws == "resamples" and ci.distribution.size == 50
    nested = pc.bootstrap_ci([[3, 1], [2, 5]], "proportion", scheme="cluster", rng=1)
    assert nested.draws == "resamples"
    exact = pc.bootstrap_ci([3, 7], "proportion", n_resamples="exact")
    assert exact.draws == "exact"
