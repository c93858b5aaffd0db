import numpy as np
import pytest
from scipy import special, stats
from statsmodels.stats.proportion import proportion_confint

import perfci as pc

PAPER_P = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
PAPER_N = np.arange(10, 251)
PAPER_REPLICATIONS = 1000  # the paper's section 3 simulations: 1,000 samples per cell


def brute_force(n, p, level, sm_method):
    """Coverage and expected half-width from statsmodels intervals, summed in a loop."""
    coverage = half_width = 0.0
    for x in range(n + 1):
        low, high = proportion_confint(x, n, alpha=1 - level, method=sm_method)
        weight = stats.binom.pmf(x, n, p)
        coverage += weight * (low <= p <= high)
        half_width += weight * (high - low) / 2
    return coverage, half_width


@pytest.mark.parametrize(
    ("method", "sm_method"),
    [
        ("wald", "normal"),
        ("wilson", "wilson"),
        ("agresti_coull", "agresti_coull"),
        ("clopper_pearson", "beta"),
    ],
)
def test_matches_enumeration_over_statsmodels_intervals(method, sm_method):
    cases = [(10, 0.95, 0.95), (23, 0.7, 0.9), (57, 0.81, 0.95), (120, 0.5, 0.8), (1, 0.3, 0.95)]
    n, p, level = (np.array(c) for c in zip(*cases, strict=True))
    got = pc.operating_characteristics(method, n, p, confidence_level=level)
    for i, (ni, pi, li) in enumerate(cases):
        cov, hw = brute_force(ni, pi, li, sm_method)
        assert got.coverage[i] == pytest.approx(cov, abs=1e-12)
        assert got.expected_half_width[i] == pytest.approx(hw, abs=1e-12)


def test_probabilities_add_up_and_shapes_broadcast():
    oc = pc.operating_characteristics(
        "wilson", PAPER_N[:, None], PAPER_P, confidence_level=[[0.9], [0.95]][0]
    )
    assert oc.coverage.shape == (PAPER_N.size, len(PAPER_P))
    np.testing.assert_allclose(oc.coverage + oc.miss_low + oc.miss_high, 1.0, atol=1e-12)


def test_vectorized_equals_scalar_calls():
    n = np.array([[5, 40], [90, 250]])
    p = np.array([[0.9, 0.5], [0.95, 0.8]])
    grid = pc.exact_coverage("jeffreys", n, p, confidence_level=0.9)
    for idx in np.ndindex(n.shape):
        assert grid[idx] == pc.exact_coverage("jeffreys", n[idx], p[idx], confidence_level=0.9)


def test_chunked_enumeration_equals_single_pass(monkeypatch):
    from perfci import exact

    n, p = PAPER_N[:, None], PAPER_P
    whole = pc.exact_coverage("wilson", n, p)
    monkeypatch.setattr(exact, "_MAX_ROWS", 1000)
    np.testing.assert_array_equal(pc.exact_coverage("wilson", n, p), whole)


@pytest.mark.parametrize("method", ["wald", "wilson", "clopper_pearson", "logit", "percentile"])
def test_truncated_enumeration_equals_the_full_one(method, monkeypatch):
    from perfci import exact

    n = np.arange(1, 401)[:, None]  # the supports are cut from n = 11 to 54 on, by p
    p = np.array([0.0, 1e-4, 0.03, 0.5, 0.9, 0.97, 1.0])
    level = np.array([0.8, 0.95, 0.99, 0.95, 0.95, 0.9, 0.95])
    truncated = pc.operating_characteristics(method, n, p, confidence_level=level)
    monkeypatch.setattr(exact, "TAIL_MASS", 0.0)  # every x = 0..n
    full = pc.operating_characteristics(method, n, p, confidence_level=level)
    for field in ("coverage", "miss_low", "miss_high", "expected_half_width"):
        np.testing.assert_allclose(
            getattr(truncated, field), getattr(full, field), rtol=0, atol=1e-12
        )


