import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import perfci as pc


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def nested_labels(rng, persons, texts_per_person, prevalence=0.3):
    groups = np.repeat(np.arange(persons), texts_per_person)
    y_true = (rng.random(groups.size) < prevalence).astype(int)
    hit = rng.random(groups.size) < rng.beta(9, 1, persons)[groups]
    y_pred = np.where(y_true == 1, hit, rng.random(groups.size) < 0.05).astype(int)
    return y_true, y_pred, groups


def test_recommended_for_independent_texts(texts):
    counts = pc.confusion(texts["human"], texts["model"]).counts
    ci = pc.metric_ci(texts["human"], texts["model"], "recall")
    ref = pc.proportion_ci(*pc.proportion_counts(counts, "recall"), method="agresti_coull")
    assert (ci.low, ci.high, ci.estimate) == (ref.low, ref.high, ref.estimate)
    assert ci.method == "agresti_coull" and ci.persons is None
    assert "population of texts" in ci.population and "reference codes positive" in ci.population
    f1 = pc.metric_ci(texts["human"], texts["model"], "f1", rng=3)
    boot = pc.bootstrap_ci(counts, "f1", pseudo_count=1, rng=3)
    assert f1.method == "bootstrap (scheme=iid, interval=percentile, pseudo_count=1)"
    assert (f1.low, f1.high) == (boot.low, boot.high)


def test_recommended_for_nested_texts(texts):
    ci = pc.metric_ci(texts["human"], texts["model"], "precision", groups=texts["person"])
    per_person = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    y, n = pc.proportion_counts(per_person, "precision")
    ref = pc.clustered_proportion_ci(
        y, n, method="agresti_coull", design="icc_weighted", df_adjust="dean_pagano"
    )
    assert (ci.low, ci.high) == (ref.low, ref.high)
    assert ci.persons == np.count_nonzero(n) and ci.icc == ref.icc and ci.n_eff == ref.n_eff
    assert ci.method == "agresti_coull (design=icc_weighted, df_adjust=dean_pagano)"
    # Kish's design effect with the size-weighted cluster size sum n_i^2 / N
    n = np.asarray(n, dtype=float)
    b_w = np.sum(n**2) / np.sum(n)
    assert ci.design_effect == pytest.approx(1 + ci.icc * (b_w - 1), rel=1e-12)
    assert "population of persons" in ci.population


@pytest.mark.parametrize("texts_per_person", [2, 4, 40])
def test_nested_bootstrap_scheme_is_hierarchical_whatever_the_texts_per_person(texts_per_person):
    y_true, y_pred, groups = nested_labels(np.random.default_rng(1), 30, texts_per_person)
    ci = pc.metric_ci(y_true, y_pred, "kappa", groups=groups, rng=1)
    assert "scheme=hierarchical" in ci.method
    assert ci.result.n_clusters == 30


def test_threshold_is_on_relevant_texts_per_person():
    # 12 texts per person but only one relevant one for F1 (either rater positive): the
    # texts are a simple random sample, and the scheme is iid
    persons = 30
    groups = np.repeat(np.arange(persons), 12)
    y_true, y_pred = np.zeros(groups.size, int), np.zeros(groups.size, int)
    kind = np.random.default_rng(3).integers(0, 6, persons)  # 0-3: tp, 4: fn, 5: fp
    first = np.arange(persons) * 12
    y_true[first], y_pred[first] = kind <= 4, (kind <= 3) | (kind == 5)
    ci = pc.metric_ci(y_true, y_pred, "f1", groups=groups, rng=1)
    assert ci.relevant_n / ci.persons == 1
    assert "scheme=iid" in ci.method and "population of texts" in ci.population
    # 12 texts per person but only ~4.4 relevant ones for F1: in a paired comparison F1
    # is below HIERARCHICAL_MIN_TEXTS and kappa (every text relevant) above it
    y_true, y_pred, groups = nested_labels(np.random.default_rng(2), 30, 12)
    ci = pc.metric_ci(y_true, y_pred, "f1", groups=groups, rng=1)
    assert ci.relevant_n / ci.persons < pc.HIERARCHICAL_MIN_TEXTS
    assert "scheme=hierarchical" in ci.method
    flip = np.random.default_rng(3).random(y_true.size) < 0.05
    pred_b = np.where(flip, 1 - y_pred, y_pred)
    f1 = pc.compare(y_true, y_pred, pred_b, "f1", groups=groups)
    assert f1.method.startswith("cluster-robust linearization")
    kappa = pc.compare(y_true, y_pred, pred_b, "kappa", groups=groups, rng=1)
    assert kappa.method.startswith("paired bootstrap (scheme=hierarchical")


