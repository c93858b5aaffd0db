"""Repeated runs of a stochastic classifier (perfci.runs).

References: with one text per unit the variance-components interval is the two-way
crossed ANOVA without replication, whose mean squares come from statsmodels'
``anova_lm`` on an OLS fit with text and run factors (written beside each check).
"""

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm

import perfci as pc
from perfci.runs import (
    RunsComparison,
    compare_runs,
    majority_vote,
    run_sources,
    runs_ci,
    runs_ci_counts,
)


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def _texts(seed=0, n=120, runs=4, run_shift=(0.0, 0.6, -0.4, 0.2), prevalence=0.4):
    """Texts with a latent difficulty and runs with a systematic shift (probit scale)."""
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < prevalence
    difficulty = rng.normal(0, 1, n)
    shift = np.asarray(run_shift[:runs])
    base = np.where(truth, 1.2, -1.2)[:, None] + difficulty[:, None] + shift
    pred = rng.random((n, runs)) < stats.norm.cdf(base)
    return truth.astype(int), pred.astype(int)


def _cells(truth, pred):
    cell = 2 * (1 - pred) + (1 - truth[:, None])
    return np.eye(4, dtype=int)[cell]


def _anova_mean_squares(x):
    """MS_text, MS_run, MS_residual of an (n, R) table by statsmodels."""
    n, runs = x.shape
    frame = pd.DataFrame(
        {
            "y": x.ravel().astype(float),
            "text": np.repeat(np.arange(n), runs),
            "run": np.tile(np.arange(runs), n),
        }
    )
    table = anova_lm(smf.ols("y ~ C(text) + C(run)", data=frame).fit())
    ms = table["sum_sq"] / table["df"]
    return ms["C(text)"], ms["C(run)"], ms["Residual"]


def test_recall_variance_is_the_two_way_anova_of_statsmodels():
    truth, pred = _texts(1)
    ci_new = runs_ci_counts(_cells(truth, pred), "recall")
    ci_these = runs_ci_counts(_cells(truth, pred), "recall", estimand="these_runs")
    x = pred[truth == 1]  # recall: the runs' labels of the human positives
    n, runs = x.shape
    ms_a, ms_b, ms_e = _anova_mean_squares(x)
    assert ci_new.estimate == pytest.approx(x.mean(), abs=1e-12)
    assert ci_new.var_units == pytest.approx(ms_a / (n * runs), rel=1e-9)
    assert ci_new.var_runs == pytest.approx(max(ms_b - ms_e, 0) / (n * runs), rel=1e-9)
    assert ci_these.se**2 == pytest.approx(ms_a / (n * runs), rel=1e-9)
    # Satterthwaite's df of (MS_A + MS_B - MS_E) / (nR)
    parts = ms_a**2 / (n - 1) + ms_b**2 / (runs - 1) + ms_e**2 / ((n - 1) * (runs - 1))
    assert ci_new.df == pytest.approx((ms_a + ms_b - ms_e) ** 2 / parts, rel=1e-9)
    assert ci_these.df == n - 1
    assert ci_new.sources == ("texts", "runs") and ci_these.sources == ("texts",)


def test_no_run_effect_beyond_noise_adds_nothing():
    # the same labels in every run but for noise on a few texts: MS_B < MS_E here
    rng = np.random.default_rng(3)
    truth = (rng.random(200) < 0.5).astype(int)
    pred = np.repeat(truth[:, None], 3, axis=1)
    flip = rng.random(pred.shape) < 0.05
    pred = np.where(flip, 1 - pred, pred)
    x = pred[truth == 1]
    ms_a, ms_b, ms_e = _anova_mean_squares(x)
    ci = runs_ci_counts(_cells(truth, pred), "recall")
    if ms_b <= ms_e:
        assert ci.var_runs == 0 and ci.df == x.shape[0] - 1
    else:  # the draw happened to give a run effect; the formula still holds
        assert ci.var_runs == pytest.approx((ms_b - ms_e) / x.size, rel=1e-9)