def test_support_leaves_out_less_than_the_tail_mass_and_is_tight():
    from perfci import exact

    n = np.array([1, 7, 40, 300, 10_000, 10_000, 10**6, 10**6, 10**6, 25, 25])
    p = np.array([0.5, 0.9, 0.02, 0.95, 0.9, 0.5, 0.5, 1e-7, 1 - 1e-7, 0.0, 1.0])
    first, last = exact._support(n, p)
    # Reference: scipy.stats.binom's cdf and sf, the mass below `first` and above `last`
    assert np.all(stats.binom.cdf(first - 1, n, p) <= exact.TAIL_MASS)
    assert np.all(stats.binom.sf(last, n, p) <= exact.TAIL_MASS)
    assert np.all((0 <= first) & (first <= np.floor(n * p)) & (np.ceil(n * p) <= last))
    assert np.all(last <= n)
    # no wider than the Chernoff ends, about 8.6 standard deviations, need (+2 counts)
    sd = np.sqrt(n * p * (1 - p))
    wide = sd > 3
    assert np.all(last[wide] - first[wide] <= 2 * 8.7 * sd[wide] + 2)
    # where even the last count carries more than the tail mass, nothing is cut
    np.testing.assert_array_equal(first[:2], 0)
    np.testing.assert_array_equal(last[:2], n[:2])


def test_merged_ranges_are_the_union_of_each_groups_ranges(rng):
    from perfci import exact

    group = rng.integers(0, 6, size=200)
    lo = rng.integers(0, 500, size=200)
    hi = lo + rng.integers(0, 40, size=200)
    seg_group, seg_lo, seg_hi, segment_of = exact._merged_ranges(group, lo, hi)
    for g in range(6):
        ranges = zip(lo[group == g], hi[group == g], strict=True)
        wanted = set().union(*(range(a, b + 1) for a, b in ranges))
        segments = zip(seg_group, seg_lo, seg_hi, strict=True)
        mine = [(a, b) for sg, a, b in segments if sg == g]
        covered = [x for a, b in mine for x in range(a, b + 1)]
        assert sorted(covered) == sorted(wanted)  # the union, each x once
    assert np.all(seg_group[segment_of] == group)
    assert np.all((seg_lo[segment_of] <= lo) & (hi <= seg_hi[segment_of]))


def test_large_n_matches_a_direct_sum_over_every_x():
    # Reference: proportion_ci's own intervals for every x = 0..n and
    # scipy.stats.binom.pmf, summed directly (no truncation). perfci's probabilities
    # are exp(log n! - log x! - log (n - x)! + ...), whose logs carry a rounding error
    # of about 2 log(n!) times the machine epsilon (1.8e-11 at n = 10,000): the
    # tolerance is twice that.
    for method, n, p in [("wilson", 10_000, 0.9), ("agresti_coull", 4321, 0.999)]:
        tol = 4 * special.gammaln(n + 1.0) * np.finfo(float).eps
        x = np.arange(n + 1)
        ci = pc.proportion_ci(x, n, method=method)
        pmf = stats.binom.pmf(x, n, p)
        cover = pmf[(ci.low <= p) & (p <= ci.high)].sum()
        assert pc.exact_coverage(method, n, p) == pytest.approx(cover, abs=tol)
        half = np.sum(pmf * (ci.high - ci.low) / 2)
        assert pc.expected_half_width(method, n, p) == pytest.approx(half, abs=tol)


def mc_tolerance(coverage, replications=PAPER_REPLICATIONS, k=3.0):
    """k Monte-Carlo standard errors of a coverage estimated from `replications` samples."""
    return k * np.sqrt(coverage * (1 - coverage) / replications)


# The paper's section 6 and appendix A cite coverages estimated from 1,000 simulated
# samples: Wald at p = 0.95 was 0.401 for n = 10 and 0.66 for n = 20; Wilson reached its
# lowest, 0.89, at n = 11 and p = 0.95. Exact values must lie within three Monte-Carlo
# standard errors of those estimates.
@pytest.mark.parametrize(
    ("method", "n", "paper"),
    [("wald", 10, 0.401), ("wald", 20, 0.66), ("wilson", 11, 0.89)],
)
def test_paper_cited_coverages_at_p_095(method, n, paper):
    exact = pc.exact_coverage(method, n, 0.95)
    assert abs(exact - paper) <= mc_tolerance(exact)


