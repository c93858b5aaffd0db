import dataclasses

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import perfci as pc

# perfci method -> statsmodels.stats.proportion.proportion_confint method
STATSMODELS_NAMES = {
    "wald": "normal",
    "wilson": "wilson",
    "agresti_coull": "agresti_coull",
    "clopper_pearson": "beta",
    "jeffreys": "jeffreys",
}


@pytest.fixture
def random_grid(rng):
    n = rng.integers(1, 400, size=3000)
    x = rng.integers(0, n + 1)
    level = rng.uniform(0.5, 0.999, size=n.size)
    # make sure the boundaries x = 0 and x = n are well represented
    x[:300] = 0
    x[300:600] = n[300:600]
    return x, n, level


@pytest.mark.parametrize("method", sorted(STATSMODELS_NAMES))
def test_agrees_with_statsmodels(method, random_grid):
    x, n, level = random_grid
    ci = pc.proportion_ci(x, n, method=method, confidence_level=level)
    # Reference: statsmodels.stats.proportion.proportion_confint(x, n, alpha=1 - level,
    # method=...), elementwise (it does not broadcast alpha).
    ref = np.array(
        [
            proportion_confint(xi, ni, alpha=1 - li, method=STATSMODELS_NAMES[method])
            for xi, ni, li in zip(x, n, level, strict=True)
        ]
    )
    if method == "jeffreys":
        # statsmodels omits the Brown-Cai-DasGupta boundary rule (low 0 at x = 0,
        # high 1 at x = n); compare those ends separately below.
        ref[x == 0, 0] = 0.0
        ref[x == n, 1] = 1.0
    np.testing.assert_allclose(ci.low, ref[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(ci.high, ref[:, 1], rtol=0, atol=1e-10)


def test_plus4_is_wald_on_two_added_successes_and_failures(random_grid):
    x, n, level = random_grid
    ci = pc.proportion_ci(x, n, method="agresti_coull_plus4", confidence_level=level)
    # Agresti & Coull (1998): the "add two successes and two failures" interval is the
    # Wald interval of (x + 2) / (n + 4); statsmodels' "normal" on the augmented counts.
    ref = np.array(
        [
            proportion_confint(xi + 2, ni + 4, alpha=1 - li, method="normal")
            for xi, ni, li in zip(x, n, level, strict=True)
        ]
    )
    np.testing.assert_allclose(ci.low, ref[:, 0], atol=1e-10)
    np.testing.assert_allclose(ci.high, ref[:, 1], atol=1e-10)


def test_jeffreys_boundaries():
    ci = pc.proportion_ci([0, 10], 10, method="jeffreys", confidence_level=0.9)
    assert ci.low[0] == 0.0 and ci.high[1] == 1.0
    # the other end stays the equal-tailed beta quantile of Beta(x + 1/2, n - x + 1/2)
    assert ci.high[0] == pytest.approx(stats.beta.ppf(0.95, 0.5, 10.5), abs=1e-12)
    assert ci.low[1] == pytest.approx(stats.beta.ppf(0.05, 10.5, 0.5), abs=1e-12)


# The paper, section 2.1 (printed to three decimals, so the tolerance is 5e-4):
# 300 cases of 2000 texts, Wald [0.134, 0.166]; recall 264 of 300, Wald [0.843, 0.917]
# and Wilson [0.838, 0.912]; recall 0.88 on 30 positives, Wald [0.763, 0.996] and
# Wilson [0.719, 0.955] (0.88 * 30 = 26.4 successes: a non-integer x). The paper's
# 0.763 is 0.76372 truncated, not rounded (z = 1.96 gives 0.76371 too), so that one end
# is checked to 1e-3.
@pytest.mark.parametrize(
    ("x", "n", "method", "low", "high", "tol"),
    [
        (300, 2000, "wald", 0.134, 0.166, 5e-4),
        (264, 300, "wald", 0.843, 0.917, 5e-4),
        (264, 300, "wilson", 0.838, 0.912, 5e-4),
        (0.88 * 30, 30, "wald", 0.763, 0.996, 1e-3),
        (0.88 * 30, 30, "wilson", 0.719, 0.955, 5e-4),
    ],
)
def test_paper_section_2_1_examples(x, n, method, low, high, tol):
    ci = pc.proportion_ci(x, n, method=method)
    assert ci.low == pytest.approx(low, abs=tol)
    assert ci.high == pytest.approx(high, abs=5e-4)
    assert ci.estimate == pytest.approx(x / n)


def test_non_integer_x_uses_beta_quantiles_with_real_parameters():
    x, n = 12.3, 17.8
    ci = pc.proportion_ci(x, n, method="clopper_pearson", confidence_level=0.9)
    assert ci.low == pytest.approx(stats.beta.ppf(0.05, x, n - x + 1), abs=1e-12)
    assert ci.high == pytest.approx(stats.beta.ppf(0.95, x + 1, n - x), abs=1e-12)


@pytest.mark.parametrize("method", pc.ANALYTIC_METHODS)
def test_vectorized_equals_scalar_loop(method, rng):
    x = rng.integers(0, 50, size=(4, 5)).astype(float)
    n = x + rng.integers(0, 50, size=(4, 5)) + 1
    level = np.array([0.8, 0.9, 0.95, 0.99, 0.999])
    ci = pc.proportion_ci(x, n, method=method, confidence_level=level)
    assert ci.low.shape == (4, 5)
    for i in range(4):
        for j in range(5):
            one = pc.proportion_ci(x[i, j], n[i, j], method=method, confidence_level=level[j])
            assert one.low == ci.low[i, j] and one.high == ci.high[i, j]
            assert np.ndim(one.low) == 0


def _scipy_reference(method, x, n, level):
    """Interval ends from scipy.stats, elementwise in x, n and the level (no perfci code).

    z = scipy.stats.norm.ppf(1 - (1 - level) / 2); beta quantiles scipy.stats.beta.ppf;
    the formulas as the docstring of proportion_ci writes them.
    """
    z = stats.norm.ppf(1 - (1 - level) / 2)
    tail = (1 - level) / 2
    p = x / n
    if method == "wald":
        half = z * np.sqrt(p * (1 - p) / n)
        return np.clip(p - half, 0, 1), np.clip(p + half, 0, 1)
    if method == "wilson":
        center = (x + z**2 / 2) / (n + z**2)
        half = z / (n + z**2) * np.sqrt(n * p * (1 - p) + z**2 / 4)
        return np.where(x == 0, 0, center - half), np.where(x == n, 1, center + half)
    if method == "agresti_coull":
        n_tilde = n + z**2
        p_tilde = (x + z**2 / 2) / n_tilde
        half = z * np.sqrt(p_tilde * (1 - p_tilde) / n_tilde)
        return np.clip(p_tilde - half, 0, 1), np.clip(p_tilde + half, 0, 1)
    if method == "clopper_pearson":
        with np.errstate(invalid="ignore"):
            low = stats.beta.ppf(tail, x, n - x + 1)
            high = stats.beta.ppf(1 - tail, x + 1, n - x)
        return np.where(x == 0, 0, low), np.where(x == n, 1, high)
    assert method == "jeffreys"
    low = stats.beta.ppf(tail, x + 0.5, n - x + 0.5)
    high = stats.beta.ppf(1 - tail, x + 0.5, n - x + 0.5)
    return np.where(x == 0, 0, low), np.where(x == n, 1, high)


@pytest.mark.parametrize("method", sorted(STATSMODELS_NAMES))
def test_levels_that_vary_per_element_get_their_own_quantiles(method, rng):
    # more elements than one block (perfci._core.blocks.BLOCK = 16384), each with its
    # own level, against scipy.stats quantiles computed per element
    n = rng.integers(1, 500, size=20_000).astype(float)
    x = np.floor(n * rng.uniform(size=n.size))
    x[:500], x[500:1000] = 0, n[500:1000]
    level = rng.uniform(0.5, 0.999, size=n.size)
    ci = pc.proportion_ci(x, n, method=method, confidence_level=level)
    low, high = _scipy_reference(method, x, n, level)
    np.testing.assert_allclose(ci.low, low, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ci.high, high, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ci.confidence_level, level)


@pytest.mark.parametrize("method", pc.ANALYTIC_METHODS)
def test_blocks_and_broadcast_levels_give_the_whole_array_values(method, rng, monkeypatch):
    from perfci._core import blocks

    x = rng.integers(0, 60, size=(300, 4)).astype(float)
    n = x + rng.integers(0, 60, size=(300, 4)) + 1
    x[0], x[1] = 0, n[1]
    level = np.array([0.8, 0.9, 0.95, 0.999])  # broadcast along the last axis
    cases = [(x, n, level), (x, n, 0.95), (x, n, np.full(x.shape, 0.95)), (x[:, :1], 90.0, level)]
    whole = [pc.proportion_ci(a, b, method=method, confidence_level=c) for a, b, c in cases]
    monkeypatch.setattr(blocks, "BLOCK", 37)
    for (a, b, c), expected in zip(cases, whole, strict=True):
        got = pc.proportion_ci(a, b, method=method, confidence_level=c)
        for field in ("estimate", "low", "high", "clipped", "confidence_level"):
            np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))
    # a level array holding one value is that level: the same numbers as the scalar
    np.testing.assert_array_equal(whole[2].low, whole[1].low)
    np.testing.assert_array_equal(whole[2].high, whole[1].high)


