import warnings

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

import perfci as pc
from perfci.comparison import newcombe_paired_interval


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def test_newcombe_reproduces_fagerland_lydersen_laake():
    # Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8,
    # complete response before and after consolidation therapy (Cavo et al., 2012):
    # n = matrix(c(59, 6, 16, 80), 2, byrow = TRUE) gives "estimate = -0.0621 (95% CI
    # -0.1186 to -0.0046)" for Newcombe_square_and_add_CI_paired_2x2(n) in the R package
    # contingencytables (its tests, tests/testthat/test-ch8.R, pin these digits).
    low, high = newcombe_paired_interval(59, 6, 16, 80)
    assert low == pytest.approx(-0.1186, abs=5e-5)
    assert high == pytest.approx(-0.0046, abs=5e-5)


@pytest.mark.parametrize("metric", ["accuracy", "recall", "specificity"])
def test_mcnemar_exact_matches_statsmodels(texts, metric):
    result = pc.compare(texts["human"], texts["model"], texts["model_b"], metric, rng=1)
    only_a, only_b = result.discordant
    # statsmodels: mcnemar([[both, only_a], [only_b, neither]], exact=True) uses only the
    # discordant cells
    ref = mcnemar([[0, only_a], [only_b, 0]], exact=True).pvalue
    assert result.mcnemar_pvalue == pytest.approx(ref, rel=1e-12)
    assert result.newcombe_low < result.difference < result.newcombe_high


def test_paired_bootstrap_variance_of_an_accuracy_difference(texts):
    # For iid resampling the replicate difference is (b* - c*) / n with (b*, c*) from a
    # multinomial: its variance is exactly [(b + c)/n - ((b - c)/n)^2] / n.
    reps = 20_000
    result = pc.compare(
        texts["human"], texts["model"], texts["model_b"], "accuracy", n_resamples=reps, rng=2
    )
    t, a, b = (texts[c].to_numpy() for c in ["human", "model", "model_b"])
    only_a = np.sum((a == t) & (b != t))
    only_b = np.sum((a != t) & (b == t))
    n = t.size
    expected = np.sqrt(((only_a + only_b) / n - ((only_a - only_b) / n) ** 2) / n)
    assert result.difference == pytest.approx((only_a - only_b) / n)
    # relative SE of a sample SD from B draws is about 1 / sqrt(2 B); allow 4 of them
    assert result.bootstrap.standard_error == pytest.approx(expected, rel=4 / np.sqrt(2 * reps))


def test_swapping_classifiers_negates_the_difference(texts):
    ab = pc.compare(
        texts["human"], texts["model"], texts["model_b"], "recall", rng=3, n_resamples=20_000
    )
    ba = pc.compare(
        texts["human"], texts["model_b"], texts["model"], "recall", rng=4, n_resamples=20_000
    )
    assert ba.difference == -ab.difference
    assert (ba.newcombe_low, ba.newcombe_high) == pytest.approx(
        (-ab.newcombe_high, -ab.newcombe_low)
    )
    # Monte-Carlo ends: 2.69 SE / sqrt(B) per end (see test_bootstrap), 4 SD of the gap
    tol = 4 * np.sqrt(2) * 2.69 * ab.bootstrap.standard_error / np.sqrt(20_000)
    assert ba.low == pytest.approx(-ab.high, abs=tol)
    assert ba.high == pytest.approx(-ab.low, abs=tol)


def test_nested_comparison_resamples_persons(texts):
    result = pc.compare(
        texts["human"],
        texts["model"],
        texts["model_b"],
        "precision",
        groups=texts["person"],
        method="bootstrap",
        rng=1,
    )
    assert result.persons == texts["person"].nunique()
    assert "scheme=hierarchical" in result.method or "scheme=cluster" in result.method
    assert np.isnan(result.newcombe_low) and np.isnan(result.mcnemar_pvalue)
    plain = pc.compare(texts["human"], texts["model"], texts["model_b"], "precision", rng=1)
    assert result.difference == plain.difference
    assert result.high - result.low > plain.high - plain.low  # persons add uncertainty


