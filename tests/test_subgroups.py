"""Differences between subgroups: reference values, an independent computation, coverage.

Reference values sit beside the call that produced them (statsmodels 0.15.0); the
cluster-robust interval is checked against statsmodels' cluster-robust OLS and against
the ratio-estimator formula written out here; the max-t critical value against scipy's
multivariate normal and t distribution functions and a brute-force simulation; and a
seeded simulation shows the nested interval covers where Newcombe's, which treats the
texts as independent, does not.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import perfci as pc
from perfci.subgroups import (
    GROUP_METHODS,
    SIMULTANEOUS_BANDS,
    compare_groups_counts,
    max_t_critical_value,
    newcombe_interval,
)


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def nested_texts(seed, persons=(12, 17), rates=(0.8, 0.7), mean_texts=8, icc=0.2):
    """Labels of texts nested in persons nested in subgroups "a", "b", ...

    Every text is a human positive, so recall = accuracy = the share the model gets right.
    """
    rng = np.random.default_rng(seed)
    k = 1 / icc - 1
    rows = []
    for g, (m, rate) in enumerate(zip(persons, rates, strict=True)):
        for i in range(m):
            n = 1 + rng.poisson(mean_texts - 1)
            right = rng.random(n) < rng.beta(rate * k, (1 - rate) * k)
            rows += [("abcdefgh"[g], f"{g}-{i}", int(r)) for r in right]
    frame = pd.DataFrame(rows, columns=["by", "person", "right"])
    frame["human"] = 1
    frame["model"] = frame["right"]
    return frame


# ------------------------------------------------------------------ Newcombe's interval

# statsmodels 0.15.0:
#   from statsmodels.stats.proportion import confint_proportions_2indep
#   confint_proportions_2indep(x1, n1, x2, n2, method="newcomb", compare="diff",
#                              alpha=alpha)
# (the first six are Newcombe's (1998) table II examples (a) to (f))
NEWCOMBE = [
    # x1, n1, x2, n2, alpha, low, high
    (56, 70, 48, 80, 0.05, 0.05243147240236498, 0.33387265403690614),
    (56, 70, 48, 80, 0.1, 0.07656419154407207, 0.31364458358294384),
    (9, 10, 3, 10, 0.05, 0.1705227239345029, 0.809017973535488),
    (6, 7, 2, 7, 0.05, 0.05822792748231209, 0.8062496375242278),
    (5, 56, 0, 29, 0.05, -0.038137147903536936, 0.19256001385511165),
    (0, 10, 0, 20, 0.05, -0.1611251580528194, 0.27753279986288926),
    (10, 10, 0, 20, 0.05, 0.6790860371419145, 1.0),
    (10, 10, 20, 20, 0.1, -0.2129419700834072, 0.11915783736096452),
    (1, 1, 0, 1, 0.05, -0.12210872068194178, 1.0),
    (97, 108, 123, 143, 0.05, -0.04770570701919713, 0.11759777074030878),
    (3, 5, 40, 41, 0.1, -0.7036731931144983, -0.10680683028546362),
]


@pytest.mark.parametrize(("x1", "n1", "x2", "n2", "alpha", "low", "high"), NEWCOMBE)
def test_newcombe_matches_statsmodels(x1, n1, x2, n2, alpha, low, high):
    got = newcombe_interval(x1, n1, x2, n2, confidence_level=1 - alpha)
    assert got == pytest.approx((low, high), abs=1e-10)


def test_newcombe_is_statsmodels_on_a_grid():
    from statsmodels.stats.proportion import confint_proportions_2indep

    rng = np.random.default_rng(3)
    n1, n2 = rng.integers(1, 60, 40), rng.integers(1, 60, 40)
    x1, x2 = rng.integers(0, n1 + 1), rng.integers(0, n2 + 1)
    low, high = newcombe_interval(x1, n1, x2, n2, confidence_level=0.9)
    for i in range(40):
        ref = confint_proportions_2indep(
            x1[i], n1[i], x2[i], n2[i], method="newcomb", compare="diff", alpha=0.1
        )
        assert (low[i], high[i]) == pytest.approx(ref, abs=1e-10)
        # the vectorized call equals the scalar one
        assert (low[i], high[i]) == newcombe_interval(x1[i], n1[i], x2[i], n2[i], 0.9)


def test_newcombe_validation():
    with pytest.raises(ValueError, match="^`x1` must not exceed `n1`"):
        newcombe_interval(5, 4, 1, 2)
    with pytest.raises(ValueError, match="^`x2` and `n2` must be non-negative"):
        newcombe_interval(1, 4, -1, 2)
    with pytest.raises(ValueError, match="broadcast"):
        newcombe_interval([1, 2], [3, 4], [1, 2, 3], [5, 5, 5])
    assert np.isnan(newcombe_interval(0, 0, 1, 2)).all()  # no trials: undefined


def test_compare_groups_recall_is_newcombe_of_the_counts(texts):
    table = pc.compare_groups(texts["human"], texts["model"], "recall", texts["site"])
    (row,) = table.itertuples()
    counts = {
        s: pc.confusion(texts["human"][texts["site"] == s], texts["model"][texts["site"] == s])
        for s in ("clinic_a", "clinic_b")
    }
    xa, na = pc.proportion_counts(counts["clinic_a"].counts, "recall")
    xb, nb = pc.proportion_counts(counts["clinic_b"].counts, "recall")
    assert (row.subgroup, row.reference) == ("clinic_b", "clinic_a")
    assert (row.low, row.high) == newcombe_interval(xb, nb, xa, na)
    assert row.difference == pytest.approx(xb / nb - xa / na, abs=1e-15)
    assert (row.relevant_n, row.relevant_n_reference) == (nb, na)
    assert pd.isna(row.persons) and row.method.startswith("Newcombe")
    assert list(table.columns) == [
        "subgroup",
        "reference",
        "metric",
        "estimate",
        "estimate_reference",
        "difference",
        "low",
        "high",
        "relevant_n",
        "relevant_n_reference",
        "persons",
        "persons_reference",
        "method",
        "se",
        "df",
        "effective_persons",
        "effective_persons_reference",
    ]


def test_swapping_the_reference_mirrors_the_interval(texts):
    args = (texts["human"], texts["model"], "precision", texts["site"])
    one = pc.compare_groups(*args).iloc[0]
    other = pc.compare_groups(*args, reference="clinic_b").iloc[0]
    assert (other.subgroup, other.reference) == ("clinic_a", "clinic_b")
    assert other.difference == pytest.approx(-one.difference, abs=1e-15)
    assert (other.low, other.high) == pytest.approx((-one.high, -one.low), abs=1e-15)
    nested = pc.compare_groups(*args, groups=texts["person"]).iloc[0]
    swapped = pc.compare_groups(*args, groups=texts["person"], reference="clinic_b").iloc[0]
    assert (swapped.low, swapped.high) == pytest.approx((-nested.high, -nested.low), abs=1e-15)


# ------------------------------------------------------------ the cluster-robust interval


def test_cluster_robust_difference_equals_statsmodels_cluster_ols():
    import statsmodels.api as sm

    frame = nested_texts(7)
    result = pc.compare_groups(
        frame["human"], frame["model"], "accuracy", frame["by"], groups=frame["person"]
    )
    (row,) = result.itertuples()
    # The difference of two means (clusters nested in the groups) is the coefficient of
    # a subgroup dummy; each subgroup's variance is the cluster-robust variance of its
    # mean, OLS(y_g, 1) with clusters = persons: statsmodels' correction
    # G/(G - 1) (N - 1)/(N - K) is G/(G - 1) with K = 1, our m_g/(m_g - 1).
    y = frame["right"].to_numpy(float)
    dummy = (frame["by"] == "b").to_numpy(float)
    person = pd.factorize(frame["person"])[0]
    fit = sm.OLS(y, np.column_stack([np.ones_like(y), dummy])).fit(
        cov_type="cluster", cov_kwds={"groups": person}
    )
    assert row.difference == pytest.approx(fit.params[1], abs=1e-12)
    variances = []
    for g in ("a", "b"):
        mask = frame["by"].to_numpy() == g
        one = sm.OLS(y[mask], np.ones((mask.sum(), 1))).fit(
            cov_type="cluster", cov_kwds={"groups": person[mask], "use_correction": True}
        )
        variances.append(float(one.bse[0] ** 2))
    se = np.sqrt(sum(variances))
    # the df: the smaller effective number of persons G* = (sum n_i)^2 / sum n_i^2, - 1
    sizes = [np.bincount(pd.factorize(frame["person"][frame["by"] == g])[0]) for g in "ab"]
    df = min(s.sum() ** 2 / (s * s).sum() for s in sizes) - 1
    q = stats.t.ppf(0.975, df)
    assert (row.low, row.high) == pytest.approx(
        (fit.params[1] - q * se, fit.params[1] + q * se), abs=1e-12
    )
    counts = [
        pc.confusion(frame["human"][m], frame["model"][m], groups=frame["person"][m]).counts
        for m in (frame["by"] == "b", frame["by"] == "a")
    ]
    direct = compare_groups_counts(*counts, "accuracy", nested=True)
    assert direct.standard_error == pytest.approx(se, abs=1e-14)
    assert direct.df == pytest.approx(df, abs=1e-12)
    assert (direct.low, direct.high) == (row.low, row.high)
    # with as many persons in each subgroup, the dummy's CR0 variance (no correction)
    # times m/(m - 1) is the same variance
    balanced = nested_texts(8, persons=(15, 15))
    (b_row,) = pc.compare_groups(
        balanced["human"], balanced["model"], "accuracy", balanced["by"], groups=balanced["person"]
    ).itertuples()
    yb = balanced["right"].to_numpy(float)
    xb = np.column_stack([np.ones_like(yb), (balanced["by"] == "b").to_numpy(float)])
    cr0 = sm.OLS(yb, xb).fit(
        cov_type="cluster",
        cov_kwds={"groups": pd.factorize(balanced["person"])[0], "use_correction": False},
    )
    half = (b_row.high - b_row.low) / 2
    sizes = [np.bincount(pd.factorize(balanced["person"][balanced["by"] == g])[0]) for g in "ab"]
    df = min(s.sum() ** 2 / (s * s).sum() for s in sizes) - 1
    assert half / stats.t.ppf(0.975, df) == pytest.approx(np.sqrt(15 / 14) * cr0.bse[1], rel=1e-12)


def test_cluster_robust_f1_difference_is_the_ratio_estimator_formula():
    # F1 = sum_i 2 a_i / sum_i (2 a_i + b_i + c_i), a ratio of person totals: its
    # linearization influence is u_i = (2 a_i - F (2 a_i + b_i + c_i)) / sum(2a + b + c),
    # written here without perfci.metrics.metric_gradient.
    rng = np.random.default_rng(11)
    per_group = []
    for m in (14, 9):
        cells = rng.poisson([4, 1.5, 1.5, 12], size=(m, 4)).astype(float)
        per_group.append(cells)
    variances, estimates, sizes = [], [], []
    for cells in per_group:
        a, b, c = cells[:, 0], cells[:, 1], cells[:, 2]
        num, den = 2 * a, 2 * a + b + c
        f = num.sum() / den.sum()
        u = (num - f * den) / den.sum()
        m = np.count_nonzero(a + b + c)
        variances.append(m / (m - 1) * (u * u).sum())
        estimates.append(f)
        sizes.append((a + b + c)[a + b + c > 0])
    result = compare_groups_counts(per_group[0], per_group[1], "f1", nested=True)
    assert result.difference == pytest.approx(estimates[0] - estimates[1], abs=1e-15)
    assert result.standard_error == pytest.approx(np.sqrt(sum(variances)), rel=1e-12)
    df = min(w.sum() ** 2 / (w * w).sum() for w in sizes) - 1
    assert result.df == pytest.approx(df, rel=1e-12)
    q = stats.t.ppf(0.975, df)
    assert result.high - result.difference == pytest.approx(q * result.standard_error, rel=1e-12)
    # padding persons without texts changes nothing
    padded = compare_groups_counts(
        np.vstack([per_group[0], np.zeros((3, 4))]), per_group[1], "f1", nested=True
    )
    assert (padded.low, padded.high) == (result.low, result.high)


def test_relabelling_and_reordering_persons_changes_nothing():
    frame = nested_texts(5, persons=(10, 12, 9), rates=(0.8, 0.7, 0.75))
    order = np.random.default_rng(1).permutation(len(frame))
    shuffled = frame.iloc[order].copy()
    shuffled["person"] = "x" + shuffled["person"].str[::-1]
    for method in ("cluster_robust", "bootstrap"):
        one, other = (
            pc.compare_groups(
                f["human"], f["model"], "recall", f["by"], groups=f["person"], method=method, rng=4
            )
            for f in (frame, shuffled)
        )
        pd.testing.assert_frame_equal(one, other)


def test_compare_groups_counts_batch_equals_a_loop():
    rng = np.random.default_rng(2)
    a = rng.poisson([5, 1, 2, 9], size=(3, 2, 6, 4))
    b = rng.poisson([4, 2, 2, 8], size=(3, 2, 8, 4))
    for method, resamples in (("cluster_robust", {}), ("bootstrap", {"n_resamples": 300})):
        batch = compare_groups_counts(a, b, "kappa", nested=True, method=method, rng=9, **resamples)
        generators = pc.batch_generators(9, 6)
        for k, (i, j) in enumerate(np.ndindex(3, 2)):
            one = compare_groups_counts(
                a[i, j],
                b[i, j],
                "kappa",
                nested=True,
                method=method,
                rng=generators[k],
                **resamples,
            )
            assert (batch.low[i, j], batch.high[i, j]) == (one.low, one.high)
            assert batch.df[i, j] == one.df or np.isnan(one.df)


def test_the_bootstrap_is_the_difference_of_two_bootstrap_cis(texts):
    # one engine: each subgroup's replicates are perfci.bootstrap_ci's, drawn from the
    # subgroup's own child stream, and the interval is the percentile of the differences
    site = texts["site"]
    for groups, scheme in ((None, "iid"), (texts["person"], "hierarchical")):
        table = pc.compare_groups(
            texts["human"], texts["model"], "f1", site, groups=groups, method="bootstrap", rng=1
        )
        generators = np.random.default_rng(1).spawn(2)
        reps = []
        for s, generator in zip(("clinic_a", "clinic_b"), generators, strict=True):
            mask = site == s
            counts = pc.confusion(
                texts["human"][mask],
                texts["model"][mask],
                groups=None if groups is None else groups[mask],
            ).counts
            reps.append(
                pc.bootstrap_ci(
                    counts, "f1", scheme=scheme, pseudo_count=1, rng=generator
                ).distribution
            )
        low, high = np.quantile(reps[1] - reps[0], [0.025, 0.975])
        assert (table["low"][0], table["high"][0]) == pytest.approx((low, high), abs=1e-15)
        assert f"scheme={scheme}" in table["method"][0]


# ------------------------------------------------------------------ simultaneous bands


def test_max_t_critical_value_matches_scipy_multivariate_cdfs():
    v, v0 = np.array([0.1, 0.5, 1.0, 2.0]), 0.6
    s = np.sqrt(v + v0)
    corr = v0 / np.outer(s, s)
    np.fill_diagonal(corr, 1.0)
    for df in (None, 7.5):
        c = max_t_critical_value(v, v0, 0.95, df=df)
        x = np.full(4, c)
        if df is None:
            p = stats.multivariate_normal.cdf(
                x, cov=corr, lower_limit=-x, abseps=1e-8, releps=1e-8, rng=np.random.default_rng(0)
            )
        else:
            p = stats.multivariate_t.cdf(
                x,
                shape=corr,
                df=df,
                lower_limit=-x,
                maxpts=200_000,
                random_state=np.random.default_rng(0),
            )
        assert p == pytest.approx(0.95, abs=1e-5)  # scipy's quasi-Monte-Carlo error: about 1e-6


def test_max_t_probability_with_a_subgroup_of_tiny_variance():
    # the integrand steps sharply when v_j is small beside v0: the probability must still
    # be scipy's multivariate normal one (whose error here is about 1e-9)
    from perfci.simultaneous import _max_abs_probability

    for v in ([1e-4, 5.0], [1e-6, 1.0], [0.0, 1.0], [0.01, 0.3, 3.0]):
        v = np.asarray(v)
        s = np.sqrt(v + 0.7)
        corr = 0.7 / np.outer(s, s)
        np.fill_diagonal(corr, 1.0)
        x = np.full(v.size, 2.0)
        ref = stats.multivariate_normal.cdf(
            x, cov=corr, lower_limit=-x, abseps=1e-10, releps=1e-10, rng=np.random.default_rng(0)
        )
        assert _max_abs_probability(2.0, v, 0.7) == pytest.approx(ref, abs=1e-8)


def test_max_t_critical_value_against_brute_force_simulation():
    rng = np.random.default_rng(20260301)
    draws = 400_000
    v, v0 = np.array([0.5, 1.0, 2.0]), 1.0
    se = np.sqrt(0.95 * 0.05 / draws)  # MC SE of a coverage of 0.95
    for df in (None, 8.0):
        c = max_t_critical_value(v, v0, 0.95, df=df)
        x = rng.normal(0, np.sqrt(v), (draws, 3))
        x0 = rng.normal(0, np.sqrt(v0), (draws, 1))
        t = (x - x0) / np.sqrt(v + v0)
        if df is not None:
            t /= np.sqrt(rng.chisquare(df, (draws, 1)) / df)
        covered = (np.abs(t).max(1) <= c).mean()
        assert abs(covered - 0.95) < 3 * se, (df, covered)
        # it lies between the single quantile and Bonferroni's
        dist = stats.norm if df is None else stats.t(df)
        assert dist.ppf(0.975) < c < dist.ppf(1 - 0.05 / 6)


def test_max_t_critical_value_special_cases():
    # one difference: the normal or t quantile itself
    assert max_t_critical_value([0.3], 0.7) == pytest.approx(stats.norm.ppf(0.975), abs=1e-12)
    assert max_t_critical_value([0.3], 0.7, df=4) == pytest.approx(stats.t.ppf(0.975, 4), abs=1e-12)
    # a reference without variance: independent differences, Sidak's c exactly
    sidak = stats.norm.ppf((1 + 0.95 ** (1 / 3)) / 2)
    assert max_t_critical_value([1.0, 2.0, 3.0], 0.0) == pytest.approx(sidak, abs=1e-9)
    # subgroups without variance: every difference is the reference's deviation
    assert max_t_critical_value([0.0, 0.0], 1.0) == pytest.approx(stats.norm.ppf(0.975), abs=1e-9)
    # Dunnett's two-sided table for 3 treatments and a control of equal precision
    assert max_t_critical_value([1.0, 1.0, 1.0], 1.0) == pytest.approx(2.349, abs=1e-3)
    with pytest.raises(ValueError, match="^`variances` must be a non-empty"):
        max_t_critical_value([], 1.0)
    with pytest.raises(ValueError, match="must be non-negative"):
        max_t_critical_value([-1.0], 1.0)
    with pytest.raises(ValueError, match="must be positive for every difference"):
        max_t_critical_value([0.0], 0.0)
    with pytest.raises(ValueError, match="^`df` must be a positive number"):
        max_t_critical_value([1.0], 1.0, df=0)


def test_simultaneous_bands_cover_the_pointwise_intervals():
    frame = nested_texts(9, persons=(14, 11, 16, 12), rates=(0.8, 0.7, 0.75, 0.85))
    args = (frame["human"], frame["model"], "recall", frame["by"])
    for groups, method in ((frame["person"], "cluster_robust"), (None, "newcombe")):
        bands = {
            s: pc.compare_groups(*args, groups=groups, method=method, simultaneous=s)
            for s in SIMULTANEOUS_BANDS
        }
        plain = pc.compare_groups(*args, groups=groups, method=method)
        for s, table in bands.items():
            assert table.attrs["simultaneous"] == s and table.attrs["comparisons"] == 3
            assert (table["low_simultaneous"] < plain["low"]).all()
            assert (table["high_simultaneous"] > plain["high"]).all()
            pd.testing.assert_frame_equal(table[plain.columns], plain)
        # max-t is narrower than Bonferroni
        width = {s: t["high_simultaneous"] - t["low_simultaneous"] for s, t in bands.items()}
        assert (width["max_t"] < width["bonferroni"]).all()
        assert bands["bonferroni"].attrs["simultaneous_level"] == pytest.approx(1 - 0.05 / 3)


def test_max_t_band_of_the_cluster_robust_interval_uses_the_max_t_level():
    frame = nested_texts(10, persons=(14, 11, 16), rates=(0.8, 0.7, 0.75))
    table = pc.compare_groups(
        frame["human"],
        frame["model"],
        "recall",
        frame["by"],
        groups=frame["person"],
        simultaneous="max_t",
    )
    counts = {
        g: pc.confusion(
            frame["human"][frame["by"] == g],
            frame["model"][frame["by"] == g],
            groups=frame["person"][frame["by"] == g],
        ).counts
        for g in "abc"
    }
    results = [compare_groups_counts(counts[g], counts["a"], "recall", nested=True) for g in "bc"]
    se = np.array([r.standard_error for r in results])
    df = min(r.df for r in results)

    def robust_variance(cells):  # the cluster-robust variance of a pooled recall
        x, n = pc.proportion_counts(cells, "recall")
        u = (x - x.sum() / n.sum() * n) / n.sum()
        m = np.count_nonzero(n)
        return m / (m - 1) * (u * u).sum()

    v_ref = robust_variance(counts["a"])
    v = np.array([robust_variance(counts[g]) for g in "bc"])
    assert se == pytest.approx(np.sqrt(v + v_ref), rel=1e-12)
    # the normal max-t critical value, as a level for each interval with its own df
    c = max_t_critical_value(v, v_ref, 0.95)
    level = 2 * stats.norm.cdf(c) - 1
    q = stats.t.ppf((1 + level) / 2, [r.df for r in results])
    d = table["difference"].to_numpy()
    assert table["low_simultaneous"].to_numpy() == pytest.approx(d - q * se, abs=1e-9)
    assert table["high_simultaneous"].to_numpy() == pytest.approx(d + q * se, abs=1e-9)
    assert table.attrs["critical_value"] == pytest.approx(c, abs=1e-9)
    assert table.attrs["simultaneous_level"] == pytest.approx(level, abs=1e-9)
    assert df == min(r.df for r in results)


def test_with_two_subgroups_the_max_t_band_is_the_interval(texts):
    for groups in (None, texts["person"]):
        table = pc.compare_groups(
            texts["human"],
            texts["model"],
            "specificity",
            texts["site"],
            groups=groups,
            simultaneous="max_t",
        )
        assert table["low_simultaneous"][0] == pytest.approx(table["low"][0], abs=1e-12)
        assert table["high_simultaneous"][0] == pytest.approx(table["high"][0], abs=1e-12)


# ------------------------------------------------------------------ coverage


def test_nested_interval_covers_where_newcombe_ignoring_persons_does_not():
    # 20 persons per subgroup x 10 texts, ICC 0.2, true rates 0.85 and 0.75 (the
    # text-weighted difference 0.10): 4000 seeded data sets, numpy only
    rng = np.random.default_rng(20260301)
    replications, persons, size, icc = 4000, 20, 10, 0.2
    k = 1 / icc - 1

    def subgroup(rate):
        y = rng.binomial(size, rng.beta(rate * k, (1 - rate) * k, (replications, persons)))
        zero = np.zeros_like(y)
        return np.stack([y, zero, size - y, zero], -1)  # accuracy: [right, 0, wrong, 0]

    a, b = subgroup(0.85), subgroup(0.75)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nested = compare_groups_counts(a, b, "accuracy", nested=True)
        ignoring = compare_groups_counts(a.sum(1), b.sum(1), "accuracy")
    assert nested.method.startswith("cluster-robust") and ignoring.method.startswith("Newcombe")
    se = np.sqrt(0.95 * 0.05 / replications)

    def coverage(result):
        return float(np.mean((result.low <= 0.10) & (0.10 <= result.high)))

    assert coverage(nested) >= 0.93 - 3 * se  # 0.9585
    assert coverage(ignoring) < 0.93 - 3 * se  # 0.756


# ------------------------------------------------------------------ degenerate cases


def test_a_subgroup_without_relevant_texts_gets_a_nan_row_and_a_warning():
    y = [1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1]
    p = [1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0]
    by = ["a"] * 4 + ["b"] * 4 + ["c"] * 4  # b has no human positives
    with pytest.warns(pc.UndefinedMetricWarning, match=r"subgroup 'b' against 'a': the subgroup"):
        table = pc.compare_groups(y, p, "recall", by, simultaneous="bonferroni")
    assert table["subgroup"].tolist() == ["b", "c"]
    assert table.loc[0, ["low", "high", "low_simultaneous"]].isna().all()
    assert table.loc[0, "relevant_n"] == 0 and np.isnan(table.loc[0, "estimate"])
    assert table.loc[1, ["low", "high", "low_simultaneous"]].notna().all()
    assert table.attrs["comparisons"] == 1  # the band is over the defined differences
    # the reference without relevant texts: every row
    with pytest.warns(pc.UndefinedMetricWarning, match="the reference has no relevant texts"):
        table = pc.compare_groups(y, p, "recall", by, reference="b")
    assert table[["low", "high"]].isna().all().all()


def test_one_subgroup_is_an_error():
    with pytest.raises(ValueError, match=r"^`by` must hold at least 2 subgroups"):
        pc.compare_groups([1, 0, 1], [1, 0, 0], "accuracy", ["a", "a", "a"])


def test_a_subgroup_with_one_person_gets_a_nan_row_in_nested_mode():
    frame = nested_texts(12, persons=(8, 1, 7), rates=(0.8, 0.7, 0.75))
    with pytest.warns(pc.UndefinedMetricWarning, match=r"subgroup 'b'.*fewer than 2 persons"):
        table = pc.compare_groups(
            frame["human"], frame["model"], "recall", frame["by"], groups=frame["person"]
        )
    assert table.loc[0, ["low", "high"]].isna().all() and table.loc[0, "persons"] == 1
    assert table.loc[1, ["low", "high"]].notna().all()
    # without persons the same texts have an interval
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = pc.compare_groups(frame["human"], frame["model"], "recall", frame["by"])
    assert plain[["low", "high"]].notna().all().all()


def test_a_person_in_two_subgroups_is_an_error(texts):
    with pytest.raises(ValueError, match=r"^`groups` must nest persons in the subgroups of `by`"):
        pc.compare_groups(
            texts["human"], texts["model"], "accuracy", texts["human_topic"], groups=texts["person"]
        )


def test_zero_standard_error_and_zero_variance_on_one_side():
    # every text right in both subgroups: the cluster-robust se is 0
    y = [1] * 12
    by = ["a"] * 6 + ["b"] * 6
    person = [f"p{i // 2}" for i in range(12)]
    with pytest.warns(pc.UndefinedMetricWarning, match="standard error is zero"):
        table = pc.compare_groups(y, y, "recall", by, groups=person)
    assert table[["low", "high"]].isna().all().all()
    # one subgroup perfect: the interval rests on the other's variance, with a warning
    p = [1] * 6 + [1, 0, 1, 1, 0, 1]
    with pytest.warns(pc.UndefinedMetricWarning, match=r"variance of 'a' is zero"):
        table = pc.compare_groups(y, p, "recall", by, groups=person)
    assert table[["low", "high"]].notna().all().all()


def test_options_the_method_cannot_use_are_errors(texts):
    args = (texts["human"], texts["model"])
    with pytest.raises(ValueError, match=r"^`method` 'newcombe' is an interval for a difference"):
        pc.compare_groups(*args, "f1", texts["site"], method="newcombe")
    with pytest.raises(ValueError, match=r"^`method` 'newcombe' treats the texts as independent"):
        pc.compare_groups(*args, "recall", texts["site"], groups=texts["person"], method="newcombe")
    with pytest.raises(ValueError, match=r"^`n_resamples` is an option of the bootstrap"):
        pc.compare_groups(*args, "recall", texts["site"], n_resamples=500)
    with pytest.raises(ValueError, match=r"^`reference` 'clinic_c' is not one of the subgroups"):
        pc.compare_groups(*args, "recall", texts["site"], reference="clinic_c")
    with pytest.raises(ValueError, match=r"^`by` must have one label per text"):
        pc.compare_groups(*args, "recall", texts["site"][:-1])


def test_registered_names():
    assert GROUP_METHODS == ("recommended", "newcombe", "cluster_robust", "bootstrap")
    assert SIMULTANEOUS_BANDS == ("bonferroni", "max_t")


def test_multiclass_labels_compare_the_positive_class(texts):
    table = pc.compare_groups(
        texts["human_topic"], texts["model_topic"], "recall", texts["site"], positive="question"
    )
    site = texts["site"]
    x = {
        s: pc.proportion_counts(
            pc.confusion(
                texts["human_topic"][site == s],
                texts["model_topic"][site == s],
                positive="question",
            ).counts,
            "recall",
        )
        for s in ("clinic_a", "clinic_b")
    }
    assert (table["low"][0], table["high"][0]) == newcombe_interval(*x["clinic_b"], *x["clinic_a"])
    with pytest.raises(ValueError, match="^`positive` must name the positive label"):
        pc.compare_groups(texts["human_topic"], texts["model_topic"], "recall", site)


def test_one_relevant_text_has_no_cluster_robust_variance_between_texts():
    y, p, by = [1, 1, 0, 1, 1, 0], [1, 0, 0, 1, 1, 0], ["a", "a", "a", "b", "c", "c"]
    with pytest.warns(pc.UndefinedMetricWarning, match="the subgroup has one relevant text"):
        table = pc.compare_groups(y, p, "recall", by, method="cluster_robust")
    assert table[["low", "high"]].isna().all().all()
    with warnings.catch_warnings():  # Newcombe's interval exists for one text
        warnings.simplefilter("error")
        assert pc.compare_groups(y, p, "recall", by)[["low", "high"]].notna().all().all()


def test_subgroups_are_in_natural_sorted_order():
    y = [1, 0] * 9
    p = [1, 0, 0, 0, 1, 1] * 3
    by = [10] * 6 + [2] * 6 + [1] * 6
    table = pc.compare_groups(y, p, "accuracy", by)
    assert table["reference"].tolist() == [1, 1] and table["subgroup"].tolist() == [2, 10]
    report = pc.report(y, p, by=by, metrics=["accuracy"], differences=True)
    assert report["by"].tolist() == ["all", 1, 2, 10, 2, 10]


def test_cluster_robust_differences_stay_in_the_metric_range():
    # 3 persons per subgroup with one or two relevant texts each: t on about 1-2 df
    # makes the linearization interval far wider than a difference can be; it is clipped
    from perfci.comparison import compare_counts
    from perfci.subgroups import compare_groups_counts

    a = np.array([[[1, 0, 1, 3], [1, 1, 0, 2], [2, 0, 0, 1]]])
    b = np.array([[[0, 1, 1, 2], [1, 0, 1, 3], [1, 0, 0, 2]]])
    for metric, bound in (("recall", 1.0), ("kappa", 2.0)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = compare_groups_counts(a, b, metric, nested=True, method="cluster_robust")
        assert -bound <= r.low[0] <= r.high[0] <= bound, (metric, r.low, r.high)
    joint = np.zeros((3, 8), dtype=int)
    joint[:, 7] = [1, 0, 1]  # both right on a positive
    joint[:, 6] = [0, 1, 0]  # only A right
    joint[:, 5] = [1, 0, 0]  # only B right
    joint[:, 0] = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = compare_counts(joint, "recall", nested=True, method="cluster_robust")
    assert -1 <= c.robust_low <= c.robust_high <= 1


# ------------------------------------------------- what a difference rests on: se, df, G*


def test_the_table_gives_se_df_and_the_effective_persons(texts):
    from perfci.design import effective_clusters

    args = (texts["human"], texts["model"], "recall", texts["site"])
    nested = pc.compare_groups(*args, groups=texts["person"]).iloc[0]
    positives = texts[texts["human"] == 1].groupby(["site", "person"]).size()
    g_b = effective_clusters(positives["clinic_b"].to_numpy())
    g_a = effective_clusters(positives["clinic_a"].to_numpy())
    assert nested["effective_persons"] == pytest.approx(g_b, rel=1e-12)  # 13.4
    assert nested["effective_persons_reference"] == pytest.approx(g_a, rel=1e-12)
    assert nested["df"] == pytest.approx(min(g_a, g_b) - 1, rel=1e-12)
    # the interval is the difference -/+ t(df) se, clipped to [-1, 1]
    half = stats.t.ppf(0.975, nested["df"]) * nested["se"]
    assert (nested["low"], nested["high"]) == pytest.approx(
        (nested["difference"] - half, nested["difference"] + half), abs=1e-12
    )
    # the table's row is compare_groups_counts' result
    cells = {
        s: np.stack(
            [
                pc.confusion(
                    texts["human"][texts["person"] == p], texts["model"][texts["person"] == p]
                ).counts
                for p in sorted(set(texts["person"][texts["site"] == s]))
            ]
        )
        for s in ("clinic_a", "clinic_b")
    }
    counted = compare_groups_counts(cells["clinic_b"], cells["clinic_a"], "recall", nested=True)
    assert nested["se"] == pytest.approx(counted.standard_error, rel=1e-12)
    assert nested["df"] == pytest.approx(counted.df, rel=1e-12)
    assert nested["effective_persons"] == pytest.approx(counted.effective_persons, rel=1e-12)
    # independent texts: Newcombe's (and the bootstrap's) have no df and no persons
    plain = pc.compare_groups(*args).iloc[0]
    xb, nb = pc.proportion_counts(cells["clinic_b"].sum(0), "recall")
    xa, na = pc.proportion_counts(cells["clinic_a"].sum(0), "recall")
    pb, pa = xb / nb, xa / na
    # each text a cluster: m / (m - 1) sum u_i^2 = p (1 - p) / (n - 1)
    assert plain["se"] == pytest.approx(
        np.sqrt(pb * (1 - pb) / (nb - 1) + pa * (1 - pa) / (na - 1))
    )
    assert plain[["df", "effective_persons", "effective_persons_reference"]].isna().all()
    single = compare_groups_counts(cells["clinic_b"].sum(0), cells["clinic_a"].sum(0), "recall")
    assert plain["se"] == pytest.approx(single.standard_error, rel=1e-12)
    assert single.effective_persons is None and single.effective_persons_reference is None
    boot = pc.compare_groups(texts["human"], texts["model"], "f1", texts["site"], rng=1).iloc[0]
    assert 0 < boot["se"] < boot["high"] - boot["low"] and np.isnan(boot["df"])


def _small_subgroup_texts():
    """A subgroup of 4 therapists of 14, 3, 2 and 2 reflections beside clinic_a's 21."""
    texts = pc.load_example()
    four = texts["person"].isin(["T29", "T31", "T32", "T35"])
    return texts[(texts["site"] == "clinic_a") | four]


