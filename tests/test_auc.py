"""ROC AUC intervals and paired AUC comparisons (perfci.auc), and where they are routed.

Reference values: R pROC's ``ci.auc(method = "delong")`` and ``roc.test(method =
"delong", paired = TRUE)``, computed by ``tests/reference/pROC_auc.R`` (R 4.2.2, pROC
1.18.0) and stored with 17 significant digits in ``tests/reference/pROC_auc.json``.
Obuchowski's clustered variance has no implementation on this machine to compare with
(no R package for it in Debian, none installed); it is checked against her formulas written
out below as plain loops over pairs of texts and over persons.
"""

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import special, stats

import perfci as pc
from perfci.auc import auc_ci_counts, placements
from perfci.auc_kernels import CellAUC
from perfci.cli import main

REFERENCE = Path(__file__).parent / "reference"
PROC = json.loads((REFERENCE / "pROC_auc.json").read_text())
FINITE = [r for r in PROC["records"] if "auc_b" in r]
DEGENERATE = {r["name"]: r for r in PROC["records"] if "auc_b" not in r}
TOL = 1e-8


def _nested(seed=3, persons=12, sigma_b=0.8):
    """Texts nested in persons: person shifts of the score, varying prevalence."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 12, size=persons)
    person = np.repeat(np.arange(persons), sizes)
    prevalence = rng.beta(3, 6, size=persons)[person]
    y = (rng.random(person.size) < prevalence).astype(int)
    shift = rng.normal(0, sigma_b, size=persons)[person]
    a = np.round(shift + 1.2 * y + rng.normal(size=person.size), 1)  # ties too
    b = np.round(0.6 * a + 0.5 * y + rng.normal(size=person.size), 1)
    return y, a, b, np.array([f"p{i}" for i in person])


# ----------------------------------------------------------------- R pROC references


def test_the_reference_file_says_which_r_and_proc():
    assert PROC["R"].startswith("R version 4.2.2") and PROC["pROC"] == "1.18.0"
    assert len(FINITE) == 14 and {"all_tied", "perfect"} == set(DEGENERATE)
    names = {r["name"] for r in FINITE}
    assert {"ties_60", "small_7", "near_perfect_80", "below_half_50"} <= names


@pytest.mark.parametrize("record", FINITE, ids=lambda r: f"{r['name']}-{r['confidence_level']}")
def test_delong_interval_equals_proc_ci_auc(record):
    # ci.auc(roc(y, s, levels = c(0, 1), direction = "<"), method = "delong", conf.level = L)
    y, level = record["y"], record["confidence_level"]
    for score in ("a", "b"):
        ci = pc.auc_ci(y, record[score], method="delong", confidence_level=level)
        assert abs(ci.estimate - record[f"auc_{score}"]) < TOL
        assert abs(ci.low - record[f"low_{score}"]) < TOL
        assert abs(ci.high - record[f"high_{score}"]) < TOL
        assert abs(ci.se**2 - record[f"var_{score}"]) < TOL  # var(roc, method = "delong")
        assert ci.method == "delong" and ci.df == math.inf and not ci.clustered


@pytest.mark.parametrize("record", FINITE, ids=lambda r: f"{r['name']}-{r['confidence_level']}")
def test_paired_comparison_equals_proc_roc_test(record):
    # roc.test(roc_a, roc_b, method = "delong", paired = TRUE, conf.level = L)
    y, level = record["y"], record["confidence_level"]
    result = pc.compare(y, record["a"], record["b"], "roc_auc", confidence_level=level)
    assert isinstance(result, pc.RocAucComparison)
    assert abs(result.difference - (record["auc_a"] - record["auc_b"])) < TOL
    assert result.estimate == result.difference
    assert abs(result.difference / result.se - record["z"]) < TOL
    assert abs(result.p_value - record["p_value"]) < TOL
    assert abs(result.low - record["diff_low"]) < TOL
    assert abs(result.high - record["diff_high"]) < TOL
    assert result.test == "paired DeLong z" and result.method == "paired DeLong"


def test_the_digits_that_match_proc():
    # how close, not only within 1e-8: every stored value to about 15 significant digits
    worst = 0.0
    for record in FINITE:
        ci = pc.auc_ci(
            record["y"], record["a"], method="delong", confidence_level=record["confidence_level"]
        )
        for mine, theirs in ((ci.low, record["low_a"]), (ci.high, record["high_a"])):
            worst = max(worst, abs(mine - theirs))
    assert worst < 1e-14


def test_all_tied_scores_follow_proc():
    # pROC: AUC 0.5, var 0, ci.auc (0.5, 0.5, 0.5); roc.test of identical scores z = 0, p = 1
    record = DEGENERATE["all_tied"]
    with pytest.warns(pc.DegenerateIntervalWarning, match="zero width"):
        ci = pc.auc_ci(record["y"], record["a"], method="delong")
    assert (ci.estimate, ci.low, ci.high, ci.se) == (0.5, 0.5, 0.5, 0.0)
    assert (record["auc_a"], record["low_a"], record["high_a"], record["var_a"]) == (
        0.5,
        0.5,
        0.5,
        0,
    )
    # scores that order the texts alike: the difference is 0 by construction; pROC's
    # test gives p = 1, and the interval is NaN (as compare() of identical labels), warned
    with pytest.warns(pc.UndefinedMetricWarning, match="order every positive"):
        result = pc.compare_auc(record["y"], record["a"], record["b"])
    assert result.difference == 0.0 and np.isnan(result.low) and np.isnan(result.high)
    assert result.p_value == record["p_value"] == 1


def test_perfect_separation_follows_proc_and_the_logit_interval_is_nan():
    record = DEGENERATE["perfect"]
    with pytest.warns(pc.DegenerateIntervalWarning):
        ci = pc.auc_ci(record["y"], record["a"], method="delong")
    assert (
        (ci.estimate, ci.low, ci.high)
        == (1.0, 1.0, 1.0)
        == (
            record["auc_a"],
            record["low_a"],
            record["high_a"],
        )
    )
    with pytest.warns(pc.UndefinedMetricWarning, match="logit is infinite"):
        logit = pc.auc_ci(record["y"], record["a"], method="delong_logit")
    assert logit.estimate == 1.0 and math.isnan(logit.low) and math.isnan(logit.high)


# ----------------------------------------------------- the kernel against plain loops


def _psi(x, y):
    return 1.0 if x > y else 0.5 if x == y else 0.0


def _delong_by_loops(y, s):
    """DeLong et al. (1988), eq. for V10, V01, S10, S01, written as double loops."""
    pos = [v for v, t in zip(s, y, strict=True) if t]
    neg = [v for v, t in zip(s, y, strict=True) if not t]
    v10 = [sum(_psi(x, w) for w in neg) / len(neg) for x in pos]
    v01 = [sum(_psi(x, w) for x in pos) / len(pos) for w in neg]
    auc = sum(v10) / len(pos)
    s10 = sum((v - auc) ** 2 for v in v10) / (len(pos) - 1)
    s01 = sum((v - auc) ** 2 for v in v01) / (len(neg) - 1)
    return auc, s10 / len(pos) + s01 / len(neg)


def _obuchowski_by_loops(y, a, b, person):
    """Obuchowski (1997), section 2: V_X, V_Y, S10, S01, S11 and the covariance of two
    modalities, as loops over persons and pairs of texts (no vectorization)."""
    ids = sorted(set(person))
    big_m, big_n, big_i = sum(y), len(y) - sum(y), len(ids)
    out = {}
    for key, s in (("a", a), ("b", b)):
        xs = [(p, v) for p, v, t in zip(person, s, y, strict=True) if t]
        ys = [(p, v) for p, v, t in zip(person, s, y, strict=True) if not t]
        theta = sum(_psi(x, w) for _, x in xs for _, w in ys) / (big_m * big_n)
        vx = {i: sum(sum(_psi(x, w) for _, w in ys) / big_n for p, x in xs if p == i) for i in ids}
        vy = {i: sum(sum(_psi(x, w) for _, x in xs) / big_m for p, w in ys if p == i) for i in ids}
        m_i = {i: sum(1 for p, _ in xs if p == i) for i in ids}
        n_i = {i: sum(1 for p, _ in ys if p == i) for i in ids}
        out[key] = {
            "theta": theta,
            "x": {i: vx[i] - m_i[i] * theta for i in ids},
            "y": {i: vy[i] - n_i[i] * theta for i in ids},
        }
    factor = big_i / (big_i - 1)

    def cov(r, t):
        s10 = factor / big_m * sum(out[r]["x"][i] * out[t]["x"][i] for i in ids)
        s01 = factor / big_n * sum(out[r]["y"][i] * out[t]["y"][i] for i in ids)
        s11 = factor * sum(out[r]["x"][i] * out[t]["y"][i] for i in ids)
        s11_ = factor * sum(out[t]["x"][i] * out[r]["y"][i] for i in ids)
        return s10 / big_m + s01 / big_n + (s11 + s11_) / (big_m * big_n)

    return out["a"]["theta"], cov("a", "a"), cov("a", "a") + cov("b", "b") - 2 * cov("a", "b")


def test_delong_equals_the_double_loop():
    y, a, _, _ = _nested(seed=11, persons=8)
    auc, variance = _delong_by_loops(list(y), list(a))
    ci = pc.auc_ci(y, a, method="delong")
    assert ci.estimate == pytest.approx(auc, abs=1e-14)
    assert ci.se**2 == pytest.approx(variance, abs=1e-14)


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_clustered_variance_equals_obuchowski_written_as_loops(seed):
    y, a, b, person = _nested(seed=seed, persons=9)
    theta, var_a, var_diff = _obuchowski_by_loops(list(y), list(a), list(b), list(person))
    ci = pc.auc_ci(y, a, groups=person, method="delong")
    assert ci.clustered and ci.persons == 9
    assert ci.estimate == pytest.approx(theta, abs=1e-14)
    assert ci.se**2 == pytest.approx(var_a, rel=1e-12)
    result = pc.compare_auc(y, a, b, groups=person)
    assert result.se**2 == pytest.approx(var_diff, rel=1e-12)
    assert result.test == "clustered paired DeLong t"


def test_clustered_interval_uses_t_on_the_effective_persons_minus_one():
    y, a, _, person = _nested(seed=6, persons=10)
    ci = pc.auc_ci(y, a, groups=person, method="delong")
    sizes = pd.Series(person).value_counts().to_numpy()
    df = sizes.sum() ** 2 / (sizes**2).sum() - 1
    assert ci.df == pytest.approx(df)
    q = stats.t.ppf(0.975, df)
    assert ci.low == pytest.approx(ci.estimate - q * ci.se)
    assert ci.high == pytest.approx(min(1.0, ci.estimate + q * ci.se))
    logit = pc.auc_ci(y, a, groups=person, method="delong_logit")
    spread = q * ci.se / (ci.estimate * (1 - ci.estimate))
    assert logit.low == pytest.approx(special.expit(special.logit(ci.estimate) - spread))
    assert logit.high == pytest.approx(special.expit(special.logit(ci.estimate) + spread))
    result = pc.compare_auc(y, a, a * 0.5 + y, groups=person)
    assert result.df == pytest.approx(df)
    t = result.difference / result.se
    assert result.p_value == pytest.approx(2 * stats.t.sf(abs(t), df))


def test_one_text_per_person_is_the_unclustered_interval():
    y, a, _, _ = _nested(seed=7)
    singletons = [f"id{i}" for i in range(len(y))]
    clustered = pc.auc_ci(y, a, groups=singletons)
    plain = pc.auc_ci(y, a)
    assert not clustered.clustered and clustered.persons == len(y)
    assert (clustered.low, clustered.high, clustered.se) == (plain.low, plain.high, plain.se)


def test_invariances_relabel_persons_reorder_texts_monotone_scores():
    y, a, b, person = _nested(seed=8)
    base = pc.auc_ci(y, a, groups=person)
    renamed = pc.auc_ci(y, a, groups=[f"x{p[::-1]}" for p in person])
    order = np.random.default_rng(1).permutation(len(y))
    shuffled = pc.auc_ci(y[order], a[order], groups=person[order])
    monotone = pc.auc_ci(y, np.exp(a) * 3 + 1, groups=person)  # ties stay ties
    for other in (renamed, shuffled, monotone):
        assert other.estimate == pytest.approx(base.estimate, abs=1e-15)
        assert other.se == pytest.approx(base.se, rel=1e-12)
    # the other class as positive, or the score negated: 1 - AUC, the same standard error
    flipped = pc.auc_ci(y, a, groups=person, positive=0)
    negated = pc.auc_ci(y, -a, groups=person)
    for other in (flipped, negated):
        assert other.estimate == pytest.approx(1 - base.estimate)
        assert other.se == pytest.approx(base.se, rel=1e-12)
    # a paired comparison is antisymmetric in A and B
    ab, ba = pc.compare_auc(y, a, b, groups=person), pc.compare_auc(y, b, a, groups=person)
    assert ab.difference == pytest.approx(-ba.difference)
    assert (ab.low, ab.high) == pytest.approx((-ba.high, -ba.low))
    assert ab.p_value == pytest.approx(ba.p_value)


def test_placements_equal_the_loop_definition():
    y, a, _, _ = _nested(seed=9, persons=5)
    auc, deviation = placements(y.astype(bool), a)
    n_pos, n_neg = y.sum(), (1 - y).sum()
    for t in range(len(y)):
        if y[t]:
            v10 = sum(_psi(a[t], a[j]) for j in range(len(y)) if not y[j]) / n_neg
            assert deviation[t] == pytest.approx((v10 - auc) / n_pos, abs=1e-15)
        else:
            v01 = sum(_psi(a[i], a[t]) for i in range(len(y)) if y[i]) / n_pos
            assert deviation[t] == pytest.approx((v01 - auc) / n_neg, abs=1e-15)


def test_cell_auc_of_weights_equals_the_weighted_pair_sum():
    # the bootstrap's statistic (one row per resample) against sum_ij w_i w_j psi / (P N)
    rng = np.random.default_rng(2)
    levels = rng.integers(0, 6, size=14).astype(float)
    positive = rng.random(14) < 0.5
    weights = rng.integers(0, 4, size=(50, 14)).astype(float)
    weights[0, positive] = 0  # a resample without positives: undefined
    got = CellAUC(levels, positive)(weights)
    for row, w in enumerate(weights):
        pairs = sum(
            w[i] * w[j] * _psi(levels[i], levels[j])
            for i in np.flatnonzero(positive)
            for j in np.flatnonzero(~positive)
        )
        total = w[positive].sum() * w[~positive].sum()
        expected = pairs / total if total else np.nan
        assert got[row] == pytest.approx(expected, abs=1e-14, nan_ok=True)


# ----------------------------------------------------------------------- the bootstrap


def test_bootstrap_does_not_depend_on_batch_and_is_seeded():
    y, a, b, person = _nested(seed=10)
    for scheme in ("iid", "cluster", "hierarchical"):
        kwargs = {"groups": person, "method": "bootstrap", "scheme": scheme, "n_resamples": 300}
        whole = pc.auc_ci(y, a, rng=5, **kwargs)
        batched = pc.auc_ci(y, a, rng=5, batch=7, **kwargs)
        assert np.array_equal(whole.bootstrap.distribution, batched.bootstrap.distribution)
        assert (whole.low, whole.high) == (batched.low, batched.high)
        assert whole.description == f"bootstrap (scheme={scheme}, interval=percentile)"
        assert whole.clustered == (scheme != "iid")
        assert whole.se == pytest.approx(np.std(whole.bootstrap.distribution, ddof=1))
    paired = pc.compare_auc(y, a, b, groups=person, method="bootstrap", n_resamples=300, rng=5)
    again = pc.compare_auc(
        y, a, b, groups=person, method="bootstrap", n_resamples=300, rng=5, batch=11
    )
    assert np.array_equal(paired.bootstrap.distribution, again.bootstrap.distribution)
    assert paired.method == "paired bootstrap (scheme=hierarchical, interval=percentile)"


def test_iid_bootstrap_of_counts_matches_row_resampling_in_distribution():
    # a resample of n texts is a multinomial draw of the (score, label) cell counts: its
    # replicates have the law of row resampling; compare their moments (not the draws)
    y, a, _, _ = _nested(seed=12, persons=15)
    boot = pc.auc_ci(y, a, method="bootstrap", n_resamples=4000, rng=1).bootstrap
    rng = np.random.default_rng(2)
    rows = []
    for _ in range(4000):
        pick = rng.integers(0, len(y), len(y))
        if 0 < y[pick].sum() < len(y):
            rows.append(placements(y[pick].astype(bool), a[pick])[0])
    rows = np.array(rows)
    se = np.sqrt(np.var(rows) / rows.size + np.var(boot.distribution) / boot.distribution.size)
    assert abs(boot.distribution.mean() - rows.mean()) < 4 * se
    assert np.std(boot.distribution) == pytest.approx(np.std(rows), rel=0.06)


def test_bootstrap_bca_and_dropped_resamples():
    y = [0] * 7 + [1] + [0] * 7  # one positive: about a third of the resamples have none
    s = list(np.linspace(0, 1, 15))
    with pytest.warns(pc.UndefinedMetricWarning, match="undefined in .* resamples"):
        ci = pc.auc_ci(y, s, method="bootstrap", n_resamples=500, rng=1)
    assert 100 < ci.bootstrap.n_invalid_resamples < 300
    with pytest.raises(ValueError, match="at least 2 positive and 2 negative"):
        pc.auc_ci(y, s)
    y2, a2, _, _ = _nested(seed=13)
    bca = pc.auc_ci(y2, a2, method="bootstrap", interval="bca", n_resamples=500, rng=1)
    assert bca.bootstrap.interval == "bca" and bca.low < bca.estimate < bca.high


# ------------------------------------------------------------------- degenerate input


def test_degenerate_and_bad_input_name_the_argument():
    y, a = [1, 0, 1, 0, 1, 0], [0.9, 0.1, 0.8, 0.4, 0.3, 0.5]
    with pytest.raises(ValueError, match=r"^`y_true` must hold positive and negative texts"):
        pc.auc_ci([1] * 6, a)
    with pytest.raises(ValueError, match=r"^`y_score` must be finite numbers"):
        pc.auc_ci(y, [0.9, np.nan, 0.8, 0.4, 0.3, 0.5])
    with pytest.raises(ValueError, match=r"^`groups` must give at least 2 persons"):
        pc.auc_ci(y, a, groups=["p"] * 6)
    with pytest.raises(ValueError, match=r"^`groups` must give at least 2 persons"):
        pc.auc_ci(y, a, groups=["p"] * 6, method="bootstrap", scheme="cluster")
    with pytest.raises(ValueError, match=r"^`positive` must name the positive class"):
        pc.auc_ci(["a", "b", "c", "a"], [1, 2, 3, 4])
    with pytest.raises(ValueError, match=r"^`scheme` is an option of the bootstrap"):
        pc.auc_ci(y, a, scheme="iid")
    with pytest.raises(ValueError, match=r"^`score_b` must have one score per text"):
        pc.compare_auc(y, a, a[:-1])
    # through compare and metric_ci the message names the caller's argument
    with pytest.raises(ValueError, match=r"^`pred_b` must be finite numbers"):
        pc.compare(y, a, [np.inf, *a[1:]], "roc_auc")
    with pytest.raises(ValueError, match=r"^`y_pred` must be finite numbers"):
        pc.metric_ci(y, [np.nan, *a[1:]], "roc_auc")
    with pytest.raises(ValueError, match=r"^`pseudo_count` does not apply to roc_auc"):
        pc.compare(y, a, a, "roc_auc", pseudo_count=1)
    with pytest.raises(ValueError, match=r"^`method` must be one of \['bootstrap', 'delong'"):
        pc.compare(y, a, a, "roc_auc", method="newcombe")


def test_one_vs_rest_auc_of_a_class():
    y = np.array(["q", "r", "o", "r", "q", "o", "r", "q"])
    s = np.array([0.2, 0.9, 0.1, 0.7, 0.6, 0.3, 0.5, 0.4])
    ci = pc.auc_ci(y, s, positive="r")
    assert ci.estimate == pc.auc_ci((y == "r").astype(int), s).estimate == pytest.approx(14 / 15)
    assert ci.n_positive == 3 and ci.n_negative == 5


def test_results_convert():
    y, a, b, person = _nested(seed=14)
    ci = pc.auc_ci(y, a, groups=person, method="bootstrap", n_resamples=200, rng=1)
    payload = ci.to_dict()
    json.dumps(payload, allow_nan=False)
    assert payload["df"] is None or math.isnan(ci.df)
    frame = ci.to_frame()
    assert "bootstrap" not in frame.columns and frame.loc[0, "estimate"] == ci.estimate
    assert float(ci.to_xarray()["low"]) == ci.low
    comparison = pc.compare_auc(y, a, b, groups=person)
    json.dumps(comparison.to_dict(), allow_nan=False)
    assert comparison.to_frame().loc[0, "difference"] == comparison.difference
    assert -1 <= comparison.correlation <= 1


# --------------------------------------------------------------- metric_ci and report


def test_metric_ci_routes_roc_auc_to_auc_ci():
    texts = pc.load_example()
    ci = pc.metric_ci(texts["human"], texts["score"], "roc_auc", groups=texts["person"])
    direct = pc.auc_ci(texts["human"], texts["score"], groups=texts["person"], method="jackknife")
    assert isinstance(ci, pc.MetricCI) and isinstance(ci.result, pc.RocAucCI)
    assert (ci.estimate, ci.low, ci.high) == (direct.estimate, direct.low, direct.high)
    assert ci.relevant_n == len(texts) and ci.persons == 40
    assert ci.method == direct.description
    boot = pc.metric_ci(texts["human"], texts["score"], "roc_auc", method="bootstrap", rng=1)
    assert boot.result.bootstrap.n_resamples == 2000
    with pytest.raises(ValueError, match=r"^`design` is an option of the intervals of labels"):
        pc.metric_ci(texts["human"], texts["score"], "roc_auc", design="icc")


def test_report_with_a_score_adds_an_auc_row():
    texts = pc.load_example()
    table = pc.report(
        texts["human"], texts["model"], groups=texts["person"], score=texts["score"], rng=1
    )
    assert list(table["metric"]) == [*pc.BINARY_METRICS, "roc_auc"]
    row = table.iloc[-1]
    ci = pc.metric_ci(texts["human"], texts["score"], "roc_auc", groups=texts["person"])
    assert (row["estimate"], row["low"], row["high"]) == (ci.estimate, ci.low, ci.high)
    assert row["persons"] == 40 and row["relevant_n"] == 1069
    by = pc.report(
        texts["human"],
        texts["model"],
        by=texts["site"],
        score=texts["score"],
        metrics=["roc_auc"],
    )
    assert list(by["by"]) == ["all", "clinic_a", "clinic_b"]
    assert set(by["metric"]) == {"roc_auc"}
    without = pc.report(texts["human"], texts["model"], metrics=["recall"], score=texts["score"])
    assert list(without["metric"]) == ["recall"]
    with pytest.raises(ValueError, match="names roc_auc"):
        pc.report(texts["human"], texts["model"], metrics=["roc_auc"])


def test_report_skips_an_undefined_auc_with_a_warning():
    y, p = [1, 1, 0, 0, 1, 0, 1, 0], [1, 0, 0, 0, 1, 1, 1, 0]
    score = [0.9, 0.8, 0.2, 0.1, 0.7, 0.75, 0.3, 0.4]
    with pytest.warns(pc.UndefinedMetricWarning, match="roc_auc in subgroup 'x'"):
        table = pc.report(y, p, by=["x", "x"] + ["y"] * 6, score=score, metrics=["roc_auc"])
    assert list(table["by"]) == ["all", "y"]
    assert table["note"].str.startswith("only ").all()


# ---------------------------------------------------------------------- command line


@pytest.fixture
def texts_csv(tmp_path):
    path = tmp_path / "texts.csv"
    pc.load_example().to_csv(path, index=False)
    return str(path)


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_refuses_a_score_column_as_pred_with_one_line(capsys, texts_csv):
    status, out, err = run(capsys, "report", texts_csv, "--truth", "human", "--pred", "score")
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("perfci: error: `--pred` column 'score' looks like scores")
    assert "`--score score`" in err and "`--threshold T`" in err
    status, _, err = run(
        capsys, "report", texts_csv, "--truth", "human", "--pred", "score", "--debug"
    )
    assert status == 2 and err.startswith("Traceback")


def test_cli_score_and_threshold(capsys, texts_csv):
    base = ["report", texts_csv, "--truth", "human", "--group", "person", "--seed", "1"]
    status, out, _ = run(capsys, *base, "--pred", "model", "--score", "score", "--json")
    assert status == 0
    rows = json.loads(out)
    texts = pc.load_example()
    expected = pc.report(
        texts["human"], texts["model"], groups=texts["person"], score=texts["score"], rng=1
    )
    assert [r["metric"] for r in rows] == list(expected["metric"])
    assert rows[-1]["low"] == expected.iloc[-1]["low"]
    # --threshold turns the scores into labels: score >= 0.5 is exactly `model`
    status, thresholded, _ = run(
        capsys, *base, "--pred", "score", "--threshold", "0.5", "--score", "score", "--json"
    )
    assert status == 0 and json.loads(thresholded) == rows
    status, out, _ = run(capsys, *base, "--pred", "score", "--threshold", "0.99", "--json")
    recall = next(r for r in json.loads(out) if r["metric"] == "recall")
    y, s = texts["human"], texts["score"]
    assert recall["estimate"] == pytest.approx(((s >= 0.99) & (y == 1)).sum() / (y == 1).sum())


def test_cli_threshold_counts_high_scores_as_the_positive_label(capsys, texts_csv):
    # with --positive 0 a score of at least T is a 0: the recall of 0 is the specificity
    argv = ["report", texts_csv, "--truth", "human", "--pred", "score", "--threshold", "0.5"]
    status, out, _ = run(capsys, *argv, "--positive", "0", "--json")
    assert status == 0
    texts = pc.load_example()
    recall = next(r for r in json.loads(out) if r["metric"] == "recall")
    y, s = texts["human"], texts["score"]
    assert recall["estimate"] == pytest.approx(((s >= 0.5) & (y == 0)).sum() / (y == 0).sum())


def test_cli_threshold_keeps_text_labels(capsys, tmp_path):
    path = tmp_path / "t.csv"
    frame = pd.DataFrame(
        {"h": ["yes", "no", "yes", "no", "no", "yes"], "s": [0.9, 0.2, 0.4, 0.6, 0.1, 0.8]}
    )
    frame.to_csv(path, index=False)
    argv = ["report", str(path), "--truth", "h", "--pred", "s", "--threshold", "0.5"]
    status, out, _ = run(capsys, *argv, "--positive", "yes", "--json")
    assert status == 0
    recall = next(r for r in json.loads(out) if r["metric"] == "recall")
    assert recall["estimate"] == pytest.approx(2 / 3)
    status, _, err = run(capsys, *argv, "--score", "h")
    assert status == 2 and "`--score` column 'h' must hold a finite number" in err


def test_cli_compare_scores(capsys, texts_csv):
    argv = ["compare", texts_csv, "--truth", "human", "--pred-a", "score", "--pred-b", "score_b"]
    status, out, _ = run(capsys, *argv, "--metric", "roc_auc", "--group", "person", "--json")
    assert status == 0
    payload = json.loads(out)
    texts = pc.load_example()
    expected = pc.compare(
        texts["human"], texts["score"], texts["score_b"], "roc_auc", groups=texts["person"]
    )
    assert payload["p_value"] == expected.p_value and payload["a"] == "score"
    status, out, _ = run(capsys, *argv, "--metric", "roc_auc")
    assert status == 0 and out.startswith("roc_auc: score 0.9749 vs score_b 0.9728")
    status, _, err = run(capsys, *argv, "--metric", "recall")
    assert status == 2 and "looks like scores" in err and "`--metric roc_auc`" in err


def test_no_stray_warnings_on_the_example():
    texts = pc.load_example()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for method in pc.AUC_METHODS:
            extra = {"n_resamples": 200, "rng": 1} if method == "bootstrap" else {}
            pc.auc_ci(
                texts["human"], texts["score"], groups=texts["person"], method=method, **extra
            )


# ------------------------------------------------------------- counts (auc_ci_counts)


def _level_counts(y, score, person):
    """Positives and negatives per (person in order of first appearance, distinct score)."""
    codes = np.unique(score, return_inverse=True)[1]
    rows = pd.factorize(person)[0]
    shape = (rows.max() + 1, codes.max() + 1)
    pos, neg = np.zeros(shape), np.zeros(shape)
    np.add.at(pos, (rows[y == 1], codes[y == 1]), 1)
    np.add.at(neg, (rows[y == 0], codes[y == 0]), 1)
    return pos, neg


@pytest.mark.parametrize("method", ["delong", "delong_logit"])
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_counts_equal_the_labels_path(method, seed):
    """auc_ci_counts on per-person level counts is auc_ci on the texts, to rounding."""
    y, a, _, person = _nested(seed)
    pos, neg = _level_counts(y, a, person)
    for nested, counts in ((True, (pos, neg)), (False, (pos.sum(0), neg.sum(0)))):
        labels = pc.auc_ci(y, a, groups=person if nested else None, method=method)
        counted = auc_ci_counts(*counts, nested=nested, method=method)
        for field in ("estimate", "low", "high", "se", "df"):
            assert getattr(counted, field) == pytest.approx(getattr(labels, field), abs=1e-13)
        assert counted.clustered == labels.clustered
        assert (counted.n_positive, counted.n_negative) == (labels.n_positive, labels.n_negative)


def test_counts_bootstrap_equals_the_labels_bootstrap_draw_for_draw():
    y, a, _, person = _nested(6)
    pos, neg = _level_counts(y, a, person)
    for scheme in ("cluster", "hierarchical"):
        labels = pc.auc_ci(
            y, a, groups=person, method="bootstrap", scheme=scheme, rng=8, n_resamples=300
        )
        counted = auc_ci_counts(
            pos, neg, nested=True, method="bootstrap", scheme=scheme, rng=8, n_resamples=300
        )
        np.testing.assert_array_equal(counted.bootstrap.distribution, labels.bootstrap.distribution)
        assert (counted.low, counted.high) == (labels.low, labels.high)


def test_counts_batch_equals_the_loop_and_padding_changes_nothing():
    """A batch is the loop of single calls (spawned generators); empty persons are no persons."""
    data = [_level_counts(*(lambda t: (t[0], t[1], t[3]))(_nested(s, persons=9))) for s in (1, 2)]
    levels = max(p.shape[1] for p, _ in data)
    persons = max(p.shape[0] for p, _ in data) + 3  # every data set padded with empty persons
    pos = np.zeros((2, persons, levels))
    neg = np.zeros((2, persons, levels))
    for k, (p, n) in enumerate(data):
        pos[k, : p.shape[0], : p.shape[1]] = p
        neg[k, : n.shape[0], : n.shape[1]] = n
    for method in ("delong", "delong_logit", "bootstrap"):
        extra = {"n_resamples": 200, "rng": 5} if method == "bootstrap" else {}
        batched = auc_ci_counts(pos, neg, nested=True, method=method, **extra)
        streams = pc.batch_generators(5, 2)
        for k, (p, _) in enumerate(data):
            if method == "bootstrap":
                extra["rng"] = streams[k]
            # trailing empty levels and empty persons change neither the AUC nor the draws
            one = auc_ci_counts(pos[k], neg[k], nested=True, method=method, **extra)
            assert (batched.low[k], batched.high[k]) == pytest.approx(
                (one.low, one.high), abs=1e-14
            )
            assert batched.persons[k] == one.persons == p.shape[0]
        if method != "bootstrap":
            for k, (p, n) in enumerate(data):
                tight = auc_ci_counts(p, n, nested=True, method=method)
                assert batched.low[k] == pytest.approx(tight.low, abs=1e-14)
                assert batched.df[k] == pytest.approx(tight.df, abs=1e-12)


def test_counts_degenerate_data_sets_are_nan_with_one_warning_each():
    pos = np.array([[3.0, 4, 5], [0, 0, 0], [1, 0, 0], [2, 2, 2]])
    neg = np.array([[5.0, 4, 3], [4, 4, 4], [3, 2, 0], [0, 0, 0]])
    with pytest.warns(pc.UndefinedMetricWarning) as caught:
        ci = auc_ci_counts(pos, neg)
    reasons = " ".join(str(w.message) for w in caught)
    assert "2 of 4 data sets have no positive or no negative" in reasons
    assert "1 of 4 data sets have too few texts for the DeLong variance" in reasons
    assert np.isfinite(ci.low[0]) and np.isnan(ci.low[1:]).all()
    assert np.isnan(ci.estimate[[1, 3]]).all() and ci.estimate[2] == pytest.approx(
        0.3
    )  # ties count half: 1.5 / 5
    # one person with texts: no clustered variance
    with pytest.warns(pc.UndefinedMetricWarning, match="fewer than 2 persons"):
        one = auc_ci_counts(pos[None, :1], neg[None, :1], nested=True)
    assert np.isnan(one.low[0]) and one.persons[0] == 1


def test_counts_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="`positives` must be whole, non-negative"):
        auc_ci_counts([1.5, 2], [1, 2])
    with pytest.raises(ValueError, match="`negatives` must be whole, non-negative"):
        auc_ci_counts([1, 2], [-1, 2])
    with pytest.raises(ValueError, match="same shape"):
        auc_ci_counts([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="one before it of persons"):
        auc_ci_counts([1, 2], [1, 2], nested=True)
    with pytest.raises(ValueError, match="`method`"):
        auc_ci_counts([1, 2], [2, 1], method="hanley")
    with pytest.raises(ValueError, match="needs nested=True"):
        auc_ci_counts([1, 2], [2, 1], method="bootstrap", scheme="cluster")


def test_logit_interval_uses_welch_satterthwaite_df():
    # 12 positives and 28 negatives: DeLong's variance S10/P + S01/N is the sum of two
    # sample variances of placement values, with Welch-Satterthwaite's df (computed here
    # from the placements by hand); the plain DeLong interval keeps the normal quantile
    rng = np.random.default_rng(12)
    y = np.r_[np.ones(12, int), np.zeros(28, int)]
    score = rng.normal(2.3 * y, 1.0)
    pos, neg = score[y == 1], score[y == 0]
    v10 = np.array([np.mean(p > neg) + 0.5 * np.mean(p == neg) for p in pos])
    v01 = np.array([np.mean(pos > q) + 0.5 * np.mean(pos == q) for q in neg])
    a, b = v10.var(ddof=1) / 12, v01.var(ddof=1) / 28
    welch = (a + b) ** 2 / (a**2 / 11 + b**2 / 27)
    logit = pc.auc_ci(y, score, method="delong_logit")
    assert logit.df == pytest.approx(welch, rel=1e-12)
    assert logit.se == pytest.approx(np.sqrt(a + b), rel=1e-12)
    centre = np.log(logit.estimate / (1 - logit.estimate))
    half = stats.t.ppf(0.975, welch) * logit.se / (logit.estimate * (1 - logit.estimate))
    assert logit.low == pytest.approx(1 / (1 + np.exp(-(centre - half))), rel=1e-12)
    assert pc.auc_ci(y, score, method="delong").df == np.inf
    # with persons of several texts, the smaller of that df and G* - 1
    groups = np.repeat(np.arange(20), 2)
    nested = pc.auc_ci(y, score, groups=groups, method="delong_logit")
    plain = pc.auc_ci(y, score, groups=groups, method="delong")
    assert nested.df == pytest.approx(min(plain.df, welch), rel=1e-12)


def _between_person_auc(y, score, person):
    """The AUC of (positive, negative) pairs from different persons, by brute force."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    wins = pairs = 0.0
    for i in pos:
        other = neg[person[neg] != person[i]]
        wins += np.sum(score[i] > score[other]) + 0.5 * np.sum(score[i] == score[other])
        pairs += other.size
    return wins / pairs