def test_string_labels_and_positive():
    t = ["yes", "no", "yes", "yes", "no", "no"]
    a = ["yes", "no", "no", "yes", "no", "yes"]
    b = ["yes", "yes", "no", "no", "no", "no"]
    result = pc.compare(t, a, b, "accuracy", positive="yes", n_resamples=200, rng=1)
    assert result.estimate_a == pytest.approx(4 / 6) and result.estimate_b == pytest.approx(3 / 6)
    assert result.disagreement == pytest.approx(3 / 6)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([1, 0, 1], [1, 0], [1, 0, 1], "recall"), {}, "`pred_a` must have one label per text"),
        (([1, 0, 1], [1, 0, 1], [1, 0, 1], "macro_f1"), {}, "`metric` must be one of"),
        (
            (["a", "b", "c"], ["a", "b", "c"], ["a", "b", "c"], "recall"),
            {"positive": "a"},
            "`y_true` must be binary labels",
        ),
        ((["x", "y"], ["x", "y"], ["x", "y"], "recall"), {}, "`positive` must name"),
        (([1, 0], [1, 0], [1, 0], "recall"), {"positive": 7}, "`positive` label 7 is not"),
        (([1, 0], [1, 0], [1, 0], "recall"), {"scheme": "cluster"}, "needs `groups`"),
        (([1, 0], [1, 0], [1, 0], "recall"), {"n_resamples": 0}, "`n_resamples` must be"),
        (([1, 0], [1, 0], [1, 0], "recall"), {"groups": [1, None]}, "`groups` contains missing"),
        (([1, 0], [1, 0], [1, 0], "recall"), {"method": "robust"}, "`method` must be one of"),
        (
            ([1, 0], [1, 0], [1, 0], "f1"),
            {"method": "newcombe"},
            "`method` 'newcombe' is an interval for a difference of paired proportions",
        ),
        (
            ([1, 0, 1, 1], [1, 0, 0, 1], [1, 1, 1, 1], "recall"),
            {"groups": [1, 1, 2, 2], "scheme": "cluster"},
            r"`scheme` is an option of the paired bootstrap, but this comparison uses "
            r"'newcombe' \(the recommended method\)",
        ),
        (
            ([1, 0], [1, 0], [1, 0], "recall"),
            {"method": "cluster_robust", "n_resamples": 500},
            "`n_resamples` is an option of the paired bootstrap",
        ),
        (
            ([1, 0, 1], [1, 0, 1], [0, 0, 1], "recall"),
            {"groups": ["p", "p", "p"], "method": "cluster_robust"},
            r"`groups` must give at least 2 persons with texts for method 'cluster_robust'",
        ),
        (
            ([1, 0, 1], [1, 0, 1], [0, 0, 1], "accuracy"),
            {"groups": ["p", "p", "p"], "method": "newcombe"},
            r"`groups` must give at least 2 persons with texts for method 'newcombe'",
        ),
        (
            ([1], [1], [0], "accuracy"),
            {"method": "cluster_robust"},
            r"`y_true` must hold at least 2 texts for method 'cluster_robust'",
        ),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.compare(*args, **kwargs)


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical", None])
def test_one_person_is_refused_for_the_cluster_schemes(scheme):
    y, a, b = [1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0]
    with pytest.raises(ValueError, match=r"^`groups` must give at least 2 persons"):
        pc.compare(y, a, b, "f1", groups=["p"] * 6, method="bootstrap", scheme=scheme, rng=1)
    # the iid bootstrap treats the texts as independent; the clustered fields need persons
    with pytest.warns(pc.UndefinedMetricWarning, match="fewer than 2 persons with texts"):
        ci = pc.compare(y, a, b, "f1", groups=["p"] * 6, method="bootstrap", scheme="iid", rng=1)
    assert ci.low < ci.high
    assert np.isnan(ci.robust_low) and np.isnan(ci.p_value) and ci.df == 0


# ------------------------------------------------------------ clustered comparisons