def test_explicit_methods(texts):
    t, p, g = texts["human"], texts["model"], texts["person"]
    wilson = pc.metric_ci(
        t,
        p,
        "recall",
        groups=g,
        method="wilson",
        design="cluster_robust",
        df_adjust="korn_graubard",
    )
    assert wilson.method == "wilson (design=cluster_robust, df_adjust=korn_graubard)"
    plain = pc.metric_ci(t, p, "recall", groups=g, method="wilson", design=None)
    assert plain.method == "wilson" and "population of texts" in plain.population
    bca = pc.metric_ci(t, p, "mcc", method="bootstrap", interval="bca", pseudo_count=0, rng=1)
    assert bca.method == "bootstrap (scheme=iid, interval=bca, pseudo_count=0)"
    with pytest.raises(ValueError, match="`method` 'wilson' is an analytic interval"):
        pc.metric_ci(t, p, "f1", method="wilson")
    with pytest.raises(ValueError, match="`scheme` 'cluster' needs `groups`"):
        pc.metric_ci(t, p, "f1", method="bootstrap", scheme="cluster")


def test_rater_swap_leaves_kappa_ppa_pna_unchanged(texts):
    t, p, g = texts["human"], texts["model"], texts["person"]
    for metric in ["kappa", "ppa", "pna"]:
        for groups in [None, g]:
            a = pc.metric_ci(t, p, metric, groups=groups, rng=4)
            b = pc.metric_ci(p, t, metric, groups=groups, rng=4)
            assert (a.estimate, a.low, a.high) == (b.estimate, b.low, b.high)


def test_report_with_one_text_per_person_equals_report_without_groups(texts):
    t, p = texts["human"], texts["model"]
    singletons = np.arange(len(t))
    a = pc.report(t, p, rng=5)
    b = pc.report(t, p, groups=singletons, rng=5)
    cols = ["metric", "estimate", "low", "high", "method", "relevant_n"]
    pd.testing.assert_frame_equal(a[cols], b[cols])


def test_report_columns_and_rows(texts):
    table = pc.report(texts["human"], texts["model"], groups=texts["person"], rng=1)
    assert list(table.columns) == [
        "metric",
        "estimate",
        "low",
        "high",
        "method",
        "sources",
        "relevant_n",
        "persons",
        "icc",
        "design_effect",
        "n_eff",
        "note",
    ]
    assert list(table["metric"]) == list(pc.BINARY_METRICS)
    assert set(table["sources"]) == {"texts, persons"}
    independent = pc.report(texts["human"], texts["model"], metrics=["recall"])
    assert independent["sources"].tolist() == ["texts"]
    assert np.all((table["low"] <= table["estimate"]) & (table["estimate"] <= table["high"]))
    row = table.set_index("metric").loc["precision"]
    per_person = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    _, n = pc.proportion_counts(per_person, "precision")
    assert row["persons"] == np.count_nonzero(n) and row["relevant_n"] == n.sum()


def test_report_notes_small_samples():
    rng = np.random.default_rng(3)
    y_true, y_pred, groups = nested_labels(rng, 4, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        table = pc.report(y_true, y_pred, groups=groups, rng=1).set_index("metric")
    assert "too few to support a claim" in table.loc["recall", "note"]
    assert "only 4 persons" in table.loc["accuracy", "note"]


def test_report_leaves_out_undefined_metrics_and_says_so():
    with pytest.warns(pc.UndefinedMetricWarning, match="left out of the report: recall"):
        table = pc.report([0, 0, 0, 0, 0], [0, 1, 0, 0, 0])
    assert "recall" not in set(table["metric"]) and "specificity" in set(table["metric"])


def test_report_by_subgroup(texts):
    table = pc.report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        by=texts["site"],
        metrics=["recall", "f1"],
        rng=2,
    )
    assert list(table["by"].unique()) == ["all", "clinic_a", "clinic_b"]
    rural = texts["site"] == "clinic_a"
    ref = pc.metric_ci(
        texts["human"][rural], texts["model"][rural], "recall", groups=texts["person"][rural]
    )
    got = table[(table["by"] == "clinic_a") & (table["metric"] == "recall")].iloc[0]
    assert (got["low"], got["high"]) == (ref.low, ref.high)


