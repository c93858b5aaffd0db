"""Edge cases of counts: large counts, zero-width intervals, identical classifiers, priors."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import perfci as pc

BIG = 2**31


@pytest.mark.parametrize(
    ("cells", "pseudo_count"),
    [([BIG // 2, BIG - BIG // 2], 0), ([(BIG - 2) // 2, (BIG - 2) // 2], 2), ([BIG, BIG], 0)],
)
@pytest.mark.parametrize("kwargs", [{}, {"interval": "bca"}, {"draws": "resamples"}])
def test_proportion_beyond_int32_is_finite(cells, pseudo_count, kwargs):
    """F1: counts beyond int32 give a finite interval around 1/2, without NaN."""
    ci = pc.bootstrap_ci(
        cells, "proportion", n_resamples=100, rng=1, pseudo_count=pseudo_count, **kwargs
    )
    half_width = 3 * math.sqrt(0.25 / sum(cells))
    assert math.isfinite(ci.low) and math.isfinite(ci.high)
    assert 0.5 - 2 * half_width < ci.low < ci.high < 0.5 + 2 * half_width
    assert ci.n_invalid_resamples == 0


def test_proportion_below_int32_unchanged():
    """F1: the int32 range still takes SciPy's bdtr path (same numbers as before)."""
    ci = pc.bootstrap_ci([1000, 1000], "proportion", n_resamples=100, rng=1)
    assert (ci.low, ci.high) == pytest.approx((0.4817375, 0.5208125))


def test_zero_width_bootstrap_warns_and_returns_interval():
    """F2: every resample equal warns (DegenerateBootstrapWarning); the interval is kept."""
    with pytest.warns(pc.DegenerateBootstrapWarning, match="same value.*pseudo_count=1"):
        ci = pc.bootstrap_ci([50, 0, 0, 900], "f1", n_resamples=200, rng=1)
    assert (ci.low, ci.high) == (1.0, 1.0)


def test_zero_width_metric_ci_bootstrap_warns():
    """F2: metric_ci's bootstrap of a perfect classifier warns too."""
    y = np.array([0, 1] * 50)
    with pytest.warns(pc.DegenerateBootstrapWarning, match="zero width"):
        ci = pc.metric_ci(y, y, "f1", method="bootstrap", pseudo_count=0)
    assert (ci.low, ci.high) == (1.0, 1.0)


def test_zero_width_proportion_order_statistics_warns():
    """F2: the order-statistic path of a proportion warns as well."""
    with pytest.warns(pc.DegenerateBootstrapWarning, match="zero width"):
        ci = pc.bootstrap_ci([10, 0], "proportion", n_resamples=100, rng=1)
    assert ci.low == ci.high == 1.0


def test_positive_width_does_not_warn():
    """F2: an ordinary interval raises no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pc.bootstrap_ci([50, 10, 20, 900], "f1", n_resamples=200, rng=1)


def _pair():
    rng = np.random.default_rng(0)
    return rng.integers(0, 2, 100), rng.integers(0, 2, 100)


@pytest.mark.parametrize("method", ["recommended", "bootstrap", "cluster_robust"])
def test_identical_classifiers_give_nan_interval(method):
    """F3: identical classifiers: the interval is NaN, as the warning says, for every method."""
    y, p = _pair()
    kwargs = {} if method == "recommended" else {"method": method}
    with pytest.warns(pc.UndefinedMetricWarning, match="returning NaN"):
        result = pc.compare(y, p, p, "recall", **kwargs)
    assert result.difference == 0.0
    assert math.isnan(result.low) and math.isnan(result.high)


def test_compare_many_identical_classifiers_nan():
    """F3: compare_many of two identical classifiers reports NaN ends."""
    y, p = _pair()
    with pytest.warns(pc.UndefinedMetricWarning):
        table = pc.compare_many(y, {"a": p, "b": p}, "recall")
    assert np.isnan(table["low"].iloc[0]) and np.isnan(table["high"].iloc[0])


def test_different_classifiers_keep_bootstrap_interval():
    """F3: classifiers that differ keep a finite paired bootstrap interval."""
    y, p = _pair()
    q = p.copy()
    q[:20] = 1 - q[:20]
    result = pc.compare(y, p, q, "recall", method="bootstrap", rng=1)
    assert math.isfinite(result.low) and result.low < result.high


@pytest.mark.parametrize("pseudo_count", [10**6 + 1, 10**9, math.inf, math.nan])
def test_absurd_pseudo_count_refused(pseudo_count):
    """F4: a non-finite or above-10**6 pseudo count raises, naming the argument."""
    with pytest.raises(ValueError, match="pseudo_count"):
        pc.bootstrap_ci([50, 10, 20, 900], "recall", pseudo_count=pseudo_count)


def test_dominant_pseudo_count_warns():
    """F4: a prior of more texts than the data warns; the interval is returned."""
    with pytest.warns(pc.DegenerateBootstrapWarning, match="prior dominates"):
        ci = pc.bootstrap_ci([50, 10, 20, 900], "recall", pseudo_count=1000, rng=1)
    assert math.isfinite(ci.low)


def test_small_pseudo_count_does_not_warn():
    """F4: the recommended pseudo count on ordinary data raises no warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pc.bootstrap_ci([50, 10, 20, 900], "recall", pseudo_count=1, rng=1)