def _texts_from_tables(rows, negatives=2):
    """Labels for recall from per-person paired tables (both, only_a, only_b, neither).

    Every text listed is a reference positive; each person also gets `negatives` reference
    negatives on which A and B disagree (irrelevant to recall).
    """
    t, a, b, g = [], [], [], []
    right = [(1, 1), (1, 0), (0, 1), (0, 0)]  # (A, B) on a positive: both, only A, ...
    for person, counts in enumerate(rows):
        for n, (ra, rb) in zip(counts, right, strict=True):
            t += [1] * n
            a += [ra] * n
            b += [rb] * n
            g += [person] * n
        t += [0] * negatives
        a += [1, 0] * (negatives // 2)
        b += [0, 1] * (negatives // 2)
        g += [person] * negatives
    return np.array(t), np.array(a), np.array(b), np.array(g)


def test_recommended_method_is_the_bootstrap_alone_and_by_relevant_texts_nested(texts):
    h, a, b, g = texts["human"], texts["model"], texts["model_b"], texts["person"]
    plain = pc.compare(h, a, b, "f1", rng=1)
    assert plain.method.startswith("paired bootstrap (scheme=iid")
    assert (plain.low, plain.high) == (plain.bootstrap.low, plain.bootstrap.high)
    # below 10 relevant texts per person (F1: 7.3): the cluster-robust interval
    nested = pc.compare(h, a, b, "f1", groups=g)
    assert nested.method.startswith("cluster-robust linearization (persons as clusters")
    assert (nested.low, nested.high) == (nested.robust_low, nested.robust_high)
    assert nested.bootstrap is None  # not computed for another method
    # below 10 for a paired proportion (recall: 6.4): Newcombe's on the effective size
    recall = pc.compare(h, a, b, "recall", groups=g)
    assert recall.method.startswith("Newcombe paired score interval on the effective")
    assert (recall.low, recall.high) == (recall.newcombe_low, recall.newcombe_high)
    assert recall.bootstrap is None
    chosen = pc.compare(h, a, b, "recall", groups=g, method="newcombe")
    assert (chosen.low, chosen.high) == (recall.low, recall.high)
    # from 10 (accuracy: 26.7, kappa: 26.7): the paired bootstrap, hierarchical
    for metric in ("accuracy", "kappa"):
        many = pc.compare(h, a, b, metric, groups=g, rng=1)
        assert many.method.startswith("paired bootstrap (scheme=hierarchical"), metric
        assert (many.low, many.high) == (many.bootstrap.low, many.bootstrap.high)
    boot = pc.compare(h, a, b, "f1", groups=g, method="bootstrap", rng=1)
    assert boot.method.startswith("paired bootstrap (scheme=hierarchical")
    # the other fields do not depend on the method
    for field in ("robust_low", "robust_high", "robust_se", "df", "p_value", "test"):
        assert getattr(boot, field) == getattr(nested, field), field


def test_recommended_nested_method_switches_at_ten_relevant_texts_per_person():
    # 10 persons, 8 reference positives each, and 2 negatives that one of A and B calls
    # positive: 8 relevant texts per person for recall, 10 for F1 (tp + fp + fn of either)
    rows = [(5, 2, 0, 1), (4, 1, 1, 2), (6, 0, 1, 1), (3, 2, 1, 2), (5, 1, 0, 2)] * 2
    t, a, b, g = _texts_from_tables(rows)
    assert pc.compare(t, a, b, "recall", groups=g).method.startswith("Newcombe")
    at_ten = pc.compare(t, a, b, "f1", groups=g, rng=1)
    assert at_ten.method.startswith("paired bootstrap (scheme=hierarchical")
    # the same texts of fewer than 10 persons: the cluster-robust interval
    first = g < 5
    few = pc.compare(t[first], a[first], b[first], "f1", groups=g[first])
    assert few.method.startswith("cluster-robust")
    # each person split in two: 5 relevant texts per person for F1
    halves = g * 2 + np.arange(g.size) % 2
    assert pc.compare(t, a, b, "f1", groups=halves).method.startswith("cluster-robust")
    # a batch on both sides of 10 has no one recommended method
    batch_t, batch_a, batch_b = (np.stack([x, x]) for x in (t, a, b))
    both = np.stack([g, halves])
    with pytest.raises(ValueError, match=r"the recommended `method` differs between the data"):
        pc.compare(batch_t, batch_a, batch_b, "f1", groups=both, rng=1)
    given = pc.compare(batch_t, batch_a, batch_b, "f1", groups=both, method="cluster_robust")
    assert np.isfinite(given.low).all()
    # recall is below 10 in both: one recommendation for the batch
    assert pc.compare(batch_t, batch_a, batch_b, "recall", groups=both).method.startswith(
        "Newcombe"
    )


def test_cluster_robust_recall_difference_equals_statsmodels_cluster_ols(texts):
    # The recall difference is the mean over reference positives of
    # d_j = 1[A right] - 1[B right]; its cluster-robust variance is that of OLS on a
    # constant with clusters = persons. statsmodels 0.15.0:
    #   pos = texts[texts.human == 1]
    #   d = pos.model - pos.model_b; g = pd.factorize(pos.person)[0]
    #   fit = sm.OLS(d, np.ones((251, 1))).fit(cov_type="cluster",
    #                                         cov_kwds={"groups": g}, use_t=True)
    #   fit.params[0], fit.bse[0]   -> 0.03585657370517928, 0.013765510170476808
    #   fit.conf_int()              -> [[0.00798976, 0.06372339]] (t on G - 1 = 38 df)
    # Its small-sample factor with one regressor is G/(G-1) (N-1)/(N-K) = G/(G-1) with
    # G = 39 persons holding a reference positive (one of the 40 has none):
    #   fit(..., cov_kwds={"groups": g, "use_correction": False}).bse[0]
    #                               -> 0.013587883242662604, and (bse / that)^2 = 39/38.
    # perfci counts every person with a text, m = 40 (the person without a positive has
    # influence 0: domain estimation), so its variance is m/(m-1) times the uncorrected
    # one, and its t has m - 1 = 39 df.
    import pandas as pd
    import statsmodels.api as sm
    from scipy import stats

    result = pc.compare(
        texts["human"],
        texts["model"],
        texts["model_b"],
        "recall",
        groups=texts["person"],
        method="cluster_robust",
    )
    pos = texts[texts["human"] == 1]
    d = (pos["model"] - pos["model_b"]).to_numpy(float)
    g = pd.factorize(pos["person"])[0]
    ones = np.ones((d.size, 1))
    fit = sm.OLS(d, ones).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)
    raw = sm.OLS(d, ones).fit(
        cov_type="cluster", cov_kwds={"groups": g, "use_correction": False}, use_t=True
    )
    big_g = np.unique(g).size  # persons with a reference positive: the clusters
    assert (big_g, texts["person"].nunique(), result.persons) == (39, 40, 40)
    assert (fit.bse[0] / raw.bse[0]) ** 2 == pytest.approx(big_g / (big_g - 1), rel=1e-12)
    assert fit.params[0] == pytest.approx(0.03585657370517928, rel=1e-12)
    assert fit.bse[0] == pytest.approx(0.013765510170476808, rel=1e-12)
    assert result.difference == pytest.approx(fit.params[0], rel=1e-12)
    assert result.robust_se == pytest.approx(fit.bse[0], rel=1e-12)
    # t on the effective number of persons - 1, from the positives per person
    w = np.bincount(g).astype(float)
    effective = w.sum() ** 2 / (w * w).sum()
    assert result.df == pytest.approx(effective - 1, rel=1e-12)
    half = stats.t.ppf(0.975, effective - 1) * result.robust_se
    assert (result.robust_low, result.robust_high) == pytest.approx(
        (result.difference - half, result.difference + half), rel=1e-12
    )
    # with every person holding a relevant text the two conventions coincide: accuracy
    d_all = (texts["model"] == texts["human"]).astype(float) - (
        texts["model_b"] == texts["human"]
    ).astype(float)
    g_all = pd.factorize(texts["person"])[0]
    fit_all = sm.OLS(d_all.to_numpy(), np.ones((d_all.size, 1))).fit(
        cov_type="cluster", cov_kwds={"groups": g_all}, use_t=True
    )
    acc = pc.compare(
        texts["human"],
        texts["model"],
        texts["model_b"],
        "accuracy",
        groups=texts["person"],
        method="cluster_robust",
    )
    assert acc.robust_se == pytest.approx(fit_all.bse[0], rel=1e-12)
    # statsmodels' interval has t on G - 1 df; ours on the effective number of persons
    # G* - 1 (texts per person w_i): the same centre and se, a t quantile of fewer df
    w_all = np.bincount(g_all).astype(float)
    df_all = w_all.sum() ** 2 / (w_all * w_all).sum() - 1
    low, high = fit_all.conf_int()[0]
    widen = stats.t.ppf(0.975, df_all) / stats.t.ppf(0.975, np.unique(g_all).size - 1)
    centre = (low + high) / 2
    assert (acc.robust_low, acc.robust_high) == pytest.approx(
        (centre - widen * (centre - low), centre + widen * (high - centre)), rel=1e-12
    )
    assert acc.low == acc.robust_low  # the chosen method


def test_cluster_robust_f1_difference_equals_the_textbook_ratio_linearization(texts):
    # F1 = Y / X with y_i = 2 tp_i and x_i = 2 tp_i + fp_i + fn_i per person; the
    # linearized influence of person i on F1 is (y_i - F x_i) / X, and on the difference
    # the same for A minus the same for B; var = m/(m-1) sum_i u_i^2 over the m persons
    # with a relevant text (for either classifier), t on G* - 1 df with G* the effective
    # number of those persons, (sum w_i)^2 / sum w_i^2, w_i their relevant texts.
    from scipy import stats

    h = texts["human"].to_numpy()
    influences = []
    for pred in ("model", "model_b"):
        p = texts[pred].to_numpy()
        frame = texts.assign(tp=(h == 1) & (p == 1), fp=(h == 0) & (p == 1), fn=(h == 1) & (p == 0))
        per = frame.groupby("person")[["tp", "fp", "fn"]].sum()
        y, x = 2 * per["tp"], 2 * per["tp"] + per["fp"] + per["fn"]
        f = y.sum() / x.sum()
        influences.append(((y - f * x) / x.sum(), f))
    (u_a, f_a), (u_b, f_b) = influences
    u = (u_a - u_b).to_numpy()
    either = (h == 1) | (texts["model"].to_numpy() == 1) | (texts["model_b"].to_numpy() == 1)
    w = texts.assign(r=either).groupby("person")["r"].sum().to_numpy(float)
    m = np.count_nonzero(w)
    df = w.sum() ** 2 / (w * w).sum() - 1
    se = np.sqrt(m / (m - 1) * np.sum(u**2))
    half = stats.t.ppf(0.975, df) * se
    result = pc.compare(
        h, texts["model"], texts["model_b"], "f1", groups=texts["person"], method="cluster_robust"
    )
    assert result.difference == pytest.approx(f_a - f_b, rel=1e-12)
    assert result.robust_se == pytest.approx(se, rel=1e-10)
    assert (result.low, result.high) == pytest.approx((f_a - f_b - half, f_a - f_b + half))
    p = 2 * stats.t.sf(abs(f_a - f_b) / se, df)
    assert result.test == "cluster-robust t (effective persons - 1 df)"
    assert result.p_value == pytest.approx(p, rel=1e-9)


def test_cluster_robust_without_groups_is_the_multinomial_variance(texts):
    # Each text its own cluster: for accuracy, d = (b - c)/N and sum_j u_j^2 is the
    # multinomial variance ((b + c) - (b - c)^2/N)/N^2, times N/(N - 1).
    result = pc.compare(texts["human"], texts["model"], texts["model_b"], "accuracy", rng=1)
    b, c = result.discordant
    n = result.n_texts
    var = ((b + c) - (b - c) ** 2 / n) / n**2 * n / (n - 1)
    assert result.robust_se == pytest.approx(np.sqrt(var), rel=1e-12)
    assert result.df == n - 1
    # one text a person is the same as no persons
    persons = np.arange(n)
    nested = pc.compare(texts["human"], texts["model"], texts["model_b"], "kappa", groups=persons)
    plain = pc.compare(
        texts["human"], texts["model"], texts["model_b"], "kappa", method="cluster_robust"
    )
    for field in ("robust_low", "robust_high", "robust_se", "df", "p_value"):
        assert getattr(nested, field) == pytest.approx(getattr(plain, field), rel=1e-12)


def test_nested_newcombe_is_newcombe_on_the_effective_table(texts):
    # DEFF = cluster-robust var(d) / multinomial var(d); n* = (N / DEFF) (z / t_{m-1})^2;
    # Newcombe's interval of the table scaled by n* / N.
    from scipy import stats

    h, a, b, g = texts["human"], texts["model"], texts["model_b"], texts["person"]
    result = pc.compare(h, a, b, "specificity", groups=g, method="newcombe")
    neg = h == 0
    right_a, right_b = (a == 0)[neg], (b == 0)[neg]
    table = np.array(
        [
            np.sum(right_a & right_b),
            np.sum(right_a & ~right_b),
            np.sum(~right_a & right_b),
            np.sum(~right_a & ~right_b),
        ],
        dtype=float,
    )
    n, only_a, only_b = table.sum(), table[1], table[2]
    iid = ((only_a + only_b) - (only_a - only_b) ** 2 / n) / n**2
    deff = result.robust_se**2 / iid
    m = g.nunique()
    n_star = n / deff * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, m - 1)) ** 2
    low, high = newcombe_paired_interval(*(table * n_star / n))
    assert result.design_effect == pytest.approx(deff, rel=1e-12)
    assert (result.newcombe_low, result.newcombe_high) == pytest.approx((low, high), rel=1e-12)
    plain = pc.compare(h, a, b, "specificity", method="newcombe")
    assert plain.newcombe_low == pytest.approx(newcombe_paired_interval(*table)[0])
    assert result.design_effect > 1 and result.newcombe_low < plain.newcombe_low