def test_wilson_minimum_over_paper_grid_is_at_n11_p095():
    grid = pc.exact_coverage("wilson", PAPER_N[:, None], PAPER_P)
    i, j = np.unravel_index(grid.argmin(), grid.shape)
    assert (PAPER_N[i], PAPER_P[j]) == (11, 0.95)


def test_paper_appendix_a_claims():
    grid = {m: pc.exact_coverage(m, PAPER_N[:, None], PAPER_P) for m in pc.ANALYTIC_METHODS}
    # Clopper-Pearson is exact: never below the nominal level.
    assert grid["clopper_pearson"].min() >= 0.95
    # Agresti-Coull "never reaching below 0.925" (a simulated minimum): within MC error.
    assert grid["agresti_coull"].min() >= 0.925 - mc_tolerance(0.925)
    # Wald "at higher proportions and sample sizes below 50, coverage is often below 0.9
    # with some coverage rates reaching 0.6 and below" (section 3.1).
    wald_small_high = grid["wald"][PAPER_N < 50][:, 4:]
    assert np.median(wald_small_high) < 0.9
    assert wald_small_high.min() <= 0.6


def test_monte_carlo_agrees_with_exact(rng):
    # Independent check by simulation, judged by a two-sided binomial test.
    n, p, reps = 37, 0.9, 20_000
    x = rng.binomial(n, p, size=reps)
    ci = pc.proportion_ci(x, n, method="agresti_coull")
    hits = int(np.sum((ci.low <= p) & (p <= ci.high)))
    exact = pc.exact_coverage("agresti_coull", n, p)
    assert stats.binomtest(hits, reps, exact).pvalue > 1e-3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0, "p": 0.5}, "`n` must be positive integers"),
        ({"n": 10.5, "p": 0.5}, "`n` must be positive integers"),
        ({"n": 10, "p": 1.5}, r"`p` must lie in \[0, 1\]"),
        ({"n": 10, "p": np.nan}, "`p` must be finite"),
        ({"n": 10, "p": 0.5, "confidence_level": 95}, "`confidence_level`"),
        ({"n": 10, "p": 0.5, "method": "bca"}, "`method` must be one of"),
    ],
)
def test_bad_input(kwargs, match):
    kwargs.setdefault("method", "wilson")
    with pytest.raises(ValueError, match=match):
        pc.exact_coverage(**kwargs)


@pytest.mark.parametrize("method", ["clopper_pearson", "jeffreys"])
def test_coverage_through_the_inverted_tests_equals_the_enumeration_of_the_intervals(method):
    # exact_coverage of the exact intervals needs no beta quantile (the binomial tests
    # they invert); it must equal the coverage of the intervals themselves, term by term
    rng = np.random.default_rng(3)
    n = np.concatenate([rng.integers(1, 300, 2000), [1, 2, 5, 1000]])
    p = np.concatenate([rng.uniform(0, 1, 2000), [0.5, 1e-6, 1 - 1e-9, 0.999]])
    level = np.concatenate([rng.uniform(0.5, 0.999, 2000), [0.95, 0.9, 0.99, 0.8]])
    dual = pc.exact_coverage(method, n, p, confidence_level=level)
    full = pc.operating_characteristics(method, n, p, confidence_level=level)
    np.testing.assert_allclose(dual, full.coverage, rtol=0, atol=1e-14)
    # and a direct sum over x with statsmodels' intervals on a few elements
    name = {"clopper_pearson": "beta", "jeffreys": "jeffreys"}[method]
    for k in range(0, 2000, 400):
        x = np.arange(n[k] + 1)
        lo, hi = proportion_confint(x, n[k], alpha=1 - level[k], method=name)
        ref = np.sum(stats.binom.pmf(x, n[k], p[k]) * ((lo <= p[k]) & (p[k] <= hi)))
        assert dual[k] == pytest.approx(ref, abs=1e-10)