def test_jackknife_centre_is_bias_corrected_from_ten_persons():
    # G logit(AUC) - (G - 1) mean(logit AUC_(-i)), each AUC by brute force over the pairs
    # of texts from different persons; below 10 persons the centre is the estimate
    rng = np.random.default_rng(21)
    for persons, corrected in ((12, True), (6, False)):
        person = np.repeat(np.arange(persons), 5)
        shift = rng.normal(0, 0.8, persons)[person]
        y = (rng.random(person.size) < 0.4).astype(int)
        score = np.round(rng.normal(1.8 * y + shift, 1.0), 1)
        ci = pc.auc_ci(y, score, groups=person, method="jackknife")
        estimate = _between_person_auc(y, score, person)
        assert ci.estimate == pytest.approx(estimate, rel=1e-12)
        keep = [person != i for i in range(persons)]
        left_out = [_between_person_auc(y[k], score[k], person[k]) for k in keep]
        logits = special.logit(left_out)
        se_logit = np.sqrt((persons - 1) / persons * np.sum((logits - logits.mean()) ** 2))
        centre = special.logit(estimate)
        if corrected:
            centre = persons * centre - (persons - 1) * logits.mean()
        q = stats.t.ppf(0.975, ci.df)
        low, high = special.expit(centre - q * se_logit), special.expit(centre + q * se_logit)
        if not corrected:  # below 10 persons: the hull with the logit DeLong interval
            logit = pc.auc_ci(y, score, groups=person, method="delong_logit")
            low, high = min(low, logit.low), max(high, logit.high)
        assert ci.low == pytest.approx(low, rel=1e-10)
        assert ci.high == pytest.approx(high, rel=1e-10)