@pytest.mark.filterwarnings("ignore:the recall difference. the comparison rests on")
def test_durkalski_statistic_on_a_hand_table():
    # persons' discordant reference positives (b_i, c_i): (3, 1), (2, 0), (0, 1), (4, 2),
    # (1, 1): sum (b_i - c_i) = 5, sum (b_i - c_i)^2 = 4 + 4 + 1 + 4 + 0 = 13, so
    # X^2 = 25 / 13 = 1.923077 and p = P(chi2_1 > 25/13) = erfc(5 / sqrt(26)) = 0.1655179.
    rows = [(2, 3, 1, 0), (1, 2, 0, 1), (3, 0, 1, 0), (0, 4, 2, 1), (2, 1, 1, 0)]
    t, a, b, g = _texts_from_tables(rows)
    result = pc.compare(t, a, b, "recall", groups=g)
    assert result.test == "Durkalski clustered McNemar"
    assert result.p_value == pytest.approx(0.16551785869747, rel=1e-12)
    assert result.discordant == (10, 5)
    assert np.isnan(result.mcnemar_pvalue)  # the exact test is for independent texts
    plain = pc.compare(t, a, b, "recall", rng=1)
    # exact McNemar of 10 against 5: 2 P(Bin(15, 1/2) <= 5) = 2 * 4944 / 32768
    assert plain.test == "exact McNemar" and plain.p_value == plain.mcnemar_pvalue
    assert plain.p_value == pytest.approx(2 * 4944 / 2**15, rel=1e-12)