# --------------------------------------------------------------- held-out probe, round 2


def test_too_few_defined_resamples_give_nan_and_say_how_many():
    # 40 resamples are the minimum at 95%, but recall is undefined in 3 of them here:
    # the 37 left cannot hold both tails, so the interval is NaN, warned with the counts.
    with pytest.warns(pc.UndefinedMetricWarning, match="needs 40 resamples.*only 37 of 40"):
        ci = pc.bootstrap_ci([1, 0, 1, 5], "recall", n_resamples=40, rng=0)
    assert np.isnan(ci.low) and np.isnan(ci.high) and ci.estimate == 0.5
    with pytest.warns(pc.UndefinedMetricWarning, match="in 1 of 2 data sets"):
        batch = pc.bootstrap_ci(
            [[1, 0, 1, 5], [5, 1, 1, 5]], "recall", n_resamples=40, rng=0, nested=False
        )
    assert np.isnan(batch.low[0]) and not np.isnan(batch.low[1])


def test_trials_beyond_the_exact_intervals_digits_are_refused():
    # Clopper-Pearson and Jeffreys had NaN ends at 1e17 trials, silently
    with pytest.raises(ValueError, match="`n` must be at most 1e\\+15"):
        pc.proportion_ci(10**16, 10**17, method="clopper_pearson")
    assert np.isfinite(pc.proportion_ci(10**14, 10**15, method="clopper_pearson").low)


def test_a_float_nan_among_text_labels_is_a_missing_value_not_the_label_nan():
    with pytest.raises(ValueError, match="`y_true` contains missing values.*1 of 4"):
        pc.metric_ci(["a", np.nan, "b", "a"], ["a", "a", "b", "b"], "recall", positive="a")