def test_report_multiclass_rows(texts):
    table = pc.report(
        texts["human_topic"],
        texts["model_topic"],
        metrics=["recall", "macro_f1", "micro_f1"],
        rng=1,
    )
    assert list(table["class"]) == ["other", "question", "reflection", "", ""]
    micro = table.set_index("metric").loc["micro_f1"]
    assert micro["estimate"] == pytest.approx(np.mean(texts["human_topic"] == texts["model_topic"]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"metric": "auc"}, "`metric` must be one of"),
        ({"metric": "recall", "method": "exact"}, "`method` must be one of"),
        ({"metric": "recall", "design": "anova"}, "`design` must be one of"),
        ({"metric": "recall", "confidence_level": 0}, "`confidence_level`"),
        ({"metric": "macro_f1"}, "averages over classes; it needs multi-class labels"),
        ({"metric": "recall", "groups": [1, 1, 1, 1]}, "at least 2 persons with a relevant text"),
    ],
)
def test_metric_ci_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.metric_ci([1, 0, 1, 1], [1, 0, 0, 1], **kwargs)


def test_binary_metric_on_multiclass_needs_positive():
    with pytest.raises(ValueError, match="`positive` must name the class"):
        pc.metric_ci(["a", "b", "c"], ["a", "b", "b"], "recall")
    ci = pc.metric_ci(["a", "b", "c", "b"], ["a", "b", "b", "b"], "recall", positive="b")
    assert ci.estimate == 1.0


def test_report_bad_input():
    with pytest.raises(ValueError, match="`by` must have one label per text"):
        pc.report([1, 0], [1, 0], by=["x"])
    with pytest.raises(ValueError, match="`groups` contains missing values"):
        pc.report([1, 0], [1, 0], groups=["a", None])
    with pytest.raises(ValueError, match="`metrics` must be one of"):
        pc.report([1, 0], [1, 0], metrics=["auc"])


def test_report_with_bayesian_rows(texts):
    table = pc.report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        metrics=["recall", "f1"],
        rng=1,
        bayes=True,
        bayes_sampler="grid",
    )
    methods = list(table["method"])
    # the population estimand only: what the frequentist row is about
    assert methods[1] == "bayes beta-binomial, population (grid, eti)"
    assert not methods[2].startswith("bayes")
    assert methods[3] == "bayes hierarchical margins, population (grid, eti)"
    per_person = pc.confusion(texts["human"], texts["model"], groups=texts["person"]).counts
    f1 = pc.bayes.nested_metric_intervals(
        per_person, "f1", rng=np.random.default_rng(1).spawn(2)[1]
    )
    assert (table.loc[3, "low"], table.loc[3, "high"]) == (f1.low, f1.high)
    assert table.loc[3, "persons"] == f1.persons
    ref = pc.bayes.fit_proportion(
        texts["human"],
        texts["model"],
        "recall",
        groups=texts["person"],
        sampler="grid",
        rng=np.random.default_rng(1).spawn(2)[0],
    )
    assert table.loc[1, "low"] == ref.interval("population").low
    assert table.loc[1, "sources"] == "texts, persons"
    plain = pc.report(texts["human"], texts["model"], metrics=["recall", "kappa"], bayes=True)
    assert plain.loc[1, "method"] == "bayes metric_jeffreys prior, closed form (eti)"
    assert plain.loc[3, "method"] == "bayes metric_jeffreys prior, draws (eti)"
    total = pc.confusion(texts["human"], texts["model"]).counts
    recall = pc.bayes.confusion_posterior(total).interval("recall")
    assert (plain.loc[1, "low"], plain.loc[1, "high"]) == (recall.low, recall.high)
    # every metric of the report gets its Bayesian row
    full = pc.report(texts["human"], texts["model"], bayes=True, rng=2)
    assert full["method"].str.startswith("bayes").sum() == len(pc.BINARY_METRICS)
    topics = pc.report(texts["human_topic"], texts["model_topic"], bayes=True, rng=2)
    macro = topics[topics["metric"] == "macro_f1"]
    assert macro["method"].iloc[1] == "bayes metric_jeffreys prior, draws (eti)"