@pytest.mark.parametrize("metric", ["recall", "accuracy", "f1", "mcc"])
@pytest.mark.parametrize("own_groups", [False, True])
def test_clustered_fields_batched_equal_a_loop_of_single_calls(metric, own_groups):
    rng = np.random.default_rng(8)
    shape = (2, 3, 60)
    truth = rng.integers(0, 2, size=shape)
    a = np.where(rng.random(shape) < 0.85, truth, 1 - truth)
    b = np.where(rng.random(shape) < 0.8, truth, 1 - truth)
    if own_groups:  # each data set its own persons (the batch pads the others with zeros)
        person = rng.integers(0, 15, size=shape) + 100 * np.arange(6).reshape(2, 3, 1)
    else:
        person = np.repeat(np.arange(12), 5)
    fields = ["low", "high", "robust_low", "robust_high", "robust_se", "p_value"]
    fields += ["newcombe_low", "newcombe_high", "design_effect", "df", "persons"]
    for groups in (person, None):
        if groups is None and own_groups:
            continue
        batched = pc.compare(truth, a, b, metric, groups=groups, method="cluster_robust")
        for index in np.ndindex(*shape[:-1]):
            g = None if groups is None else (groups[index] if own_groups else groups)
            single = pc.compare(
                truth[index], a[index], b[index], metric, groups=g, method="cluster_robust"
            )
            for field in fields:
                if getattr(single, field) is None:
                    assert getattr(batched, field) is None
                    continue
                # equal up to the order of floating-point sums (padded persons)
                np.testing.assert_allclose(
                    getattr(batched, field)[index], getattr(single, field), rtol=1e-12, atol=0
                )
            assert batched.test == single.test


