import json

import matplotlib
import matplotlib.pyplot
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
    legend = ax.get_legend()
    # the legend's title names the dims, its entries only their values
    assert legend.get_title().get_text() == "icc, texts_per_person (metric_value = 0.9)"
    assert [t.get_text() for t in legend.get_texts()] == [
        "0.05, 10",
        "0.05, 50",
        "0.1, 10",
        "0.1, 50",
    ]
    matplotlib.pyplot.close(ax.figure)


def test_plot_target_line_and_crossings_are_the_plans():
    values = [0.7, 0.8, 0.9, 0.95]
    curves = pc.half_width_curves(np.arange(10, 201), values)
    ax = pc.plot_half_width_curves(curves, target=0.06)
    (target,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
    assert list(target.get_ydata()) == [0.06, 0.06]
    # the planner's answers (bisection, then a look 60 ahead); 0.7 needs more than 200
    plans = [pc.plan_sample_size(v, 0.06).relevant_n for v in values]
    assert plans[0] > 200 and all(p <= 200 for p in plans[1:])
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert [m.get_xdata()[0] for m in markers] == plans[1:]
    for marker, value in zip(markers, values[1:], strict=True):  # on its curve
        n = marker.get_xdata()[0]
        assert marker.get_ydata()[0] == curves.sel(n=n, metric_value=value).item() <= 0.06
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert texts == [
        "0.7: n > 200",
        *(f"{v:g}: n = {p}" for v, p in zip(values[1:], plans[1:], strict=True)),
    ]
    matplotlib.pyplot.close(ax.figure)


def test_plot_crossing_of_an_oscillating_curve_is_after_its_last_n_above():
    # the 90% lambda = 1 bootstrap oscillates: at 0.7 its curve dips below 0.06 and comes
    # back above; the planner's rule counts from the last n above, not the first below
    curves = pc.half_width_curves(
        np.arange(10, 400), [0.7], confidence_level=0.9, method="percentile", pseudo_count=1
    )
    ax = pc.plot_half_width_curves(curves, target=0.06)
    values = curves.sel(metric_value=0.7).values
    first_below = int(curves["n"][np.argmax(values <= 0.06)])
    plan = pc.plan_sample_size(0.7, 0.06, confidence_level=0.9, method="percentile", pseudo_count=1)
    (marker,) = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert marker.get_xdata()[0] == plan.relevant_n > first_below
    matplotlib.pyplot.close(ax.figure)


@pytest.mark.parametrize("target", [0, -0.1, "0.05", np.nan])
def test_plot_refuses_a_target_that_is_not_a_positive_number(target):
    curves = pc.half_width_curves([10, 20], [0.9])
    with pytest.raises(ValueError, match=r"^`target` must"):
        pc.plot_half_width_curves(curves, target=target)


def nested_plan_by_the_formula(p, target, icc, b, cv, level=0.95):
    """Persons for an Agresti-Coull half-width, written out with scipy (Dean-Pagano df).

    DEFF = 1 + icc ((1 + cv^2) B - 1) (Eldridge, Ashby and Kerry 2006), n_eff = m B / DEFF,
    n* = n_eff (z / t_{m-1})^2, and the Agresti-Coull half-width on (p n*, n*).
    """
    z = stats.norm.ppf(0.5 + level / 2)
    for m in range(2, 5000):
        deff = 1 + icc * ((1 + cv**2) * b - 1)
        n_star = m * b / deff * (z / stats.t.ppf(0.5 + level / 2, m - 1)) ** 2
        n_tilde = n_star + z**2
        p_tilde = (p * n_star + z**2 / 2) / n_tilde
        half = z * np.sqrt(p_tilde * (1 - p_tilde) / n_tilde)
        if half <= target:
            assert p_tilde + half <= 1 and p_tilde - half >= 0  # no clipping here
            return m, half
    raise AssertionError("no plan")


@pytest.mark.parametrize(
    ("p", "target", "icc", "b", "cv"),
    [(0.9, 0.05, 0.1, 10, 0.0), (0.9, 0.05, 0.1, 10, 1.3), (0.8, 0.04, 0.05, 6, 0.6)],
)
def test_nested_plan_with_unequal_cluster_sizes_follows_the_formula(p, target, icc, b, cv):
    plan = pc.plan_sample_size(p, target, icc=icc, texts_per_person=b, cluster_size_cv=cv)
    persons, half = nested_plan_by_the_formula(p, target, icc, b, cv)
    assert plan.persons == persons
    assert plan.half_width == pytest.approx(half, rel=1e-10)
    assert plan.relevant_n == int(np.ceil(persons * b))


def test_cluster_size_cv_zero_is_the_equal_size_plan():
    for kwargs in [
        {"icc": 0.1, "texts_per_person": 10},
        {"icc": 0.3, "texts_per_person": 2.5, "df_adjust": "korn_graubard"},
        {"icc": 0.0, "texts_per_person": 40, "df_adjust": None, "method": "wilson"},
    ]:
        assert pc.plan_sample_size(0.9, 0.05, **kwargs, cluster_size_cv=0) == (
            pc.plan_sample_size(0.9, 0.05, **kwargs)
        )
    # the curves through effective_sample_size's own Kish design effect, 1 + icc (B - 1)
    n, b = np.array([100, 400]), np.array([5.0, 10.0])
    curves = pc.half_width_curves(n, [0.9], icc=[0.1], texts_per_person=b, cluster_size_cv=0)
    n_star = pc.effective_sample_size(
        n[:, None], icc=0.1, mean_cluster_size=b[None, :], n_clusters=n[:, None] / b[None, :]
    )
    expected = pc.proportion_ci(0.9 * n_star, n_star).half_width
    np.testing.assert_array_equal(curves.sel(metric_value=0.9, icc=0.1).values, expected)


def test_curves_with_unequal_cluster_sizes():
    cv = 1.3
    curves = pc.half_width_curves(
        [400], [0.9], icc=[0.1], texts_per_person=[10, 50], cluster_size_cv=cv
    )
    assert curves.attrs["cluster_size_cv"] == cv
    for b in [10, 50]:
        deff = 1 + 0.1 * ((1 + cv**2) * b - 1)
        n_star = pc.effective_sample_size(400, design_effect=deff, n_clusters=400 / b)
        assert curves.sel(texts_per_person=b).item() == pytest.approx(
            pc.proportion_ci(0.9 * n_star, n_star).half_width, rel=1e-12
        )
    equal = pc.half_width_curves([400], [0.9], icc=[0.1], texts_per_person=[10, 50])
    assert np.all(curves.values > equal.values)  # unequal sizes: wider intervals


def test_the_logit_interval_can_be_planned():
    plan = pc.plan_sample_size(0.9, 0.05, method="logit")
    n = np.arange(plan.relevant_n - 1, plan.relevant_n + 60)
    hw = pc.expected_half_width("logit", n, 0.9)
    assert hw[0] > 0.05 and np.all(hw[1:] <= 0.05)
    nested = pc.plan_sample_size(0.9, 0.05, method="logit", icc=0.1, texts_per_person=10)
    curve = pc.half_width_curves(
        [nested.relevant_n - 10, nested.relevant_n],
        [0.9],
        method="logit",
        icc=[0.1],
        texts_per_person=[10],
    )
    assert curve.values[0].item() > 0.05 >= curve.values[1].item()


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
        ((0.9, 0.05), {"cluster_size_cv": 0.5}, "`cluster_size_cv` applies to nested designs"),
        (
            (0.9, 0.05),
            {"icc": 0.1, "texts_per_person": 5, "cluster_size_cv": -0.1},
            "`cluster_size_cv` must be a non-negative number",
        ),
        (
            (0.9, 0.05),
            {"icc": 0.1, "texts_per_person": 5, "cluster_size_cv": np.inf},
            "`cluster_size_cv` must be finite",
        ),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.plan_sample_size(*args, **kwargs)


def test_curves_bad_cluster_size_cv():
    with pytest.raises(ValueError, match="`cluster_size_cv` applies to nested designs"):
        pc.half_width_curves([100], [0.9], cluster_size_cv=1.0)
    with pytest.raises(ValueError, match="`cluster_size_cv` must be a non-negative number"):
        pc.half_width_curves([100], [0.9], icc=0.1, texts_per_person=5, cluster_size_cv=-1)


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


def _anova_icc_by_pandas(frame):
    """One-way ANOVA ICC of 0/1 outcomes by person, written out from its textbook formula.

    MSB = sum n_i (p_i - p)^2 / (m - 1), MSW = sum n_i p_i (1 - p_i) / (N - m),
    n0 = (N - sum n_i^2 / N) / (m - 1), rho = (MSB - MSW) / (MSB + (n0 - 1) MSW), at least 0.
    """
    by = frame.groupby("person")["y"].agg(["size", "mean"])
    n_i, p_i = by["size"].to_numpy(float), by["mean"].to_numpy()
    big_n, m = n_i.sum(), len(n_i)
    p = frame["y"].mean()
    msb = np.sum(n_i * (p_i - p) ** 2) / (m - 1)
    msw = np.sum(n_i * p_i * (1 - p_i)) / (big_n - m)
    n0 = (big_n - np.sum(n_i**2) / big_n) / (m - 1)
    return max(0.0, (msb - msw) / (msb + (n0 - 1) * msw))


@pytest.mark.parametrize(
    ("metric", "relevant", "success"),
    [
        ("recall", "human == 1", "model == 1"),
        ("precision", "model == 1", "human == 1"),
        ("specificity", "human == 0", "model == 0"),
        ("accuracy", "human == human", "human == model"),
    ],
)
def test_pilot_estimates_are_the_pilots_counts_icc_and_sizes(metric, relevant, success):
    texts = pc.load_example()
    pilot = pc.pilot_estimates(texts["human"], texts["model"], metric, groups=texts["person"])
    rel = texts.query(relevant).assign(y=lambda d: d.eval(success).astype(int))
    sizes = rel.groupby("person").size()  # persons with a relevant text only
    assert (pilot.successes, pilot.relevant_n, pilot.n_texts) == (
        rel["y"].sum(),
        len(rel),
        len(texts),
    )
    assert pilot.metric_value == pytest.approx(rel["y"].mean(), rel=1e-12)
    assert pilot.prevalence == pytest.approx(len(rel) / len(texts), rel=1e-12)
    assert pilot.persons == sizes.size
    assert pilot.texts_per_person == pytest.approx(sizes.mean(), rel=1e-12)
    assert pilot.cluster_size_cv == pytest.approx(sizes.std(ddof=0) / sizes.mean(), rel=1e-12)
    assert pilot.icc == pytest.approx(_anova_icc_by_pandas(rel), rel=1e-9, abs=1e-12)
    # and the plan is plan_sample_size of exactly these values
    assert pilot.plan(0.05) == pc.plan_sample_size(
        pilot.metric_value,
        0.05,
        prevalence=pilot.prevalence,
        icc=pilot.icc,
        texts_per_person=pilot.texts_per_person,
        cluster_size_cv=pilot.cluster_size_cv,
    )


def test_a_pilot_without_persons_plans_for_independent_texts_and_values_given_replace_its():
    texts = pc.load_example()
    pilot = pc.pilot_estimates(texts["human"], texts["model"], "recall")
    assert (pilot.persons, pilot.icc, pilot.texts_per_person, pilot.cluster_size_cv) == (
        None,
        None,
        None,
        None,
    )
    plan = pilot.plan(0.05, confidence_level=0.9, method="wilson")
    assert plan == pc.plan_sample_size(
        221 / 251, 0.05, confidence_level=0.9, method="wilson", prevalence=251 / 1069
    )
    assert pilot.plan(0.05, metric_value=0.8, prevalence=0.5) == pc.plan_sample_size(
        0.8, 0.05, prevalence=0.5
    )
    nested = pilot.plan(0.05, icc=0.1, texts_per_person=6)
    assert nested == pc.plan_sample_size(
        221 / 251, 0.05, icc=0.1, texts_per_person=6, prevalence=251 / 1069
    )
    assert json.loads(json.dumps(pilot.to_dict(), allow_nan=False))["metric"] == "recall"


def test_pilot_degenerate_cases_say_what_to_give():
    # every relevant text a success: no width to plan at
    perfect = pc.pilot_estimates([1, 1, 1, 0], [1, 1, 1, 1], "recall", groups=["a", "a", "b", "b"])
    assert perfect.metric_value == 1.0
    with pytest.raises(ValueError, match=r"recall is 1 \(3 of 3 relevant texts\).*`metric_value`"):
        perfect.plan(0.05)
    assert perfect.plan(0.05, metric_value=0.9).relevant_n > 0
    # no relevant text: the metric is undefined, with its warning
    with pytest.warns(pc.UndefinedMetricWarning, match="no reference positives"):
        empty = pc.pilot_estimates([0, 0, 0], [1, 0, 0], "recall")
    assert np.isnan(empty.metric_value) and empty.relevant_n == 0 and empty.prevalence == 0
    with pytest.raises(ValueError, match="no relevant texts for recall.*`metric_value` and"):
        empty.plan(0.05, metric_value=0.9)
    assert empty.plan(0.05, metric_value=0.9, prevalence=0.2) == pc.plan_sample_size(
        0.9, 0.05, prevalence=0.2
    )
    # one relevant text per person while outcomes vary: the ICC is not estimable
    with pytest.warns(pc.UndefinedMetricWarning, match="icc is undefined"):
        single = pc.pilot_estimates(
            [1, 0, 1, 0], [1, 0, 0, 1], "recall", groups=["a", "a", "b", "c"]
        )
    assert np.isnan(single.icc) and single.persons == 2 and single.texts_per_person == 1
    with pytest.raises(ValueError, match="ICC is not estimable.*give `icc`"):
        single.plan(0.05)
    assert single.plan(0.05, icc=0.1).persons > 0
    # three classes: a plan is for one binary metric
    with pytest.raises(ValueError, match="labels have 3 classes.*give `positive`"):
        pc.pilot_estimates(["a", "b", "c"], ["a", "c", "b"], "recall")
    assert (
        pc.pilot_estimates(["a", "b", "c"], ["a", "c", "b"], "recall", positive="a").successes == 1
    )
    with pytest.raises(ValueError, match="`metric` must be one of"):
        pc.pilot_estimates([1, 0], [1, 0], "f1")