def test_jackknife_below_ten_persons_is_widened_to_hold_the_logit_interval():
    # 5 persons of 5 texts: the hull of the two intervals, on each side
    rng = np.random.default_rng(3)
    widened = 0
    for _ in range(20):
        person = np.repeat(np.arange(5), 5)
        y = (rng.random(25) < 0.4).astype(int)
        score = np.round(rng.normal(2.0 * y + rng.normal(0, 0.8, 5)[person], 1.0), 1)
        if y.sum() < 2 or y.sum() > 23:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jack = pc.auc_ci(y, score, groups=person, method="jackknife")
            logit = pc.auc_ci(y, score, groups=person, method="delong_logit")
        if np.isnan(jack.low):
            continue
        assert jack.low <= logit.low + 1e-15 and jack.high >= logit.high - 1e-15
        widened += jack.low == logit.low or jack.high == logit.high
    assert widened > 0


def _brute_force_delong(y, score, person):
    """DeLong's and Obuchowski's variances from the matrix of pair kernels psi(X_i, Y_j)."""
    x, yneg = score[y == 1], score[y == 0]
    psi = (x[:, None] > yneg[None, :]) + 0.5 * (x[:, None] == yneg[None, :])
    auc = psi.mean()
    v10, v01 = psi.mean(1), psi.mean(0)
    delong = v10.var(ddof=1) / x.size + v01.var(ddof=1) / yneg.size
    ids = np.unique(person)
    u = np.array(
        [
            (v10[person[y == 1] == i] - auc).sum() / x.size
            + (v01[person[y == 0] == i] - auc).sum() / yneg.size
            for i in ids
        ]
    )
    return auc, delong, ids.size / (ids.size - 1) * np.sum(u**2)