def test_durkalski_keeps_its_size_where_the_exact_mcnemar_over_rejects():
    # H0 with clustered discordance: person i's texts are discordant with probability
    # pi_i ~ Beta(1, 4), and a discordant text favours A with probability
    # theta_i ~ Uniform(0, 1), the same for all of the person's texts. E(b_i - c_i) = 0,
    # but the discordant texts are not independent, which the exact McNemar assumes.
    reps, m, k = 2000, 40, 6
    rng = np.random.default_rng(20260311)
    pi = rng.beta(1, 4, size=(reps, m, 1))
    theta = rng.random((reps, m, 1))
    disc = rng.random((reps, m, k)) < pi
    only_a = disc & (rng.random((reps, m, k)) < theta)
    both = ~disc & (rng.random((reps, m, k)) < 0.9)
    truth = rng.integers(0, 2, size=(reps, m, k))
    a = np.where(only_a | both, truth, 1 - truth).reshape(reps, m * k)
    b = np.where((disc & ~only_a) | both, truth, 1 - truth).reshape(reps, m * k)
    truth = truth.reshape(reps, m * k)
    person = np.repeat(np.arange(m), k)
    nested = pc.compare(truth, a, b, "accuracy", groups=person)  # no bootstrap: fast
    plain = pc.compare(truth, a, b, "accuracy", method="newcombe")
    assert nested.test == "Durkalski clustered McNemar"
    size = np.mean(nested.p_value < 0.05)
    naive = np.mean(plain.mcnemar_pvalue < 0.05)
    # binomial Monte-Carlo error of a rejection rate near 0.05 over 2000 data sets
    mc_se = np.sqrt(0.05 * 0.95 / reps)
    assert abs(size - 0.05) < 3 * mc_se, size
    assert naive > 0.05 + 3 * mc_se and naive > size + 3 * mc_se, (naive, size)