def test_report_differences_are_the_compare_groups_rows(texts):
    table = pc.report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        by=texts["site"],
        differences=True,
        metrics=["recall", "f1"],
        rng=1,
    )
    assert list(table.columns[:3]) == ["by", "reference", "metric"]
    assert table["by"].tolist() == ["all"] * 2 + ["clinic_a"] * 2 + ["clinic_b"] * 4
    assert table["reference"].tolist() == [""] * 6 + ["clinic_a"] * 2
    for metric in ("recall", "f1"):
        row = table[(table["reference"] == "clinic_a") & (table["metric"] == metric)].iloc[0]
        ref = pc.compare_groups(
            texts["human"], texts["model"], metric, texts["site"], groups=texts["person"]
        ).iloc[0]
        assert (row["estimate"], row["low"], row["high"]) == (ref.difference, ref.low, ref.high)
        assert row["method"] == ref.method
        assert row["relevant_n"] == ref.relevant_n + ref.relevant_n_reference
        assert row["persons"] == ref.persons + ref.persons_reference
        assert row["note"].startswith(f"clinic_b {ref.estimate:.3f} (relevant n {ref.relevant_n}")
    # without differences the table is as before: no reference column
    plain = pc.report(texts["human"], texts["model"], by=texts["site"], metrics=["recall"])
    assert "reference" not in plain.columns


def test_report_differences_on_independent_texts_and_their_errors(texts):
    table = pc.report(
        texts["human"], texts["model"], by=texts["site"], differences=True, metrics=["recall", "f1"]
    )
    diff = table[table["reference"] != ""].set_index("metric")
    ref = pc.compare_groups(texts["human"], texts["model"], "recall", texts["site"]).iloc[0]
    assert (diff.loc["recall", "low"], diff.loc["recall", "high"]) == (ref.low, ref.high)
    assert diff.loc["f1", "method"].startswith("independent bootstrap of each subgroup")
    assert diff.loc["f1", "low"] < diff.loc["f1", "estimate"] < diff.loc["f1", "high"]
    with pytest.raises(ValueError, match=r"^`differences` needs `by`"):
        pc.report(texts["human"], texts["model"], differences=True)
    with pytest.raises(ValueError, match=r"^`differences` must be True or False"):
        pc.report(texts["human"], texts["model"], by=texts["site"], differences="yes")
    with pytest.raises(ValueError, match=r"^`groups` must nest persons in the subgroups of `by`"):
        pc.report(
            texts["human"],
            texts["model"],
            groups=texts["person"],
            by=texts["human_topic"],
            differences=True,
        )


def test_report_differences_leave_out_undefined_ones_and_averages(texts):
    y = [1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1]
    p = [1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 0]
    by = ["a"] * 4 + ["b"] * 4 + ["c"] * 4  # b has no human positives
    with pytest.warns(pc.UndefinedMetricWarning, match=r"recall difference of subgroup 'b'"):
        table = pc.report(y, p, by=by, differences=True, metrics=["recall", "accuracy"])
    diff = table[table["reference"] != ""]
    assert set(zip(diff["by"], diff["metric"], strict=True)) == {
        ("b", "accuracy"),
        ("c", "accuracy"),
        ("c", "recall"),
    }
    with pytest.warns(pc.UndefinedMetricWarning, match="differences of averages over classes"):
        multi = pc.report(
            texts["human_topic"],
            texts["model_topic"],
            by=texts["site"],
            differences=True,
            metrics=["recall", "macro_f1"],
        )
    diff = multi[multi["reference"] != ""]
    assert sorted(diff["class"]) == ["other", "question", "reflection"]
    assert (diff["metric"] == "recall").all()


def test_report_differences_from_a_chosen_reference(texts):
    table = pc.report(
        texts["human"],
        texts["model"],
        by=texts["site"],
        differences=True,
        reference="clinic_b",
        metrics=["recall"],
    )
    diff = table[table["reference"] != ""]
    assert diff["by"].tolist() == ["clinic_a"] and diff["reference"].tolist() == ["clinic_b"]
    ref = pc.compare_groups(
        texts["human"], texts["model"], "recall", texts["site"], reference="clinic_b"
    ).iloc[0]
    assert (diff["low"].iloc[0], diff["high"].iloc[0]) == (ref.low, ref.high)
    # the default reference gives the mirror difference, from the other side
    default = pc.report(
        texts["human"], texts["model"], by=texts["site"], differences=True, metrics=["recall"]
    )
    mirror = default[default["reference"] != ""]
    assert mirror["estimate"].iloc[0] == pytest.approx(-diff["estimate"].iloc[0], abs=1e-12)
    with pytest.raises(ValueError, match=r"^`reference` 'clinic_c' is not one of the subgroups"):
        pc.report(
            texts["human"],
            texts["model"],
            by=texts["site"],
            differences=True,
            reference="clinic_c",
        )
    with pytest.raises(ValueError, match=r"^`reference` names the subgroup .* needs differences"):
        pc.report(texts["human"], texts["model"], by=texts["site"], reference="clinic_a")
    with pytest.raises(ValueError, match=r"^`reference` must be a single label"):
        pc.report(
            texts["human"],
            texts["model"],
            by=texts["site"],
            differences=True,
            reference=["clinic_a"],
        )