def test_a_subgroup_of_few_effective_persons_is_noted_and_warned_of():
    # Before: a half-width near 1 with no word of why (the table had no df or G*).
    few = _small_subgroup_texts()
    args = (few["human"], few["model"], "recall", few["site"])
    message = (
        r"caveat for subgroup 'clinic_b' against 'clinic_a': subgroup 'clinic_b' rests on 2\.1 "
        r"effective persons \(df 1\.1\): its interval is wide by necessity\.$"
    )
    with pytest.warns(pc.UndefinedMetricWarning, match=message):
        table = pc.compare_groups(*args, groups=few["person"])
    assert table.loc[0, "effective_persons"] == pytest.approx(21**2 / (14**2 + 9 + 4 + 4))
    assert table.loc[0, "df"] == pytest.approx(21**2 / 213 - 1)
    report = pc.report(*args[:2], groups=few["person"], by=few["site"], differences=True,
                       metrics=["recall"], rng=1)  # fmt: skip
    note = report.loc[report["reference"] == "clinic_a", "note"].item()
    assert note.endswith(
        "; subgroup 'clinic_b' rests on 2.1 effective persons (df 1.1): its interval is wide "
        "by necessity"
    )
    # the reference's side counts too, and both are named when both are few
    with pytest.warns(pc.UndefinedMetricWarning, match=r"the reference 'clinic_b' rests on 2\.1"):
        pc.compare_groups(*args, groups=few["person"], reference="clinic_b")
    frame = nested_texts(3, persons=(3, 4), mean_texts=10)
    with pytest.warns(pc.UndefinedMetricWarning, match=r"subgroup 'b' and the reference 'a' rest"):
        pc.compare_groups(
            frame["human"], frame["model"], "recall", frame["by"], groups=frame["person"]
        )
    # the bootstrap has no df: its note says to read the interval as approximate
    with pytest.warns(
        pc.UndefinedMetricWarning, match=r"effective persons: too few .* approximate"
    ):
        pc.compare_groups(*args, groups=few["person"], method="bootstrap", n_resamples=200, rng=1)
    # without persons there is nothing to say; the example's clinics are many persons
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pc.compare_groups(*args)
        texts = pc.load_example()
        pc.compare_groups(
            texts["human"], texts["model"], "recall", texts["site"], groups=texts["person"]
        )