def test_identical_classifiers(texts):
    h, a, g = texts["human"], texts["model"], texts["person"]
    # the bootstrap: exactly 0, every replicate 0; its interval is NaN as the robust one is
    with pytest.warns(pc.UndefinedMetricWarning, match="paired bootstrap interval.*zero"):
        result = pc.compare(h, a, a, "f1", rng=1)
    assert result.difference == 0 and np.isnan(result.low) and np.isnan(result.high)
    assert result.disagreement == 0 and result.robust_se == 0
    assert np.isnan(result.robust_low) and np.isnan(result.p_value)
    with pytest.warns(pc.UndefinedMetricWarning, match="design effect of 1"):
        nested = pc.compare(h, a, a, "recall", groups=g, method="cluster_robust")
    assert nested.difference == 0 and np.isnan(nested.low) and np.isnan(nested.high)
    assert nested.p_value == 1 and nested.design_effect == 1
    assert nested.newcombe_low < 0 < nested.newcombe_high
    # the recommended method here (6.4 relevant texts per person): Newcombe's, finite
    with pytest.warns(pc.UndefinedMetricWarning, match="design effect of 1"):
        recommended = pc.compare(h, a, a, "recall", groups=g)
    assert (recommended.low, recommended.high) == (nested.newcombe_low, nested.newcombe_high)
    with pytest.warns(pc.UndefinedMetricWarning, match="standard error is zero"):
        boot = pc.compare(h, a, a, "f1", groups=g, method="bootstrap", rng=1)
    assert np.isnan(boot.low) and np.isnan(boot.high)


def test_no_discordant_relevant_texts():
    # A and B disagree only on reference negatives: nothing about their recalls differs
    rows = [(3, 0, 0, 1), (2, 0, 0, 2), (4, 0, 0, 0)]
    t, a, b, g = _texts_from_tables(rows)
    with pytest.warns(pc.UndefinedMetricWarning, match="no discordant texts"):
        nested = pc.compare(t, a, b, "recall", groups=g, method="cluster_robust")
    assert nested.difference == 0 and nested.robust_se == 0 and np.isnan(nested.low)
    assert nested.p_value == 1 and nested.discordant == (0, 0)
    with pytest.warns(pc.UndefinedMetricWarning, match="no discordant texts"):
        plain = pc.compare(t, a, b, "recall", rng=1)
    assert plain.p_value == 1 and plain.test == "exact McNemar"


def test_every_person_with_the_same_difference_has_no_robust_interval():
    # each person: one positive only A gets right, one both get right, so d = 1/2 and
    # every influence (b_i - c_i - d n_i) / N is 0 although there are discordant texts
    t, a, b, g = _texts_from_tables([(1, 1, 0, 0)] * 3)
    with pytest.warns(pc.UndefinedMetricWarning, match="every person with the same difference"):
        result = pc.compare(t, a, b, "recall", groups=g, method="cluster_robust")
    assert result.difference == 0.5 and result.robust_se == 0 and np.isnan(result.low)
    # Durkalski: (sum (b_i - c_i))^2 / sum (b_i - c_i)^2 = 9 / 3 = 3
    assert result.p_value == pytest.approx(0.08326451666355039, rel=1e-9)  # erfc(sqrt(3/2))