def test_report_bootstrap_rows_share_the_draws_of_their_first_row(texts):
    # The rows whose bootstrap resamples alike are read off one set of draws, from the
    # generator of the first of them (f1; the rows' generators are rng.spawn(rows)):
    # each rater-symmetric row is that call's interval with f1's generator, draw for draw.
    t, p, g = texts["human"], texts["model"], texts["person"]
    table = pc.report(t, p, groups=g, rng=1).set_index("metric")
    cells = pc.confusion(t, p, groups=g).counts
    metrics = list(pc.BINARY_METRICS)
    for metric in ["f1", "ppa", "pna", "kappa", "mcc"]:
        f1_rng = np.random.default_rng(1).spawn(len(metrics))[metrics.index("f1")]
        own = pc.metric_ci(t, p, metric, groups=g, rng=f1_rng)
        assert (table.loc[metric, "low"], table.loc[metric, "high"]) == (own.low, own.high)
    # balanced accuracy (not rater-symmetric) sees the same resamples, read with fp and fn
    # in their places: its interval is its own call's up to Monte-Carlo error (2000
    # resamples: the quantile SD is about 2.7 SE / sqrt(2000); allow 4 SD of a difference)
    own = pc.bootstrap_ci(
        cells, "balanced_accuracy", scheme="hierarchical", pseudo_count=1, rng=2, nested=True
    )
    tol = 4 * 2.69 * np.sqrt(2) * own.standard_error / np.sqrt(2000)
    assert table.loc["balanced_accuracy", "low"] == pytest.approx(own.low, abs=tol)
    assert table.loc["balanced_accuracy", "high"] == pytest.approx(own.high, abs=tol)


def test_report_bayes_prior_sensitivity_rows(texts):
    table = pc.report(
        texts["human"],
        texts["model"],
        groups=texts["person"],
        metrics=["recall"],
        rng=1,
        bayes=True,
        bayes_sampler="grid",
        bayes_prior_sensitivity=True,
    )
    assert list(table["method"])[1:] == [
        "bayes beta-binomial, population (grid, eti)",
        "bayes beta-binomial, population, prior bda3 (grid, eti)",
    ]
    # the row is prior_sensitivity's alternative interval of the same fit's counts, with
    # the report's stream: the row's generator serves the fit, then the check
    stream = np.random.default_rng(1).spawn(1)[0]
    fit = pc.bayes.fit_proportion(
        texts["human"], texts["model"], "recall", groups=texts["person"], sampler="grid", rng=stream
    )
    check = fit.prior_sensitivity("population", 0.95, rng=stream)
    assert table.loc[2, "low"] == check.alternative.low
    assert table.loc[2, "note"].startswith("prior sensitivity: ")
    # five persons of 4-10 texts: the priors differ (shift 0.15-0.17 of the width over seeds)
    y, n = [9, 3, 10, 2, 8], [10, 5, 10, 4, 10]
    truth = np.ones(sum(n), int)
    pred = np.concatenate(
        [np.r_[np.ones(k, int), np.zeros(m - k, int)] for k, m in zip(y, n, strict=True)]
    )
    persons = np.repeat(list("abcde"), n)
    few = pc.report(
        truth,
        pred,
        groups=persons,
        metrics=["recall"],
        rng=1,
        bayes=True,
        bayes_sampler="grid",
        bayes_prior_sensitivity=True,
    )
    assert "differs materially from prior 'pareto'" in few.loc[2, "note"]
    with pytest.raises(ValueError, match="`bayes_prior_sensitivity` needs `bayes`"):
        pc.report(texts["human"], texts["model"], bayes_prior_sensitivity=True)
    with pytest.raises(ValueError, match="`bayes_prior_sensitivity` must be True or False"):
        pc.report(texts["human"], texts["model"], bayes=True, bayes_prior_sensitivity="yes")


# ------------------------------------------------------- the documented notes are printed

