"""Many classifiers on the same texts: perfci.many (compare_many, rank_ci).

Reference values: perfci.compare's cluster-robust interval (each unadjusted comparison
is it, exactly), statsmodels' multipletests (Holm), scipy's multivariate t distribution
function (the max-t critical value), and a Monte-Carlo check of family-wise coverage with
its tolerance from the Monte-Carlo error.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import perfci as pc
from perfci.many import (
    compare_many,
    difference_contrasts,
    joint_many,
    many_intervals,
    rank_ci,
)


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


PREDS = ["model", "model_b", "run2", "run3"]


@pytest.mark.parametrize("metric", ["recall", "precision", "f1", "kappa"])
@pytest.mark.parametrize("nested", [False, True])
def test_each_unadjusted_comparison_is_compares_cluster_robust_interval(texts, metric, nested):
    groups = texts["person"] if nested else None
    table = compare_many(
        texts["human"], texts[PREDS], metric, groups=groups, baseline="model", adjust="none"
    )
    for row in table.itertuples():
        ref = pc.compare(
            texts["human"],
            texts[row.classifier],
            texts["model"],
            metric,
            groups=groups,
            method="cluster_robust",
        )
        assert row.difference == pytest.approx(ref.difference, rel=1e-12, abs=1e-15)
        assert row.se == pytest.approx(ref.robust_se, rel=1e-12)
        assert row.df == pytest.approx(ref.df, rel=1e-12)
        assert (row.low, row.high) == pytest.approx((ref.low, ref.high), rel=1e-12, abs=1e-15)
        if ref.test.startswith("cluster-robust"):  # recall's test is McNemar's
            assert row.p_value == pytest.approx(ref.p_value, rel=1e-10)


def test_two_classifiers_are_compare(texts):
    table = compare_many(texts["human"], texts[["model_b", "model"]], "f1", groups=texts["person"])
    ref = pc.compare(texts["human"], texts["model_b"], texts["model"], "f1", groups=texts["person"])
    row = table.iloc[0]
    assert (row["low"], row["high"], row["difference"]) == (ref.low, ref.high, ref.difference)
    assert row["method"] == ref.method


def test_the_max_t_critical_value_is_the_multivariate_t_quantile(texts):
    # P(max |T_p| <= c) for T multivariate t with the differences' correlation and the
    # smallest df is the level: scipy's multivariate_t.cdf of the box [-c, c] (its own
    # quasi-Monte-Carlo error about 1e-4 here) against the Sobol quantile's
    names, joint = joint_many(texts["human"], texts[PREDS], groups=texts["person"])
    pairs = [(1, 0), (2, 0), (3, 0)]
    found = many_intervals(
        joint, 4, "recall", difference_contrasts(pairs, 4), nested=True, confidence_level=0.9
    )
    se, df = found["se"], found["df"].min()
    # the covariance's correlation, from the unadjusted ends' pieces
    from perfci.many import _statistics  # noqa: PLC2701 (the test reads the core's covariance)

    cov = _statistics(np.asarray(joint), 4, "recall", True, difference_contrasts(pairs, 4))
    corr = cov["covariance"] / np.outer(se, se)
    c = float(found["critical"][0])
    box = stats.multivariate_t(shape=corr, df=df, seed=1).cdf(
        np.full(3, c), lower_limit=np.full(3, -c), maxpts=2_000_000
    )
    assert box == pytest.approx(0.9, abs=2e-3)
    single = stats.t.ppf(0.95, df)
    bonferroni = stats.t.ppf(1 - 0.1 / 6, df)
    assert single < c < bonferroni


def test_holm_equals_statsmodels(texts):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    table = compare_many(texts["human"], texts[PREDS], "f1", groups=texts["person"], adjust="holm")
    expected = multitest.multipletests(table["p_value"], method="holm")[1]
    np.testing.assert_allclose(table["p_adjusted"], expected, rtol=1e-12)
    bonferroni = compare_many(
        texts["human"], texts[PREDS], "f1", groups=texts["person"], adjust="bonferroni"
    )
    np.testing.assert_allclose(
        bonferroni["p_adjusted"], np.minimum(6 * table["p_value"], 1), rtol=1e-12
    )
    # Holm's intervals are Bonferroni's (Holm orders tests, not intervals)
    np.testing.assert_allclose(table["low"], bonferroni["low"], rtol=1e-12)


def test_the_bands_nest(texts):
    ends = {
        adjust: compare_many(
            texts["human"], texts[PREDS], "recall", groups=texts["person"], adjust=adjust
        )
        for adjust in ("none", "max_t", "bonferroni")
    }
    width = {k: (v["high"] - v["low"]).to_numpy() for k, v in ends.items()}
    assert np.all(width["none"] < width["max_t"]) and np.all(width["max_t"] < width["bonferroni"])


def test_a_batch_equals_a_loop(texts):
    rng = np.random.default_rng(3)
    joints = []
    for _ in range(4):
        rows = rng.integers(0, len(texts), len(texts))
        joints.append(joint_many(texts["human"].iloc[rows], texts[PREDS].iloc[rows])[1])
    batch = many_intervals(np.stack(joints), 4, "recall", difference_contrasts([(1, 0), (2, 0)], 4))
    for i, joint in enumerate(joints):
        alone = many_intervals(joint, 4, "recall", difference_contrasts([(1, 0), (2, 0)], 4))
        for key in ("low", "high", "p_adjusted", "critical"):
            np.testing.assert_allclose(batch[key][i], alone[key], rtol=1e-12)


def _six_classifiers(rng: np.random.Generator, persons: int = 30, texts: int = 20):
    """Six classifiers sharing a person effect; true recall of classifier k from the law."""
    effect = rng.normal(0, 0.7, persons)
    person = np.repeat(np.arange(persons), texts)
    truth = rng.random(persons * texts) < 0.4
    base = np.array([1.2, 1.2, 1.5, 0.9, 1.2, 1.8])  # logits of recall
    shared = rng.normal(0, 1, persons * texts)  # texts hard for every classifier
    logits = base[:, None] + effect[person][None, :] + 0.8 * shared[None, :]
    noise = rng.normal(0, 1, logits.shape)
    predicted = np.where(truth, logits + noise > 0, rng.random(logits.shape) < 0.1)
    return truth.astype(int), predicted.T.astype(int), person


def test_simultaneous_intervals_cover_jointly_in_simulation():
    # 300 data sets of six classifiers on 30 persons x 20 texts; the truth of each
    # difference from a data set of 200,000 persons of the same law. Joint coverage of
    # the 5 differences from the baseline >= 0.95 - 4 MC SE (0.05 at 300 data sets)
    rng = np.random.default_rng(11)
    truth_big, pred_big, _ = _six_classifiers(rng, persons=200_000, texts=4)
    pos = truth_big == 1
    recall = np.array([pred_big[pos, k].mean() for k in range(6)])
    true_diff = recall[1:] - recall[0]
    joint_sets = []
    for _ in range(300):
        t, p, person = _six_classifiers(rng)
        joint_sets.append(joint_many(t, p, groups=person)[1])
    found = many_intervals(
        np.stack(joint_sets),
        6,
        "recall",
        difference_contrasts([(k, 0) for k in range(1, 6)], 6),
        nested=True,
    )
    covered = np.all((found["low"] <= true_diff) & (true_diff <= found["high"]), axis=-1)
    mc_se = np.sqrt(0.95 * 0.05 / covered.size)
    assert covered.mean() >= 0.95 - 4 * mc_se


def test_rank_sets():
    # three clearly different classifiers: singleton ranks; two identical: they share
    rng = np.random.default_rng(5)
    truth = rng.random(3000) < 0.5
    preds = pd.DataFrame(
        {
            "weak": np.where(truth, rng.random(3000) < 0.5, False),
            "good": np.where(truth, rng.random(3000) < 0.7, False),
            "best": np.where(truth, rng.random(3000) < 0.9, False),
        }
    ).astype(int)
    ranks = rank_ci(truth.astype(int), preds, "recall")
    assert list(ranks["classifier"]) == ["best", "good", "weak"]
    assert list(ranks["rank_low"]) == [1, 2, 3] and list(ranks["rank_high"]) == [1, 2, 3]
    preds["twin"] = preds["good"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        ranks = rank_ci(truth.astype(int), preds, "recall").set_index("classifier")
    assert (ranks.loc["good", "rank_low"], ranks.loc["good", "rank_high"]) == (2, 3)
    assert (ranks.loc["twin", "rank_low"], ranks.loc["twin", "rank_high"]) == (2, 3)
    # the simultaneous interval of each metric is wider than its own interval
    own = pc.metric_ci(truth.astype(int), preds["best"], "recall")
    assert ranks.loc["best", "low"] < own.low or ranks.loc["best", "high"] > own.high


def test_an_undefined_comparison_is_nan_with_a_warning(texts):
    preds = texts[["model", "run1", "model_b"]]  # run1 is model's labels: no variance
    with pytest.warns(pc.UndefinedMetricWarning, match="run1 - model"):
        table = compare_many(texts["human"], preds, "recall", baseline="model")
    assert table.loc[0, "classifier"] == "run1" and np.isnan(table.loc[0, "low"])
    assert np.isfinite(table.loc[1, "low"])


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"preds": [[1]] * 4}, "`preds` must hold at least two"),
        ({"preds": [1, 0, 1, 0]}, "`preds` must be a table"),
        ({"metric": "roc_auc"}, "metric"),
        ({"adjust": "tukey"}, "`adjust` must be one of"),
        ({"baseline": "nope"}, "`baseline` must be one of"),
        ({"confidence_level": 1.5}, "confidence_level"),
        ({"groups": [1, 2]}, "`groups` must hold one person id per text"),
    ],
)
def test_bad_input_is_named(changes, named):
    args = {
        "y_true": [1, 0, 1, 0],
        "preds": {"a": [1, 0, 0, 0], "b": [1, 1, 1, 0], "c": [0, 0, 1, 0]},
        "metric": "recall",
    }
    args |= changes
    with pytest.raises(ValueError, match=named):
        compare_many(**args)


def test_the_many_nested_population_has_its_rates():
    # each classifier's pooled recall over 400 data sets of 30 persons averages to its
    # population recall (0.8 + 0.04 k) within 4 Monte-Carlo SEs of that mean; the
    # classifiers' correctness on a reference positive is positively correlated
    from perfci.harness.many_kernels import draw_many, many_truth
    from perfci.many import _cell_map  # noqa: PLC2701 (the layout the draws follow)

    params = {
        "classifiers": 4, "persons": 30, "texts_per_person": 10.0, "size_cv": 0.5,
        "min_texts": 1, "prevalence": 0.3, "icc_prevalence": 0.1, "recall": 0.8,
        "recall_step": 0.04, "specificity": 0.9, "icc": 0.1, "agreement": 0.5,
    }  # fmt: skip
    joint = draw_many(params, 400, np.random.default_rng(2))
    cells = np.einsum("rpj,jkc->rkc", joint.astype(float), _cell_map(4))
    recall = cells[..., 0] / (cells[..., 0] + cells[..., 2])  # (data sets, classifiers)
    truth = many_truth(params, "recall")
    np.testing.assert_allclose(truth, 0.8 + 0.04 * np.arange(4))
    mc_se = recall.std(0, ddof=1) / np.sqrt(recall.shape[0])
    assert np.all(np.abs(recall.mean(0) - truth) < 4 * mc_se)
    positive = joint[..., 16:].sum((0, 1))  # reference positive: bit 4 of the 32 cells
    code = np.arange(16)
    right0, right1 = (code >> 3) & 1, (code >> 2) & 1  # classifiers 0 and 1 call it positive
    total = positive.sum()
    p0, p1 = positive[right0 == 1].sum() / total, positive[right1 == 1].sum() / total
    both = positive[(right0 == 1) & (right1 == 1)].sum() / total
    assert both > p0 * p1 + 0.01  # dependent errors: more agreement than independence


def _cli(capsys, *argv):
    from perfci.cli import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_the_cli_compares_many_and_ranks(capsys, tmp_path, texts):
    import json

    path = tmp_path / "texts.csv"
    texts.to_csv(path, index=False)
    argv = ("--truth", "human", "--pred", *PREDS, "--metric", "recall", "--group", "person")
    status, out, _ = _cli(capsys, "compare", path, *argv, "--baseline", "model", "--json")
    assert status == 0
    rows = json.loads(out)
    table = compare_many(texts["human"], texts[PREDS], "recall", groups=texts["person"],
                         baseline="model")  # fmt: skip
    assert [r["low"] for r in rows] == pytest.approx(list(table["low"]), rel=1e-12)
    status, out, _ = _cli(capsys, "rank", path, *argv, "--json")
    ranks = rank_ci(texts["human"], texts[PREDS], "recall", groups=texts["person"])
    assert status == 0 and [r["rank_low"] for r in json.loads(out)] == list(ranks["rank_low"])


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (("--pred", "model"), "`--pred` must name two or more"),
        (("--pred-a", "model"), "takes `--pred-a` and `--pred-b`"),
        (("--pred", "model", "model_b", "--baseline", "nope"), "`--baseline` must be one of"),
        (("--pred-a", "model", "--pred-b", "model_b", "--baseline", "model"), "needs `--pred`"),
        (("--pred", "model", "model_b", "--method", "bootstrap"), "`--method` chooses"),
        (("--pred", "model", "score"), "`--pred` column 'score' looks like scores"),
    ],
)
def test_the_cli_names_a_bad_many_classifier_flag(capsys, tmp_path, texts, argv, named):
    path = tmp_path / "texts.csv"
    texts.to_csv(path, index=False)
    status, out, err = _cli(
        capsys, "compare", path, "--truth", "human", "--metric", "recall", *argv
    )
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert named in err


def test_an_undefined_classifier_leaves_the_others_their_intervals():
    # classifier b predicts no positive: its precision is undefined, and so is every
    # difference with it; the others keep theirs, with the df of the defined ones only
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    preds = pd.DataFrame(
        {"a": np.where(rng.random(200) < 0.9, y, 1 - y), "b": np.zeros(200, int),
         "c": np.where(rng.random(200) < 0.8, y, 1 - y)}
    )  # fmt: skip
    with pytest.warns(pc.UndefinedMetricWarning, match="a - b, b - c"):
        table = compare_many(y, preds, "precision")
    assert np.isnan(table.loc[[0, 2], "low"]).all()
    row = table.iloc[1]
    assert np.isfinite(row["low"]) and row["low"] < row["difference"] < row["high"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        ranks = rank_ci(y, preds, "precision").set_index("classifier")
    own = pc.metric_ci(y, preds["c"], "precision")
    assert ranks.loc["c", "low"] < own.low and ranks.loc["c", "high"] > own.high
    assert ranks.loc["c", "high"] - ranks.loc["c", "low"] < 2 * (own.high - own.low)