@pytest.mark.filterwarnings("ignore:the recall difference. 1 of 2 data sets rest on")
def test_one_person_in_a_batch_is_nan_with_one_warning():
    t, a, b, g = _texts_from_tables([(2, 3, 1, 0), (1, 2, 0, 1), (3, 0, 1, 0)])
    batch_t, batch_a, batch_b = (np.stack([x, x]) for x in (t, a, b))
    groups = np.stack([g, np.zeros_like(g)])  # the second data set: one person
    with pytest.warns(pc.UndefinedMetricWarning, match=r"for 1 of 2 data sets: fewer than 2"):
        result = pc.compare(
            batch_t, batch_a, batch_b, "recall", groups=groups, method="cluster_robust"
        )
    assert np.isfinite(result.low[0]) and np.isnan(result.low[1])
    assert np.isfinite(result.p_value[0]) and np.isnan(result.p_value[1])
    w = np.bincount(g, weights=t).astype(float)  # each person's reference positives
    assert list(result.persons) == [3, 1] and result.df[1] == 0
    assert result.df[0] == pytest.approx(w.sum() ** 2 / (w * w).sum() - 1, rel=1e-12)


# ------------------------------------------------- the effective persons of a comparison


def test_the_comparison_gives_its_effective_persons(texts):
    h, a, b, g = texts["human"], texts["model"], texts["model_b"], texts["person"]
    for metric in ("recall", "f1"):
        nested = pc.compare(h, a, b, metric, groups=g, rng=1)
        # a text is relevant if it is for either classifier (for f1: either's tp, fp, fn)
        relevant = (h == 1) if metric == "recall" else (h == 1) | (a == 1) | (b == 1)
        w = relevant.groupby(g).sum().to_numpy(dtype=float)
        assert nested.effective_persons == pytest.approx(w.sum() ** 2 / (w * w).sum(), rel=1e-12)
        assert nested.df == pytest.approx(nested.effective_persons - 1, rel=1e-12)
        assert nested.effective_persons < nested.persons  # unequal persons count for fewer
    assert pc.compare(h, a, b, "recall", rng=1).effective_persons is None
    assert pc.compare(h, a, b, "recall", groups=g).to_dict()["effective_persons"] > 20


def test_a_comparison_of_few_effective_persons_warns():
    # Before: no word of why a comparison of three persons is wide.
    t, a, b, g = _texts_from_tables([(2, 3, 1, 0), (1, 2, 0, 1), (3, 0, 1, 0), (9, 1, 0, 0)])
    w = np.bincount(g, weights=t)
    effective = w.sum() ** 2 / (w * w).sum()  # 27^2 / 233 = 3.13
    message = (
        rf"^the recall difference: the comparison rests on {effective:.1f} effective persons "
        rf"\(df {effective - 1:.1f}\): its interval is wide by necessity\.$"
    )
    for method in ("recommended", "cluster_robust"):
        with pytest.warns(pc.UndefinedMetricWarning, match=message):
            result = pc.compare(t, a, b, "recall", groups=g, method=method)
        assert result.effective_persons == pytest.approx(effective, rel=1e-12)
    batch = [np.stack([x, x]) for x in (t, a, b)]
    with pytest.warns(pc.UndefinedMetricWarning, match=r"2 of 2 data sets rest on fewer than 5"):
        batched = pc.compare(*batch, "recall", groups=g)
    np.testing.assert_allclose(batched.effective_persons, [effective, effective], rtol=1e-12)
    with pytest.warns(pc.UndefinedMetricWarning, match=r"too few .* read its interval as approx"):
        pc.compare(t, a, b, "recall", groups=g, method="bootstrap", n_resamples=200, rng=1)
    with warnings.catch_warnings():  # without persons: an interval about texts
        warnings.simplefilter("error")
        pc.compare(t, a, b, "recall", rng=1, n_resamples=200)


@pytest.mark.parametrize("metric", ["recall", "precision", "specificity", "npv", "accuracy", "f1"])
def test_a_paired_difference_reads_its_pooled_joint_cells_only_through_their_sums(metric):
    # joint_pooling: moving texts between joint cells of one group changes neither
    # classifier's group totals, so the difference is the same, bit for bit.
    from perfci._core.joint import TO_A, TO_B
    from perfci.metrics import metric_values
    from perfci.paired import joint_pooling

    pooling = np.array(joint_pooling(metric))
    cells = np.random.default_rng(6).integers(1, 25, size=(400, 8)).astype(float)

    def difference(c):
        return metric_values(c @ TO_A, metric) - metric_values(c @ TO_B, metric)

    expected = difference(cells)
    for group in np.unique(pooling):
        members = np.flatnonzero(pooling == group)
        for target in members:
            moved = cells.copy()
            moved[:, members] = 0.0
            moved[:, target] = cells[:, members].sum(-1)
            np.testing.assert_array_equal(difference(moved), expected)