_DOCS = Path(__file__).resolve().parents[1] / "docs"
#: What the notes table of docs/choosing.md writes in capitals for what the code fills in.
_PLACEHOLDERS = ("METRIC", "REASONS", "SUBGROUP", "REFERENCE", "DF", "N", "K", "H", "E", "G")


def _documented_notes() -> list[str]:
    """The notes quoted in the table of docs/choosing.md's "The report's notes"."""
    section = (_DOCS / "choosing.md").read_text().split("(choosing-notes)=", 1)[1]
    table = section.split("\n\n| condition | note |\n", 1)[1].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ")]  # not |---|
    notes = [re.fullmatch(r"\|.*\| `(.+)` \|", row) for row in rows]
    assert all(notes), rows
    return [match.group(1) for match in notes if match]


def _pattern(note: str) -> str:
    """The regular expression of a documented note: its capitals and `...` are any text."""
    pattern = re.escape(note).replace(re.escape("..."), ".+?")
    return re.sub(r"\b(" + "|".join(_PLACEHOLDERS) + r")\b", ".+?", pattern)


def _frame(persons, texts_per_person, rate, seed, sizes=None, prefix="p"):
    rng = np.random.default_rng(seed)
    parts = []
    for i in range(persons):
        n = texts_per_person if sizes is None else sizes[i]
        y = rng.random(n) < 0.5
        right = rng.random(n) < rate
        parts.append(
            pd.DataFrame(
                {
                    "human": y.astype(int),
                    "model": np.where(right, y, ~y).astype(int),
                    "person": f"{prefix}{i:02d}",
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _printed_notes() -> list[str]:
    """Notes the report prints, from designs that call for every kind of note."""
    from types import SimpleNamespace

    from perfci.report_table import flagged_note

    def notes(frame, nested=True, **options):
        # the rows are what is read here; the report's warnings (rows left out) are not
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = pc.report(
                frame["human"],
                frame["model"],
                groups=frame["person"] if nested else None,
                rng=1,
                **options,
            )
        return [note for note in table["note"] if note]

    printed = notes(_frame(4, 10, 0.8, 1), metrics=["accuracy", "recall"])  # few of all
    printed += notes(_frame(7, 30, 0.8, 2), metrics=["accuracy", "f1"])  # 5-9 persons
    printed += notes(_frame(1, 60, 0.8, 3), nested=False, metrics=["accuracy"])  # wide
    every_one_right = _frame(20, 30, 1.0, 4)
    printed += notes(every_one_right, metrics=["recall"], design="icc_weighted")  # near 1
    # half the persons right nearly always, half at 0.3: a high ICC from few persons
    split = pd.concat([_frame(6, 40, 0.98, 8), _frame(6, 40, 0.3, 9, prefix="r")])
    printed += notes(split, metrics=["recall"])  # the worst case design
    printed += notes(split, metrics=["recall"], design="icc_weighted")
    y = np.r_[np.zeros(40), np.ones(10)].astype(int)
    score = np.r_[np.linspace(0, 0.4, 40), np.linspace(0.6, 1, 10)]  # separated classes
    frame = pd.DataFrame({"human": y, "model": (score > 0.5).astype(int), "score": score})
    printed += notes(frame, nested=False, score=frame["score"], metrics=["roc_auc"])
    # a small subgroup of unequal persons, and a subgroup with every text right
    big = _frame(25, 20, 0.85, 5).assign(site="big")
    small = _frame(4, 0, 0.7, 6, sizes=[60, 8, 5, 3], prefix="s").assign(site="small")
    perfect = _frame(6, 10, 1.0, 7, prefix="q").assign(site="perfect")
    sites = pd.concat([big, small, perfect], ignore_index=True)
    printed += notes(sites, by=sites["site"], differences=True, metrics=["accuracy"])
    printed.append(flagged_note(SimpleNamespace(flagged=True, flag_reasons=["R-hat 1.02"])))
    return printed


def test_every_documented_note_is_printed_and_every_printed_note_documented():
    # Before: the table quoted the atlas caveat for estimates near 0 or 1, where the
    # report printed the worst-case design's note, and left out notes the report prints.
    documented = _documented_notes()
    printed = _printed_notes()
    patterns = [_pattern(note) for note in documented]
    for note, pattern in zip(documented, patterns, strict=True):
        assert any(re.search(pattern, p) for p in printed), note
    # a row's notes are joined with "; ": every part of every printed one is quoted
    one = "(?:" + "|".join(patterns) + ")"
    for note in printed:
        assert re.fullmatch(f"{one}(?:; {one})*", note), note
