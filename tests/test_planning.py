import matplotlib
import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

import perfci as pc
from perfci.bootstrap import exact_percentile_bounds

matplotlib.use("Agg")

PAPER_REPLICATIONS, PAPER_RESAMPLES = 1000, 2000


def mc_se_of_mean_half_width(n, p, level, lam):
    """Monte-Carlo SE of a mean half-width estimated from 1,000 simulated samples.

    Between-sample SD of the exact bootstrap half-width over x ~ Binomial(n, p), plus the
    resampling noise of each interval end (2,000 resamples: about 2.69 SE / sqrt(B) for a
    2.5% quantile of a near-normal statistic).
    """
    x = np.arange(n + 1)
    low, high = exact_percentile_bounds(x, np.full(n + 1, n), np.full(n + 1, level), lam)
    hw = (high - low) / 2
    w = stats.binom.pmf(x, n, p)
    sd_between = np.sqrt(np.sum(w * (hw - np.sum(w * hw)) ** 2))
    sd_resampling = 2.69 * np.sqrt(p * (1 - p) / n) / np.sqrt(PAPER_RESAMPLES)
    return np.hypot(sd_between, sd_resampling) / np.sqrt(PAPER_REPLICATIONS)


# The paper's section 3.3 / Table 3: a 90% pseudo-count (lambda = 1) bootstrap interval no
# wider than 0.05 on either side needs 99 positive cases at recall 0.90 and 170 at 0.80
# (simulated: 1,000 samples, 2,000 resamples). perfci's exact answer must be one the
# paper's simulation could have produced: the exact expected half-width at the paper's n
# is within 3 Monte-Carlo SE below 0.05, and at n - 1 within 3 SE above.
@pytest.mark.parametrize(("p", "paper_n"), [(0.9, 99), (0.8, 170)])
def test_paper_table_3(p, paper_n):
    plan = pc.plan_sample_size(p, 0.05, confidence_level=0.9, method="percentile", pseudo_count=1)
    hw_paper = pc.expected_half_width(
        "pseudo_percentile_1", [paper_n - 1, paper_n], p, confidence_level=0.9
    )
    se = mc_se_of_mean_half_width(paper_n, p, 0.9, 1)
    assert hw_paper[1] <= 0.05 + 3 * se
    assert hw_paper[0] >= 0.05 - 3 * se
    assert abs(plan.relevant_n - paper_n) <= 3
    assert plan.half_width <= 0.05
    assert (
        pc.expected_half_width("pseudo_percentile_1", plan.relevant_n - 1, p, confidence_level=0.9)
        > 0.05
    )


def test_total_texts_from_prevalence():
    # "If only a quarter of the texts are labelled by humans as positive, then the
    # validation data would need to be 396 texts" (99 / 0.25).
    plan = pc.plan_sample_size(
        0.9, 0.05, confidence_level=0.9, method="percentile", pseudo_count=1, prevalence=0.25
    )
    assert plan.total_texts == int(np.ceil(plan.relevant_n / 0.25))
    assert plan.design == "independent" and plan.persons is None


def test_plan_is_the_first_n_that_stays_within_the_target():
    for method in ["wilson", "clopper_pearson", "agresti_coull"]:
        plan = pc.plan_sample_size(0.85, 0.04, method=method)
        n = np.arange(plan.relevant_n - 1, plan.relevant_n + 60)
        hw = pc.expected_half_width(method, n, 0.85)
        assert hw[0] > 0.04 and np.all(hw[1:] <= 0.04)


# The paper's figure 7 (section 5.3): ICC 0.1, 400 texts, metric 0.90, the n_eff & df
# adjusted 95% Agresti-Coull half-width is 0.043 with 10 texts per person and 0.093 with 50.
def test_paper_figure_7_curves():
    curves = pc.half_width_curves([400], [0.9], icc=[0.1], texts_per_person=[10, 50])
    assert curves.sel(texts_per_person=10).item() == pytest.approx(0.043, abs=5e-4)
    assert curves.sel(texts_per_person=50).item() == pytest.approx(0.093, abs=5e-4)


def test_nested_plan_matches_the_curve():
    plan = pc.plan_sample_size(0.9, 0.043, icc=0.1, texts_per_person=10)
    # 400 texts in 40 persons reach 0.0428 <= 0.043; 39 persons do not.
    assert (plan.persons, plan.relevant_n) == (40, 400)
    curve = pc.half_width_curves([390, 400], [0.9], icc=[0.1], texts_per_person=[10])
    assert curve.sel(n=390).item() > 0.043 >= curve.sel(n=400).item()
    assert plan.design == "nested"


def test_independent_curves_are_exact_expected_half_widths():
    curves = pc.half_width_curves([30, 60], [0.9, 0.95], method="wilson")
    assert curves.dims == ("n", "metric_value")
    assert curves.sel(n=60, metric_value=0.95).item() == pc.expected_half_width("wilson", 60, 0.95)


def test_plot():
    ax = pc.plot_half_width_curves(
        pc.half_width_curves(
            np.arange(20, 401, 20), [0.9], icc=[0.05, 0.1], texts_per_person=[10, 50]
        )
    )
    assert len(ax.lines) == 4


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        ((1.2, 0.05), {}, "`metric_value` must lie strictly between 0 and 1"),
        ((0.9, 0.0), {}, "`half_width` must lie strictly between 0 and 0.5"),
        ((0.9, 0.05), {"method": "bca"}, "`method` must be one of"),
        ((0.9, 0.05), {"pseudo_count": 1}, "`pseudo_count` applies to method='percentile'"),
        ((0.9, 0.05), {"icc": 0.1}, "needs both `icc` and `texts_per_person`"),
        ((0.9, 0.05), {"prevalence": 0}, "`prevalence` must lie in"),
        ((0.9, 0.05), {"confidence_level": 2}, "`confidence_level`"),
        ((0.9, 1e-7), {}, "needs more than"),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.plan_sample_size(*args, **kwargs)


def test_a_wald_plan_made_small_by_zero_width_intervals_is_refused():
    # Wald's interval at x = n is [1, 1]: at p = 0.95 one text "plans" a half-width of 0
    # (the exact expected half-width of n = 1 is 0.95 * 0 + 0.05 * 0 = 0).
    assert pc.expected_half_width("wald", 1, 0.95) == 0
    with pytest.raises(ValueError, match=r"`method` 'wald' cannot plan .* zero width in 100%"):
        pc.plan_sample_size(0.95, 0.1, method="wald")
    # where zero-width samples are rare the Wald plan stands, and it meets its target by
    # statsmodels' Wald interval enumerated over x = 0..n
    plan = pc.plan_sample_size(0.95, 0.02, method="wald")
    n = plan.relevant_n
    assert 0.95**n < 0.025
    x = np.arange(n + 1)
    low, high = proportion_confint(x, n, alpha=0.05, method="normal")
    half = np.clip(high, 0, 1) / 2 - np.clip(low, 0, 1) / 2
    assert np.sum(stats.binom.pmf(x, n, 0.95) * half) <= 0.02
    # a sound method plans at the same value without complaint
    assert pc.plan_sample_size(0.95, 0.1, method="wilson").half_width <= 0.1