def test_compressed_units_equal_the_texts_one_by_one():
    truth, pred = _texts(2)
    cells = _cells(truth, pred)
    flat = cells.reshape(cells.shape[0], -1)
    patterns, index, counts = np.unique(flat, axis=0, return_inverse=True, return_counts=True)
    compressed = patterns.reshape(-1, *cells.shape[1:])
    for metric in ("recall", "precision", "f1", "kappa"):
        for estimand in ("new_run", "these_runs"):
            one = runs_ci_counts(cells, metric, estimand=estimand)
            many = runs_ci_counts(compressed, metric, multiplicity=counts, estimand=estimand)
            for field in ("estimate", "low", "high", "se", "df"):
                assert getattr(many, field) == pytest.approx(getattr(one, field), rel=1e-10)
            assert many.units == one.units


def test_runs_that_agree_give_the_cluster_robust_interval_of_one_run():
    # nested texts, every run the same: these_runs is the cluster-robust proportion
    # interval of perfci.clustered_proportion_ci (Agresti-Coull, Dean-Pagano df)
    rng = np.random.default_rng(4)
    person = np.repeat(np.arange(15), rng.integers(3, 12, 15))
    truth = np.ones(person.size, dtype=int)
    one = (rng.random(person.size) < rng.beta(8, 2, 15)[person]).astype(int)
    pred = np.repeat(one[:, None], 3, axis=1)
    ci = runs_ci(truth, pred, "recall", groups=person, estimand="these_runs")
    successes = np.bincount(person, weights=one)
    trials = np.bincount(person).astype(float)
    ref = pc.clustered_proportion_ci(
        successes, trials, method="agresti_coull", design="cluster_robust", df_adjust="dean_pagano"
    )
    assert (ci.low, ci.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert ci.sources == ("texts", "persons")
    # and a new run adds nothing: the runs do not differ
    new = runs_ci(truth, pred, "recall", groups=person)
    assert new.var_runs == pytest.approx(0, abs=1e-20)
    assert (new.low, new.high) == pytest.approx((ci.low, ci.high), abs=1e-9)
    assert new.sources == ("texts", "persons", "runs") and new.flip_share == 0


def test_padding_persons_and_batching_change_nothing():
    truth, pred = _texts(5, n=90)
    person = np.arange(90) // 6
    cells = np.zeros((15, 4, 4))
    np.add.at(cells, (person[:, None], np.arange(4), 2 * (1 - pred) + (1 - truth[:, None])), 1)
    padded = np.concatenate([cells, np.zeros((3, 4, 4))])
    for method, extra in (("variance_components", {}), ("bootstrap", {"n_resamples": 300})):
        a = runs_ci_counts(cells, "f1", nested=True, method=method, rng=2, **extra)
        b = runs_ci_counts(padded, "f1", nested=True, method=method, rng=2, **extra)
        assert (a.low, a.high) == pytest.approx((b.low, b.high), abs=1e-14)
        stacked = runs_ci_counts(
            np.stack([cells, padded[:15]]), "f1", nested=True, method=method, rng=2, **extra
        )
        stream = pc.batch_generators(2, 2)[1]
        second = runs_ci_counts(cells, "f1", nested=True, method=method, rng=stream, **extra)
        assert stacked.low[1] == pytest.approx(second.low, abs=1e-14)
        assert stacked.run_estimates.shape == (2, 4)
    small = runs_ci_counts(
        cells, "f1", nested=True, method="bootstrap", n_resamples=300, rng=2, batch=7
    )
    big = runs_ci_counts(cells, "f1", nested=True, method="bootstrap", n_resamples=300, rng=2)
    assert (small.low, small.high) == (big.low, big.high)


def test_more_systematic_run_differences_widen_only_the_new_run_interval():
    truth, pred = _texts(6, n=400, run_shift=(0.0, 0.0, 0.0, 0.0))
    _, shifted = _texts(6, n=400, run_shift=(0.0, 0.8, -0.8, 0.4))
    flat = runs_ci_counts(_cells(truth, pred), "recall")
    wide = runs_ci_counts(_cells(truth, shifted), "recall")
    assert wide.half_width > 2 * flat.half_width
    assert wide.run_sd > 3 * flat.run_sd
    these = runs_ci_counts(_cells(truth, shifted), "recall", estimand="these_runs")
    assert these.half_width < wide.half_width / 2


def test_majority_vote_and_its_ties():
    assert majority_vote(np.array([0, 1, 2]), 2) == (pytest.approx([False, False, True]), 1)
    truth, pred = _texts(7, runs=4)
    votes = pred.sum(1)
    with pytest.warns(pc.UndefinedMetricWarning, match=r"texts have as many positive as negative"):
        ci = runs_ci(truth, pred, "recall", estimand="majority")
    ref = pc.metric_ci(truth, (2 * votes > 4).astype(int), "recall")
    assert (ci.estimate, ci.low, ci.high) == (ref.estimate, ref.low, ref.high)
    assert ci.sources == ("texts",) and ci.estimand == "majority"
    odd = pred[:, :3]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runs_ci(truth, odd, "recall", estimand="majority")
    with pytest.raises(ValueError, match=r"`method` must be 'recommended' for estimand 'majority'"):
        runs_ci(truth, odd, "recall", estimand="majority", method="bootstrap")


def test_metric_ci_routes_a_column_per_run(texts):
    runs = texts[["run1", "run2", "run3"]]
    ci = pc.metric_ci(texts["human"], runs, "precision", groups=texts["person"])
    ref = runs_ci(texts["human"], runs.to_numpy(), "precision", groups=texts["person"])
    assert (ci.low, ci.high) == (ref.low, ref.high)
    assert 0 < ci.flip_share < 0.2 and ci.run_estimates.shape == (3,)
    with pytest.raises(ValueError, match=r"^`design` is an option of the intervals of one run"):
        pc.metric_ci(texts["human"], runs, "precision", design="icc")
    with pytest.raises(ValueError, match=r"^`estimand` says what an interval of repeated runs"):
        pc.metric_ci(texts["human"], texts["model"], "precision", estimand="new_run")
    with pytest.raises(ValueError, match=r"^`estimand` must be one of"):
        pc.metric_ci(texts["human"], runs, "precision", estimand="all_runs")


def test_bad_input_names_the_argument():
    truth, pred = _texts(8)
    cells = _cells(truth, pred)
    with pytest.raises(ValueError, match=r"^`cells` must have shape \(\*batch, units, runs, 4\)"):
        runs_ci_counts(cells[..., :3], "recall")
    with pytest.raises(ValueError, match=r"^`cells` must hold at least 2 runs"):
        runs_ci_counts(cells[:, :1], "recall")
    uneven = cells.copy()
    uneven[0, 0] = 0
    with pytest.raises(ValueError, match=r"same number of texts in every run"):
        runs_ci_counts(uneven, "recall")
    with pytest.raises(ValueError, match=r"^`metric` must be a binary metric"):
        runs_ci_counts(cells, "macro_f1")
    with pytest.raises(ValueError, match=r"^`estimand` 'majority' is the majority vote"):
        runs_ci_counts(cells, "recall", estimand="majority")
    with pytest.raises(ValueError, match=r"^`n_resamples` is an option of the bootstrap"):
        runs_ci_counts(cells, "recall", n_resamples=100)
    with pytest.raises(ValueError, match=r"^`multiplicity` must have the shape of the units"):
        runs_ci_counts(cells, "recall", multiplicity=[1, 2])
    with pytest.raises(ValueError, match=r"^`y_pred` must hold at least 2 runs"):
        runs_ci(truth, pred[:, :1], "recall")
    with pytest.raises(ValueError, match=r"^`y_pred` must have one row per text"):
        runs_ci(truth[:-1], pred, "recall")
    with pytest.raises(ValueError, match=r"^`groups` must have one id per text"):
        runs_ci(truth, pred, "recall", groups=[1, 2])


def test_undefined_runs_and_one_unit_are_nan_with_a_warning():
    truth = np.zeros(20, dtype=int)  # no human positives: recall undefined in every run
    pred = np.zeros((20, 3), dtype=int)
    with pytest.warns(pc.UndefinedMetricWarning, match="recall is undefined in at least one of"):
        ci = runs_ci_counts(_cells(truth, pred), "recall")
    assert np.isnan(ci.low) and np.isnan(ci.high)
    cells = _cells(np.ones(5, dtype=int), np.ones((5, 3), dtype=int))[None].sum(1)  # one unit
    with pytest.warns(pc.UndefinedMetricWarning, match="fewer than 2 units"):
        one = runs_ci_counts(cells[:, None] if cells.ndim == 3 else cells, "recall", nested=True)
    assert np.isnan(one.low)


def test_run_sources():
    assert run_sources("majority", True) == ("texts", "persons")
    with pytest.raises(ValueError, match="`estimand`"):
        run_sources("every_run", False)


def test_compare_one_run_each_is_the_paired_cluster_robust_variance(texts):
    # with one (fixed) run each the units' part is compare's cluster-robust variance of
    # the paired difference (its robust_se), persons as clusters
    for metric in ("recall", "precision", "f1"):
        mine = compare_runs(
            texts["human"], texts["model"], texts["model_b"], metric, groups=texts["person"]
        )
        ref = pc.compare(
            texts["human"],
            texts["model"],
            texts["model_b"],
            metric,
            groups=texts["person"],
            method="cluster_robust",
        )
        assert mine.difference == pytest.approx(ref.difference, abs=1e-12)
        assert mine.se == pytest.approx(ref.robust_se, rel=1e-9)
        assert mine.var_runs_a == mine.var_runs_b == 0
        assert mine.sources == ("texts", "persons")


def test_compare_with_runs_adds_their_variance_and_routes_from_compare(texts):
    runs = texts[["run1", "run2", "run3"]]
    result = pc.compare(texts["human"], runs, texts["model_b"], "precision", groups=texts["person"])
    assert isinstance(result, RunsComparison) and result.runs_a == 3 and result.runs_b == 1
    assert result.sources == ("texts", "persons", "runs") and result.var_runs_a > 0
    these = pc.compare(
        texts["human"],
        runs,
        texts["model_b"],
        "precision",
        groups=texts["person"],
        estimand="these_runs",
    )
    assert these.var_runs_a == 0 and these.se < result.se
    assert these.sources == ("texts", "persons")
    # a classifier against itself: no difference, and the interval holds 0
    same = pc.compare(texts["human"], runs, runs, "recall", groups=texts["person"])
    assert same.difference == 0 and same.low <= 0 <= same.high
    with pytest.raises(ValueError, match=r"^`scheme` is an option of the comparisons of one run"):
        pc.compare(texts["human"], runs, texts["model_b"], "recall", scheme="iid")
    with pytest.raises(ValueError, match=r"^`estimand` says what a comparison of repeated runs"):
        pc.compare(texts["human"], texts["model"], texts["model_b"], "recall", estimand="new_run")
    with pytest.raises(ValueError, match=r"^`estimand` must be one of \['new_run', 'these_runs'\]"):
        pc.compare(texts["human"], runs, texts["model_b"], "recall", estimand="majority")


def test_a_missing_run_label_is_named_by_its_row_and_run(texts):
    runs = texts[["run1", "run2"]].astype(float)
    runs.iloc[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"^`y_pred` contains missing labels .* row 3, run 'run2'"):
        pc.metric_ci(texts["human"], runs, "recall")
    with pytest.raises(ValueError, match=r"^`pred_a` contains missing labels .* row 3, run 'run2'"):
        pc.compare(texts["human"], runs, texts["model_b"], "recall")


def test_n_resamples_given_is_a_bootstrap_option_even_at_2000():
    # "left unset" is the sentinel "recommended", never the default value: 2000 passed
    # explicitly is a given value, as 200 is
    truth, pred = _texts(9)
    for given in (200, 2000):
        with pytest.raises(ValueError, match=r"^`n_resamples` is an option of the bootstrap"):
            runs_ci(truth, pred, "recall", n_resamples=given)
        with pytest.raises(ValueError, match=r"^`n_resamples` is an option of the bootstrap"):
            runs_ci_counts(_cells(truth, pred), "recall", n_resamples=given)
        with pytest.raises(ValueError, match=r"^`n_resamples` is an option of the bootstrap"):
            pc.metric_ci(truth, pred, "recall", n_resamples=given)
    # with the bootstrap, unset and "recommended" are 2000 resamples, and 2000 is used
    unset = runs_ci(truth, pred, "recall", method="bootstrap", rng=3)
    named = runs_ci(truth, pred, "recall", method="bootstrap", n_resamples="recommended", rng=3)
    given = runs_ci(truth, pred, "recall", method="bootstrap", n_resamples=2000, rng=3)
    assert (unset.low, unset.high) == (named.low, named.high) == (given.low, given.high)
    fewer = runs_ci(truth, pred, "recall", method="bootstrap", n_resamples=200, rng=3)
    assert (fewer.low, fewer.high) != (given.low, given.high)
    with pytest.raises(ValueError, match=r"^`n_resamples` must be a positive integer"):
        runs_ci(truth, pred, "recall", method="bootstrap", n_resamples="many")


def test_the_bootstrap_draws_compressed_and_single_units_alike():
    # the two ways the crossed bootstrap draws its units through the engine, as counts of
    # identical units (Multinomial(m, multiplicities / m)) or each unit as a person, are
    # the same distribution: the intervals agree within their Monte-Carlo error
    truth, pred = _texts(10, n=2000, runs=3)
    cells = _cells(truth, pred)
    flat = cells.reshape(cells.shape[0], -1)
    patterns, counts = np.unique(flat, axis=0, return_counts=True)
    compressed = patterns.reshape(-1, *cells.shape[1:])
    options = {"method": "bootstrap", "n_resamples": 20000}
    one = runs_ci_counts(cells, "f1", rng=4, **options)
    many = runs_ci_counts(compressed, "f1", multiplicity=counts, rng=5, **options)
    assert many.estimate == pytest.approx(one.estimate, abs=1e-12)
    assert many.se == pytest.approx(one.se, rel=0.03)
    assert (many.low, many.high) == pytest.approx((one.low, one.high), abs=0.003)
    # and the counts' draws do not depend on the batch either
    small = runs_ci_counts(compressed, "f1", multiplicity=counts, rng=5, batch=7, **options)
    assert (small.low, small.high, small.se) == (many.low, many.high, many.se)


def test_compare_runs_counts_is_what_compare_runs_computes(texts):
    from perfci.crossed import person_run_cells
    from perfci.runs import compare_runs_counts

    runs = texts[["run1", "run2", "run3"]]
    person = pd.factorize(texts["person"])[0]
    truth = texts["human"].to_numpy() == 1

    def cells(labels):
        said = np.asarray(labels).reshape(len(truth), -1) == 1
        return person_run_cells(2 * (~said) + (~truth)[:, None], person)

    for estimand in ("new_run", "these_runs"):
        mine = compare_runs_counts(
            cells(runs), cells(texts["model_b"]), "precision", nested=True, estimand=estimand
        )
        ref = compare_runs(
            texts["human"],
            runs,
            texts["model_b"],
            "precision",
            groups=texts["person"],
            estimand=estimand,
        )
        assert mine == ref
    with pytest.raises(ValueError, match=r"^`cells_b` must hold the units of `cells_a`"):
        compare_runs_counts(cells(runs), cells(texts["model_b"])[:-1], "precision")
    with pytest.raises(ValueError, match=r"same number of texts in every run"):
        compare_runs_counts(cells(runs), cells(texts["model_b"]) * 2, "precision")


def test_the_majority_vote_of_runs_is_the_one_majority_vote_with_ties_negative():
    from perfci._core.labels import majority_of_counts
    from perfci._core.labels import majority_vote as core_vote

    votes = np.array([0, 1, 2, 3, 4])
    labels, ties = majority_vote(votes, 4)
    counts = np.stack([4 - votes, votes], axis=-1)
    assert labels.tolist() == (majority_of_counts(counts, tie=0) == 1).tolist()
    assert ties == int(np.sum(majority_of_counts(counts) < 0)) == 1
    # from the runs' labels (0 negative, 1 positive), the same votes
    table = (np.arange(4)[None, :] < votes[:, None]).astype(int)
    assert (core_vote(table, 2, tie=0) == 1).tolist() == labels.tolist()
    with pytest.raises(ValueError, match=r"^`tie` must be one of \['none'\] or a code index"):
        majority_of_counts(counts, tie="negative")


def _tiny_texts(positives, n=10, runs=3, seed=0):
    """`n` texts of which `positives` are positive, labelled by `runs` noisy runs."""
    rng = np.random.default_rng(seed)
    truth = np.zeros(n, dtype=int)
    truth[:positives] = 1
    pred = (rng.random((n, runs)) < np.where(truth[:, None] == 1, 0.8, 0.1)).astype(int)
    return truth, pred


def test_a_tiny_design_gets_the_median_runs_interval_of_one_run_with_a_warning():
    # 10 texts, 3 runs: fewer than CROSSED_TINY_RELEVANT relevant texts per run, where the
    # variance components under-cover (stress atlas); the interval is the recommended
    # interval of one classifier of the median run, and says so
    from perfci.crossed import TinyDesignWarning, median_levels
    from perfci.metrics import metric_values

    truth, pred = _tiny_texts(3)
    cells = _cells(truth, pred)
    checked = set()
    for metric in ("f1", "recall", "precision"):
        per_run = cells.sum(0)
        with pytest.warns(TinyDesignWarning, match="tiny.*median run alone"):
            ci = runs_ci_counts(cells, metric, rng=7)
        assert ci.method.startswith("median run"), ci.method
        assert "a tiny design" in ci.method
        assert f"fewer than {pc.policy.CROSSED_TINY_RELEVANT})" in ci.method
        assert np.isnan(ci.df)
        middle = median_levels(metric_values(per_run.astype(float), metric))
        ones = [pc.metric_ci_counts(per_run[r], metric, rng=7) for r in middle]
        if middle.size == 1:  # one median run: exactly its interval (the same stream)
            low, high = ones[0].low, ones[0].high
        else:  # the median runs' intervals joined (agresti_coull: no stream)
            assert all(o.method == "agresti_coull" for o in ones)
            low, high = min(o.low for o in ones), max(o.high for o in ones)
        expected = (min(low, ci.estimate), max(high, ci.estimate))  # holds the estimate
        assert (ci.low, ci.high) == pytest.approx(expected)
        assert ones[0].method in ci.method and ("joined" in ci.method) == (middle.size > 1)
        checked.add(int(middle.size))
        assert ci.low <= ci.estimate <= ci.high
        # the variance components by name, these runs and the bootstrap keep their intervals
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            by_name = runs_ci_counts(cells, metric, method="variance_components")
            these = runs_ci_counts(cells, metric, estimand="these_runs")
        assert by_name.method.startswith("variance components (texts x runs)")
        assert these.method.startswith("cluster-robust")
    assert checked == {1, 2}  # one median run, and two joined
    # from labels, as metric_ci routes a column per run
    with pytest.warns(TinyDesignWarning):
        labelled = pc.metric_ci(truth, pred, "f1", rng=7)
    assert labelled.method.startswith("median run")


def test_the_tiny_rule_stops_at_its_threshold():
    # recall's relevant texts are the positives, the same in every run: at the threshold
    # the variance components, one positive fewer the median run's interval
    from perfci.crossed import TinyDesignWarning

    threshold = pc.policy.CROSSED_TINY_RELEVANT
    truth, pred = _tiny_texts(threshold, n=30)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        at = runs_ci_counts(_cells(truth, pred), "recall")
    assert at.method == "variance components (texts x runs), agresti_coull on n_eff (dean_pagano)"
    truth, pred = _tiny_texts(threshold - 1, n=30)
    with pytest.warns(TinyDesignWarning, match=f"{threshold - 1}.0 relevant texts per run"):
        below = runs_ci_counts(_cells(truth, pred), "recall")
    assert below.method.startswith("median run") and "(agresti_coull)" in below.method
    # in a batch only the tiny data sets change, and the description says how many
    batch = np.stack(
        [_cells(*_tiny_texts(threshold, n=30)), _cells(*_tiny_texts(threshold - 1, n=30))]
    )
    with pytest.warns(TinyDesignWarning, match="1 of 2 data sets are tiny"):
        both = runs_ci_counts(batch, "recall")
    assert both.low.tolist() == pytest.approx([at.low, below.low])
    assert "; for 1 of 2 (fewer than 8 relevant texts per run): median run" in both.method


def test_a_tiny_design_whose_median_run_has_one_relevant_text():
    # one positive text among 10; runs 1 and 3 call only it positive, run 2 two more:
    # the median runs have one relevant text, too few for an interval of one run. F1
    # (whose variance components covered about 0.75 there) gets none: no method is known
    # to cover; precision keeps its variance-components interval (which covered)
    from perfci.crossed import TinyDesignWarning

    truth = np.zeros(10, dtype=int)
    truth[0] = 1
    pred = np.zeros((10, 3), dtype=int)
    pred[0] = 1
    pred[[1, 2], 1] = 1
    cells = _cells(truth, pred)
    with pytest.warns(pc.UndefinedMetricWarning, match="no method is known to cover here"):
        f1 = runs_ci_counts(cells, "f1", rng=1)
    assert np.isnan(f1.low) and np.isnan(f1.high)
    assert f1.method.startswith("none: a tiny design, 1.7 relevant texts per run")
    with pytest.warns(TinyDesignWarning, match="too few for an interval of one run"):
        precision = runs_ci_counts(cells, "precision")
    assert precision.method.startswith("variance components (texts x runs)")
    assert "whose median run has fewer than 2 texts with a relevant text" in precision.method
    by_name = runs_ci_counts(cells, "precision", method="variance_components")
    assert (precision.low, precision.high) == (by_name.low, by_name.high)


def test_new_run_df_is_capped_by_the_runs():
    # two runs that differ on a few texts, 60 persons: the run part is estimated on one
    # df (here truncated at 0), so the df are at most CROSSED_DF_PER_RUN x (runs - 1),
    # not units - 1 = 59
    rng = np.random.default_rng(9)
    person = np.repeat(np.arange(60), 8)
    truth = np.ones(person.size, dtype=int)
    one = (rng.random(person.size) < 0.85).astype(int)
    two = one.copy()
    flip = rng.choice(person.size, 6, replace=False)
    two[flip] = 1 - two[flip]
    pred = np.stack([one, two], axis=1)
    new = runs_ci(truth, pred, "recall", groups=person)
    assert new.df == pytest.approx(pc.policy.CROSSED_DF_PER_RUN * 1)
    these = runs_ci(truth, pred, "recall", groups=person, estimand="these_runs")
    assert these.df > new.df  # the runs as given: no run part, no cap


def test_f1_interval_is_the_delta_method_on_the_logit_scale_kappa_stays_plain():
    # F1 lies in [0, 1] and its sampling distribution is skewed: t on the logit scale,
    # expit(logit F1 +- t se / (F1 (1 - F1))), from the interval's own se and df; kappa,
    # in [-1, 1], keeps kappa +- t se
    truth, pred = _texts(seed=3, n=150)
    cells = _cells(truth, pred)
    for metric in ("f1", "kappa"):
        ci = runs_ci_counts(cells, metric, method="variance_components")
        q = stats.t.ppf(0.975, ci.df)
        if metric == "f1":
            centre, spread = np.log(ci.estimate / (1 - ci.estimate)), q * ci.se
            spread /= ci.estimate * (1 - ci.estimate)
            ends = 1 / (1 + np.exp(-(centre - spread))), 1 / (1 + np.exp(-(centre + spread)))
            assert "logit" in ci.method
            # longer below the estimate than above it (an F1 above 0.5)
            assert ci.estimate - ci.low > ci.high - ci.estimate
        else:
            ends = ci.estimate - q * ci.se, ci.estimate + q * ci.se
        assert (ci.low, ci.high) == pytest.approx(ends, rel=1e-12)


def test_training_seeds_are_runs_under_their_own_name():
    texts = pc.load_example()
    seeds = texts[["run1", "run2", "run3"]]
    for estimand in ("new_run", "these_runs", "majority"):
        as_runs = pc.runs_ci(texts["human"], seeds, "recall", groups=texts["person"],
                             estimand=estimand)  # fmt: skip
        as_seeds = pc.runs_ci(texts["human"], seeds, "recall", groups=texts["person"],
                              estimand=estimand, source="seeds")  # fmt: skip
        assert (as_seeds.low, as_seeds.high) == (as_runs.low, as_runs.high)
        assert as_seeds.sources == tuple("seeds" if s == "runs" else s for s in as_runs.sources)
        assert " run" not in as_seeds.population
    new = pc.runs_ci(texts["human"], seeds, "recall", source="seeds")
    assert new.sources == ("texts", "seeds") and "new training seed" in new.population
    with pytest.raises(ValueError, match="`source` must be one of"):
        pc.runs_ci(texts["human"], seeds, "recall", source="models")