def test_result_holds_read_only_views_of_float_inputs():
    x, n = np.array([3.0, 5.0]), np.array([10.0, 10.0])
    ci = pc.proportion_ci(x, n, method="wilson")
    assert np.shares_memory(ci.successes, x) and not ci.successes.flags.writeable
    assert not ci.trials.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        ci.successes[0] = 4.0
    assert x.flags.writeable and x[0] == 3.0  # the caller's array is untouched


def test_clipping_is_flagged_only_where_the_formula_leaves_the_unit_interval():
    wald = pc.proportion_ci(29, 30, method="wald")
    assert wald.high == 1.0 and wald.clipped
    assert not pc.proportion_ci(15, 30, method="wald").clipped
    ac = pc.proportion_ci(0, 5, method="agresti_coull")
    assert ac.low == 0.0 and ac.clipped
    wilson = pc.proportion_ci([0, 5], 5, method="wilson")
    assert not wilson.clipped.any()
    assert wilson.low[0] == 0.0 and wilson.high[1] == 1.0


@pytest.mark.parametrize("method", pc.ANALYTIC_METHODS)
def test_bounds_ordered_and_contain_nothing_outside_unit_interval(method, random_grid):
    x, n, level = random_grid
    ci = pc.proportion_ci(x, n, method=method, confidence_level=level)
    assert np.all((0 <= ci.low) & (ci.low <= ci.high) & (ci.high <= 1))