def test_the_jackknife_of_two_persons_does_not_warn_of_a_delong_interval():
    rng = np.random.default_rng(0)
    y, s = np.array([1, 0] * 10), rng.random(20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all: the interval has width
        ci = pc.auc_ci(y, s, groups=np.repeat([0, 1], 10), method="jackknife")
    assert ci.high > ci.low


@pytest.mark.parametrize("method", ["delong", "bootstrap"])
def test_scores_in_the_same_order_have_no_auc_difference_interval(method):
    rng = np.random.default_rng(0)
    y, s = np.array([1, 0] * 10), rng.random(20)
    with pytest.warns(pc.UndefinedMetricWarning, match="order every positive and negative"):
        result = pc.compare_auc(y, s, s**2, method=method, rng=1)
    assert np.isnan(result.low) and np.isnan(result.high) and result.p_value == 1.0


def test_figure_labels_from_data_are_literal_text():
    # control and bidi characters shown as escapes, a `$` a dollar (no mathtext, which
    # failed with an empty message on `$\frac{a$`), in the forest's rows and axis label
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from perfci import plotting

    names = ["T01\x1b[31m\u202e\u200b", "$\\frac{a$", "$x^2$"]
    ax = plotting.forest(
        [0.5, 0.6, 0.7],
        [0.4, 0.5, 0.6],
        [0.6, 0.7, 0.8],
        labels=names,
        xlabel="recall of $x$",
        sort=False,
    )
    with plotting.style():
        ax.figure.canvas.draw()  # mathtext would be parsed here; not in perfci's style
    shown = [t.get_text() for t in ax.get_yticklabels()]
    assert "T01\\x1b[31m\\u202e\\u200b" in shown and "$\\frac{a$" in shown
    assert ax.get_xlabel() == "recall of $x$"
    assert not any(t._text.startswith("\\") for t in ax.get_yticklabels())
    plt.close(ax.figure)


def test_no_figure_parses_mathtext():
    from perfci import plotting

    assert plotting.RC["text.parse_math"] is False


def test_weights_alone_give_no_finite_population_correction_whatever_their_scale():
    # Weights without corpus sizes: the strata's relative sizes, no finite population
    # correction (as the label says). Weights of 1 made the sample "the corpus" (a
    # zero-width interval), 1.5 narrowed it, 0.5 named `stratum_sizes`, 1e16 failed with
    # "n < 0": now every constant weight gives the same interval, and totals beyond 1e15
    # texts are refused naming `weights`.
    texts = pc.load_example()
    y, p = texts["human"], texts["model"]
    n = len(texts)
    ends = set()
    for w in (1.0, 1.5, 0.5, 10.0):
        ci = pc.metric_ci(y, p, "recall", weights=np.full(n, w), rng=1)
        assert "no finite population correction" in ci.method and ci.low < ci.high
        ends.add((round(ci.low, 12), round(ci.high, 12)))  # scaled sizes: rounding only
    assert len(ends) == 1
    with pytest.raises(ValueError, match="`weights` must add up to at most 1e\\+15"):
        pc.metric_ci(y, p, "recall", weights=np.full(n, 1e16))


def test_an_infinite_corpus_of_one_stratum_is_the_beta_posterior_of_its_shares():
    # finite=False: recall of one stratum with every cell possible is
    # pi_tp / (pi_tp + pi_fn) of Dirichlet(n + 1/2) shares, i.e. Beta(tp + 1/2, fn + 1/2)
    # (the Dirichlet's aggregation property); quantiles within Monte-Carlo error
    from scipy import stats

    from perfci.bayes import stratified_posterior

    cells = [[40, 7, 9, 144]]
    post = stratified_posterior(cells, [3.0], "recall", draws=200_000, rng=2, finite=False)
    low, high = stats.beta.ppf([0.025, 0.975], 40.5, 9.5)
    assert post.low == pytest.approx(low, abs=0.003) and post.high == pytest.approx(high, abs=0.003)
    with pytest.raises(ValueError, match="relative sizes with `finite` False"):
        stratified_posterior(cells, [-1.0], "recall", finite=False)


def test_pandas_arguments_with_different_indexes_are_refused_not_paired_by_position():
    # a shuffled Series gave recall 0.243 instead of 0.880, silently
    texts = pc.load_example()
    shuffled = texts.sample(frac=1, random_state=1)
    calls = {
        "y_pred": lambda: pc.metric_ci(texts["human"], shuffled["model"], "recall"),
        "groups": lambda: pc.metric_ci(
            texts["human"], texts["model"], "recall", groups=shuffled["person"]
        ),
        "pred_b": lambda: pc.compare(texts["human"], texts["model"], shuffled["model"], "recall"),
    }
    for name, call in calls.items():
        with pytest.raises(ValueError, match=f"`{name}` is a pandas object whose index is not"):
            call()
    # aligned pandas objects, and arrays, are taken as given
    assert pc.metric_ci(shuffled["human"], shuffled["model"], "recall").estimate == (
        pc.metric_ci(texts["human"].to_numpy(), texts["model"].to_numpy(), "recall").estimate
    )


def test_booleans_inside_a_list_are_not_read_as_ones():
    """Round 5: NumPy reads [True, 20] as [1, 20]; a bare True was refused, one in a list
    was silently a 1 (an exact coverage at n = 1, an interval of 1 success)."""
    with pytest.raises(ValueError, match=r"`n` must be real numbers, not booleans"):
        pc.exact_coverage("wald", [True, 20], 0.5)
    with pytest.raises(ValueError, match=r"`x` must be real numbers, not booleans"):
        pc.proportion_ci([True, 3], [10, 10])
    with pytest.raises(ValueError, match=r"not booleans"):
        pc.half_width_curves([[10, True]], 0.9)
    assert pc.proportion_ci([1, 3], [10, 10]).low.shape == (2,)  # numbers still pass


def test_a_zero_width_interval_of_a_level_near_zero_does_not_claim_equal_resamples():
    """Round 5: at a level of 1e-9 the two order statistics read are equal; the warning
    said every resample gave the same value, which was false."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ci = pc.bootstrap_ci([40, 6, 9, 345], "f1", confidence_level=1e-9, rng=1)
    assert ci.low == ci.high and ci.standard_error > 0
    with pytest.warns(pc.DegenerateBootstrapWarning, match="every resample gave the same"):
        pc.bootstrap_ci([40, 0, 0, 0], "precision", rng=1)
