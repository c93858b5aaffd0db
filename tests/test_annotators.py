"""A classifier against several annotators (perfci.annotators), in metric_ci, report and the CLI.

Reference: for accuracy with every text coded by every annotator, the variance of the
new-annotator interval is the two-way crossed ANOVA without replication of the
agreement indicators (texts x annotators), whose mean squares come from statsmodels'
``anova_lm`` (written beside the check).
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm

import perfci as pc
from perfci.annotators import annotator_ci, annotator_table, majority_reference
from perfci.cli import main
from perfci.runs import crossed_intervals


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def _coders(seed=0, n=150, annotators=4, shift=(0.0, 0.5, -0.5, 0.3), missing=0.0):
    """Texts with a true class and annotators who differ systematically (probit shifts)."""
    from scipy import stats

    rng = np.random.default_rng(seed)
    latent = rng.normal(0, 1, n)
    pred = (latent + rng.normal(0, 0.7, n) > 0.3).astype(int)
    shifts = np.asarray(shift[:annotators])
    codes = (rng.random((n, annotators)) < stats.norm.cdf(1.5 * latent[:, None] + shifts)).astype(
        float
    )
    codes[rng.random(codes.shape) < missing] = np.nan
    codes[np.isnan(codes).all(1), 0] = 1.0  # every text coded at least once
    return codes, pred


def test_accuracy_variance_is_the_two_way_anova_of_statsmodels():
    codes, pred = _coders(1)
    new = annotator_ci(codes, pred, "accuracy")
    these = annotator_ci(codes, pred, "accuracy", estimand="these_annotators")
    x = (codes == pred[:, None]).astype(float)  # agreement of each text with each annotator
    n, a = x.shape
    frame = pd.DataFrame(
        {"y": x.ravel(), "text": np.repeat(np.arange(n), a), "coder": np.tile(np.arange(a), n)}
    )
    table = anova_lm(smf.ols("y ~ C(text) + C(coder)", data=frame).fit())
    ms = table["sum_sq"] / table["df"]
    ms_a, ms_b, ms_e = ms["C(text)"], ms["C(coder)"], ms["Residual"]
    assert new.estimate == pytest.approx(x.mean(), abs=1e-12)
    assert new.var_units == pytest.approx(ms_a / (n * a), rel=1e-9)
    assert new.var_annotators == pytest.approx(max(ms_b - ms_e, 0) / (n * a), rel=1e-9)
    assert these.se**2 == pytest.approx(ms_a / (n * a), rel=1e-9)
    assert new.sources == ("texts", "annotators") and these.sources == ("texts",)


def test_each_annotator_is_scored_on_the_texts_they_coded():
    codes, pred = _coders(2, missing=0.4)
    ci = annotator_ci(codes, pred, "recall")
    for a in range(codes.shape[1]):
        keep = ~np.isnan(codes[:, a])
        ref = pc.compute_metric(
            pc.confusion(codes[keep, a].astype(int), pred[keep]).counts, "recall"
        )
        assert ci.annotator_estimates[a] == pytest.approx(ref, abs=1e-12)
        assert ci.coded[a] == keep.sum()
    # the estimate is the mean of each annotator's recall on every text, the codes they
    # did not give imputed (perfci._core.imputation)
    from perfci._core.imputation import expected_cells, impute_codes

    imputed = impute_codes(codes, pred == 1)
    every = expected_cells(pred == 1, imputed.codes).sum(0)  # (annotators, 4)
    assert ci.estimate == pytest.approx(pc.compute_metric(every, "recall").mean(), abs=1e-12)
    assert ci.low < ci.estimate < ci.high


def test_identical_annotators_add_no_variance():
    codes, pred = _coders(3, annotators=1)
    same = np.repeat(codes, 3, axis=1)
    new = annotator_ci(same, pred, "recall")
    these = annotator_ci(same, pred, "recall", estimand="these_annotators")
    assert new.var_annotators == pytest.approx(0, abs=1e-20)
    assert (new.low, new.high) == pytest.approx((these.low, these.high), abs=1e-9)
    one = pc.metric_ci(same[:, 0].astype(int), pred, "recall")
    assert new.estimate == pytest.approx(one.estimate, abs=1e-12)


def test_new_annotator_covers_where_annotators_differ_and_one_annotator_does_not():
    # 600 data sets of 300 texts and 4 annotators with systematic shifts: the truth is
    # the mean over the population of annotators of the accuracy; each data set draws
    # its own annotators. Checked against 0.93 with 3 binomial Monte-Carlo SE.
    from scipy import stats

    rng = np.random.default_rng(11)
    reps, n, a, sd = 600, 300, 4, 0.8
    latent = rng.normal(0, 1, (reps, n))
    pred = latent + rng.normal(0, 0.7, (reps, n)) > 0.3
    shift = rng.normal(0, sd, (reps, 1, a))
    codes = rng.random((reps, n, a)) < stats.norm.cdf(1.5 * latent[..., None] + shift)
    # the truth: accuracy against a new annotator, by quadrature over its shift
    nodes, weights = np.polynomial.hermite_e.hermegauss(40)
    weights = weights / weights.sum()
    z = rng.normal(0, 1, 400_000)
    said = z + rng.normal(0, 0.7, z.size) > 0.3
    p_code = stats.norm.cdf(1.5 * z[:, None] + sd * nodes)
    truth = float(np.sum(weights * np.mean(np.where(said[:, None], p_code, 1 - p_code), 0)))
    cell = 2 * (~pred)[..., None] + (~codes)
    cells = np.eye(4)[cell.astype(int)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = crossed_intervals(
            cells,
            np.ones((reps, n)),
            "accuracy",
            new_source=True,
            method="recommended",
            level=0.95,
            n_resamples=2000,
            generators=None,
            batch=None,
            unit="texts",
            source="annotators",
        )
        single = pc.proportion_ci((codes[..., 0] == pred).sum(-1), n, method="agresti_coull")
    tolerance = 3 * np.sqrt(0.95 * 0.05 / reps)
    covered = np.mean((out["low"] <= truth) & (truth <= out["high"]))
    one = np.mean((single.low <= truth) & (truth <= single.high))
    assert covered >= 0.93 - tolerance, covered
    assert one < 0.93 - tolerance, one


def test_majority_reference_and_its_ties():
    assert majority_reference(np.array([[1.0, 0.0], [1.0, np.nan]]))[1] == 1
    codes, pred = _coders(4, annotators=2, missing=0.0)
    majority, ties = majority_reference(codes)
    assert ties > 0
    with pytest.warns(pc.UndefinedMetricWarning, match=f"{ties} of 150 texts have as many"):
        ci = annotator_ci(codes, pred, "recall", estimand="majority")
    keep = ~np.isnan(majority)
    ref = pc.metric_ci(majority[keep].astype(int), pred[keep], "recall")
    assert (ci.estimate, ci.low, ci.high) == (ref.estimate, ref.low, ref.high)
    assert ci.sources == ("texts",)


def test_metric_ci_routes_a_column_per_annotator_and_the_table(texts):
    coders = texts[["human", "human_b"]]
    ci = pc.metric_ci(coders, texts["model"], "precision", groups=texts["person"])
    assert isinstance(ci, pc.AnnotatorsCI)
    assert ci.sources == ("texts", "persons", "annotators")
    assert ci.coded.tolist() == [1069, int(texts["human_b"].notna().sum())]
    table = annotator_table(coders, texts["model"], "precision", groups=texts["person"], rng=1)
    assert table["reference"].tolist() == [
        "human",
        "human_b",
        "majority",
        "these annotators",
        "new annotator",
    ]
    assert table.iloc[-1]["low"] == pytest.approx(ci.low, abs=1e-12)
    own = pc.metric_ci(texts["human"], texts["model"], "precision", groups=texts["person"])
    assert table.iloc[0]["low"] == pytest.approx(own.low, abs=1e-12)
    with pytest.raises(ValueError, match=r"^`design` is an option of the intervals against one"):
        pc.metric_ci(coders, texts["model"], "precision", design="icc")


def test_bad_input_names_the_argument():
    codes, pred = _coders(5)
    with pytest.raises(ValueError, match=r"^`y_true` must hold at least 2 annotators"):
        annotator_ci(codes[:, :1], pred, "recall")
    empty = codes.copy()
    empty[3] = np.nan
    with pytest.raises(ValueError, match=r"^`y_true` must have a code of at least one annotator"):
        annotator_ci(empty, pred, "recall")
    with pytest.raises(ValueError, match=r"^`y_pred` must have one label per text"):
        annotator_ci(codes, pred[:-1], "recall")
    with pytest.raises(ValueError, match=r"^`estimand` must be one of"):
        annotator_ci(codes, pred, "recall", estimand="new_run")
    with pytest.raises(ValueError, match=r"^`metric` must be a binary metric"):
        annotator_ci(codes, pred, "macro_f1")
    with pytest.raises(ValueError, match=r"^`method` must be 'recommended' for estimand"):
        annotator_ci(codes, pred, "recall", estimand="majority", method="bootstrap")


def test_report_and_cli_with_runs_and_annotators_say_their_sources(texts, tmp_path, capsys):
    table = pc.report(
        texts[["human", "human_b"]],
        texts[["run1", "run2", "run3"]],
        groups=texts["person"],
        metrics=["recall", "f1"],
    )
    assert (
        table["sources"].tolist()
        == [
            "texts, persons, annotators",
            "texts, persons, runs",
        ]
        * 2
    )
    with pytest.raises(ValueError, match=r"^`by` is not available with several annotators"):
        pc.report(texts[["human", "human_b"]], texts["model"], by=texts["site"])
    path = tmp_path / "texts.csv"
    texts.to_csv(path, index=False)
    argv = ["report", str(path), "--truth", "human", "human_b", "--group", "person", "--json"]
    assert main([*argv, "--pred", "run1", "run2", "run3"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["sources"] for r in rows} == {"texts, persons, annotators", "texts, persons, runs"}
    assert main([*argv, "--pred", "model", "--by", "site"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`--by` is not available with several `--truth`" in err


def test_n_resamples_given_is_a_bootstrap_option_even_at_2000():
    codes, pred = _coders(11)
    for given in (200, 2000):
        with pytest.raises(ValueError, match=r"^`n_resamples` is an option of the bootstrap"):
            annotator_ci(codes, pred, "recall", n_resamples=given)
        with pytest.raises(ValueError, match=r"^`n_resamples` is an option of the bootstrap"):
            pc.metric_ci(codes, pred, "recall", n_resamples=given)
    unset = annotator_ci(codes, pred, "recall", method="bootstrap", rng=2)
    given = annotator_ci(codes, pred, "recall", method="bootstrap", n_resamples=2000, rng=2)
    assert (unset.low, unset.high) == (given.low, given.high)


def test_the_majority_code_is_the_one_majority_vote_with_ties_left_out():
    from perfci._core.labels import majority_vote

    codes, _ = _coders(12, missing=0.3)
    majority, ties = majority_reference(codes)
    index = np.where(np.isnan(codes), -1, codes).astype(int)
    core = majority_vote(index, 2)  # tie="none": -1 for a tie
    np.testing.assert_array_equal(np.where(core < 0, np.nan, core), majority)
    assert ties == int(np.sum(core < 0)) > 0
    # a plurality with three codes, as agreement_report's majority label
    three = np.array([[0, 1, 1, 2], [2, 2, 0, -1], [0, 1, 2, -1], [-1, -1, -1, -1]])
    assert majority_vote(three, 3).tolist() == [1, 2, -1, -1]
    assert majority_vote(three, 3, tie=0).tolist() == [1, 2, 0, -1]


def test_one_reader_of_tables_with_missing_codes():
    from perfci._core.labels import label_table

    frame = pd.DataFrame({"ana": [1, None, 0], "ben": pd.array([1, 0, None], dtype="Int64")})
    table = label_table("y_true", frame)
    assert table.names == ["ana", "ben"] and table.named
    assert table.missing.tolist() == [[False, False], [True, False], [False, True]]
    assert label_table("codes", [[1, 0], [0, 1]], prefix="human").names == ["human 1", "human 2"]
    cases = [
        (None, r"^`y_true` must be a table of codes, one row per text and one column per"),
        ([1, 0, 1], r"^`y_true` must be a table of codes, .* got shape \(3,\)"),
        (np.zeros((0, 2)), r"^`y_true` must hold at least one text"),
        ([[1, np.inf], [0, 1]], r"^`y_true` holds infinity, which is not a code, at text 0"),
        (np.array([["2020-01-01"] * 2], dtype="datetime64[D]"), r"^`y_true` must hold labels"),
    ]
    for values, match in cases:
        with pytest.raises(ValueError, match=match):
            label_table("y_true", values)
    # the same reader behind annotator_ci, agreement and repeated runs
    with pytest.raises(ValueError, match=r"^`y_true` holds infinity, which is not a code"):
        annotator_ci([[1, np.inf], [0, 1], [1, 1]], [1, 0, 1], "recall")
    with pytest.raises(ValueError, match=r"^`y_pred` holds infinity, which is not a label"):
        pc.runs_ci([1, 0, 1], [[1, np.inf], [0, 1], [1, 1]], "recall")


def test_a_tiny_design_gets_the_median_annotators_interval_with_a_warning():
    # 12 texts coded by 3 annotators, one of whom left 3 uncoded: fewer than
    # CROSSED_TINY_RELEVANT relevant texts per annotator, where the variance components
    # under-cover (stress atlas); the interval is the recommended interval against the
    # median annotator alone (over the texts they coded), and says so
    from perfci.crossed import TinyDesignWarning

    pred = np.array([1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0])
    codes = np.array(
        [
            [1, 1, 1],
            [1, 1, 0],
            [1, 0, 1],
            [1, 1, 1],
            [0, 1, 1],
            [0, 0, 0],
            [0, 0, 1],
            [0, 0, 0],
            [0, 0, 0],
            [0, 0, 0],
            [0, 0, 0],
            [0, 0, 0],
        ],
        dtype=float,
    )
    codes[[5, 8, 11], 1] = np.nan
    with pytest.warns(TinyDesignWarning, match="tiny.*median annotator alone"):
        ci = annotator_ci(codes, pred, "recall", rng=1)
    assert ci.method.startswith("median annotator of 3, the interval against one annotator")
    assert "a tiny design" in ci.method and np.isnan(ci.df)
    middle = int(np.argsort(ci.annotator_estimates)[1])
    assert len(set(ci.annotator_estimates.round(12))) == 3  # one median annotator
    coded = ~np.isnan(codes[:, middle])
    one = pc.metric_ci(codes[coded, middle].astype(int), pred[coded], "recall")
    assert (ci.low, ci.high) == pytest.approx(
        (min(one.low, ci.estimate), max(one.high, ci.estimate))
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        by_name = annotator_ci(codes, pred, "recall", method="variance_components")
        these = annotator_ci(codes, pred, "recall", estimand="these_annotators")
    assert by_name.method.startswith("variance components (texts x annotators)")
    assert these.method.startswith("cluster-robust")
    # annotator_table's new-annotator row is the same interval
    with pytest.warns(TinyDesignWarning):
        table = annotator_table(codes, pred, "recall", rng=1)
    row = table.set_index("reference").loc["new annotator"]
    assert (row["low"], row["high"]) == pytest.approx((ci.low, ci.high))
    assert row["method"] == ci.method


def test_a_crossed_interval_on_few_persons_warns_and_says_so():
    """Ten annotators on 7 transcripts covered 0.922 without a word: now a warning and a note.

    atlas-annotators-few: the recommended new-annotator recall covered 0.919-0.974 at 5
    and 7 persons with strong person effects, 0.929-0.963 at 10
    (perfci.policy.CROSSED_FEW_PERSONS).
    """
    from perfci.crossed import FewPersonsWarning

    texts = pc.load_example()
    person = texts["person"]
    few = person.isin(person.unique()[:6])
    codes, model = texts.loc[few, ["human", "human_b"]], texts.loc[few, "model"]
    with pytest.warns(FewPersonsWarning, match=r"rests on 6 persons, fewer than 10"):
        ci = pc.annotator_ci(codes, model, "recall", groups=person[few])
    assert ci.method.endswith("; few persons (fewer than 10): approximate")
    with pytest.warns(FewPersonsWarning):
        runs = pc.runs_ci(texts.loc[few, "human"], texts.loc[few, ["run1", "run2", "run3"]],
                          "f1", groups=person[few])  # fmt: skip
    assert "few persons" in runs.method
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewPersonsWarning)  # 40 persons: no warning
        assert (
            "few persons"
            not in pc.annotator_ci(
                texts[["human", "human_b"]], texts["model"], "recall", groups=person
            ).method
        )
        # without persons the texts are the units: no persons to be few
        assert "few" not in pc.annotator_ci(codes, model, "recall").method


def test_annotators_who_coded_different_texts_are_compared_on_every_text():
    """Two annotators who coded different texts gave the mean of their metrics on their
    own texts (0.620 of 0.484 on every text and 0.756 on a chosen 216): the estimand is
    each annotator's metric on every text, averaged; the codes not given are imputed.

    A codes every text; B mostly the texts A coded positive (missing at random given A's
    code): B's recall over B's own texts is far from B's recall on every text.
    """
    from perfci.annotators import ThinOverlapWarning

    rng = np.random.default_rng(20261203)
    n = 60_000
    truth = rng.random(n) < 0.3
    said = np.where(truth, rng.random(n) < 0.8, rng.random(n) < 0.1)
    difficulty = rng.normal(size=n)
    a = np.where(truth, difficulty < 1.0, difficulty > 1.5)
    b = np.where(truth, difficulty < 0.8, difficulty > 1.2)
    coded_b = rng.random(n) < np.where(a, 0.9, 0.1)
    codes = np.c_[a, np.where(coded_b, b, np.nan)].astype(float)

    def recall(ref, pred):
        return float(np.sum(ref * pred) / np.sum(ref))

    every = (recall(a, said) + recall(b, said)) / 2
    own = (recall(a, said) + recall(b[coded_b], said[coded_b])) / 2
    ci = annotator_ci(codes, said.astype(int), "recall", estimand="these_annotators")
    assert abs(own - every) > 0.02  # what the mean over own texts gave
    # Monte-Carlo error of the imputed recall: SD about 0.003 at 200,000 texts
    # (tests/test_imputation.py), so about 0.005 here; the tolerance is 3 SD
    assert ci.estimate == pytest.approx(every, abs=0.015)
    assert ci.low < every < ci.high
    # too few shared texts to impute (20 < 30) and the rest uncoded: over own texts, which
    # under-covers if they were chosen (atlas-annotators-partial), with a warning
    thin = codes.copy()
    thin[20:, 1] = np.nan
    with pytest.warns(ThinOverlapWarning, match=r"annotator 2 \(\d+ texts shared, \d+ not coded\)"):
        refused = annotator_ci(thin, said.astype(int), "recall", estimand="these_annotators")
    assert refused.method.endswith("; too few texts shared to impute: over own texts")