def test_result_is_frozen_and_has_half_width():
    ci = pc.proportion_ci(8, 10, method="wilson")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ci.low = 0.0
    assert ci.half_width == pytest.approx((ci.high - ci.low) / 2)
    assert "wilson" in repr(ci)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"x": 11, "n": 10}, "`x` must not exceed `n`"),
        ({"x": 0, "n": 0}, "`n` must be positive"),
        ({"x": -1, "n": 10}, "`x` must be non-negative"),
        ({"x": np.nan, "n": 10}, "`x` must be finite"),
        ({"x": 1, "n": np.inf}, "`n` must be finite"),
        ({"x": "a", "n": 10}, "`x` must be real numbers"),
        ({"x": 1, "n": 10, "confidence_level": 1.0}, "`confidence_level` must lie strictly"),
        ({"x": 1, "n": 10, "confidence_level": 0}, "`confidence_level` must lie strictly"),
        ({"x": 1, "n": 10, "method": "exact"}, r"`method` must be one of \['agresti_coull'"),
        ({"x": [1, 2], "n": [3, 4, 5]}, "must broadcast"),
    ],
)
def test_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.proportion_ci(**kwargs)


# ------------------------------------------------------------------- the logit interval
# R's binom package (1.1-1, R/binom.confint.R, method "logit", which binom.logit calls):
#   inner <- !x1 & !x2                                  # x1: x == 0, x2: x == n
#   logit.p[inner] <- log(p[inner]) - log1p(-p[inner])
#   sd[inner] <- sqrt(var.logit(p[inner], n[inner]))   # var.logit = 1/n/p/(1 - p)
#   .lcl <- exp(logit.p[inner] - z[inner] * sd[inner]); lcl[inner] <- .lcl/(1 + .lcl)
#   .ucl <- exp(logit.p[inner] + z[inner] * sd[inner]); ucl[inner] <- .ucl/(1 + .ucl)
#   lcl[x1] <- 0; ucl[x1] <- 1 - alpha2[x1]^(1/n[x1])
#   lcl[x2] <- alpha2[x2]^(1/n[x2]); ucl[x2] <- 1
# The references below are that recipe written out with scipy, one element at a time.