def test_clustered_logit_variance_is_no_smaller_than_delongs():
    # persons of 1-3 texts and no person effect: Obuchowski's variance (an estimate over
    # persons) falls below DeLong's in some data sets; the logit interval's se is the larger
    # of the two, the plain DeLong interval keeps Obuchowski's (published) variance
    rng = np.random.default_rng(11)
    seen = {True: 0, False: 0}
    for _ in range(30):
        person = np.repeat(np.arange(30), rng.integers(1, 4, 30))
        y = (rng.random(person.size) < 0.35).astype(int)
        score = np.round(rng.normal(1.5 * y, 1.0), 1)
        auc, delong, obuchowski = _brute_force_delong(y, score, person)
        logit = pc.auc_ci(y, score, groups=person, method="delong_logit")
        plain = pc.auc_ci(y, score, groups=person, method="delong")
        assert logit.estimate == pytest.approx(auc, rel=1e-12)
        assert logit.se == pytest.approx(np.sqrt(max(delong, obuchowski)), rel=1e-10)
        assert plain.se == pytest.approx(np.sqrt(obuchowski), rel=1e-10)
        seen[bool(delong > obuchowski)] += 1
        if delong > obuchowski:
            assert "floored at DeLong" in logit.description
    assert seen[True] > 0 and seen[False] > 0