def test_compare_groups_counts_warns_of_few_effective_persons():
    few = np.array([[14, 0, 0, 5], [3, 0, 0, 7], [2, 0, 1, 6], [2, 0, 0, 8]])
    many = np.tile([[4, 1, 1, 6], [3, 1, 2, 6]], (6, 1))  # 12 persons of 5 positives
    with pytest.warns(pc.UndefinedMetricWarning, match=r"the subgroup rests on 2\.2 effective"):
        one = compare_groups_counts(few, many, "recall", nested=True)
    assert one.effective_persons == pytest.approx(22**2 / (14**2 + 9 + 9 + 4))
    assert one.effective_persons_reference == pytest.approx(12.0)
    # a batch: the first as above (padded with persons without texts), the second many
    batch_a = np.stack([np.vstack([few, np.zeros((8, 4))]), many])
    batch_b = np.stack([many, many])
    with pytest.warns(pc.UndefinedMetricWarning, match=r"1 of 2 data sets have a side with fewer"):
        both = compare_groups_counts(batch_a, batch_b, "recall", nested=True)
    np.testing.assert_allclose(both.effective_persons, [one.effective_persons, 12.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compare_groups_counts(many, many, "recall", nested=True)


def test_a_small_subgroup_of_unequal_persons_covers_with_few_df():
    # 4 persons (lognormal sizes, mean 20 texts, CV 1) beside 25, rate 0.8 on both sides
    # with logit-normal persons (SD 0.7): the interval covers, on G* of about 2-4 and df
    # of 1-3, and every data set is warned of
    rng = np.random.default_rng(26)
    reps = 2000

    def side(persons):
        sigma = np.sqrt(np.log(2))  # a CV of 1
        sizes = np.maximum(
            1, np.round(rng.lognormal(np.log(20) - sigma**2 / 2, sigma, (reps, persons)))
        )
        rate = 1 / (1 + np.exp(-(np.log(4) + rng.normal(0, 0.7, (reps, persons)))))
        right = rng.binomial(sizes.astype(int), rate)
        zero = np.zeros_like(right)
        return np.stack([right, zero, sizes.astype(int) - right, zero], -1)  # accuracy

    with pytest.warns(pc.UndefinedMetricWarning, match=f"{reps} of {reps} data sets have a side"):
        result = compare_groups_counts(side(4), side(25), "accuracy", nested=True)
    covered = (result.low <= 0) & (0 <= result.high)  # the same population: a difference of 0
    coverage, se = covered.mean(), np.sqrt(0.95 * 0.05 / reps)
    assert coverage >= 0.95 - 3 * se  # 0.984
    assert np.all(result.effective_persons < 5) and np.median(result.df) < 3