def logit_reference(x, n, level):
    alpha2 = (1 - level) / 2
    if x == 0:
        return 0.0, 1 - alpha2 ** (1 / n)
    if x == n:
        return alpha2 ** (1 / n), 1.0
    p = x / n
    z = stats.norm.ppf(1 - alpha2)
    sd = np.sqrt(1 / n / p / (1 - p))
    lcl = np.exp(np.log(p) - np.log1p(-p) - z * sd)
    ucl = np.exp(np.log(p) - np.log1p(-p) + z * sd)
    return lcl / (1 + lcl), ucl / (1 + ucl)


def test_logit_follows_r_binom(random_grid):
    x, n, level = random_grid
    ci = pc.proportion_ci(x, n, method="logit", confidence_level=level)
    ref = np.array([logit_reference(*a) for a in zip(x, n, level, strict=True)])
    np.testing.assert_allclose(ci.low, ref[:, 0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ci.high, ref[:, 1], rtol=1e-12, atol=1e-15)
    assert not np.any(ci.clipped)


def test_logit_at_the_boundaries_is_clopper_pearson():
    n = np.array([1, 5, 30, 1000])
    for level in [0.8, 0.95, 0.999]:
        zero = pc.proportion_ci(0, n, method="logit", confidence_level=level)
        full = pc.proportion_ci(n, n, method="logit", confidence_level=level)
        tail = (1 - level) / 2
        # Clopper-Pearson: high at x = 0 is the 1 - tail quantile of Beta(1, n), low at
        # x = n the tail quantile of Beta(n, 1)
        np.testing.assert_array_equal(zero.low, 0.0)
        np.testing.assert_allclose(zero.high, stats.beta.ppf(1 - tail, 1, n), rtol=1e-12)
        np.testing.assert_allclose(full.low, stats.beta.ppf(tail, n, 1), rtol=1e-12)
        np.testing.assert_array_equal(full.high, 1.0)


def test_logit_with_effective_counts_and_extreme_inputs():
    # non-integer x and n (an effective sample size), and tiny n p (1 - p), where exp
    # would overflow: the ends stay finite, ordered and inside [0, 1]
    ci = pc.proportion_ci(26.4, 30, method="logit")
    assert (ci.low, ci.high) == pytest.approx(logit_reference(26.4, 30, 0.95), rel=1e-12)
    with np.errstate(divide="raise", over="raise", invalid="raise"):
        tiny = pc.proportion_ci([1e-300, 0.5, 2.5], [1e-3, 1.0, 2.5], method="logit")
    assert np.all((0 <= tiny.low) & (tiny.low <= tiny.estimate) & (tiny.high <= 1))
    assert tiny.high[2] == 1.0 and tiny.low[2] == pytest.approx(0.025 ** (1 / 2.5))


def test_logit_exact_coverage_equals_a_direct_binomial_sum():
    for n, p in [(10, 0.9), (37, 0.5), (120, 0.97)]:
        x = np.arange(n + 1)
        bounds = np.array([logit_reference(k, n, 0.95) for k in x])
        inside = (bounds[:, 0] <= p) & (p <= bounds[:, 1])
        expected = stats.binom.pmf(x, n, p)[inside].sum()
        assert pc.exact_coverage("logit", n, p) == pytest.approx(expected, abs=1e-12)
        half = (stats.binom.pmf(x, n, p) * (bounds[:, 1] - bounds[:, 0]) / 2).sum()
        assert pc.expected_half_width("logit", n, p) == pytest.approx(half, abs=1e-12)
