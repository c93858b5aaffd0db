"""Agreement between annotators (perfci.agreement): statistics, intervals, degenerate cases.

Reference values come from independent implementations, called beside each test:
the ``krippendorff`` package's ``alpha(reliability_data=..., level_of_measurement=...)``
(its data layout is annotators x units, so the codes are passed transposed), statsmodels'
``fleiss_kappa`` (with ``aggregate_raters``) and ``cohens_kappa`` (its ``std_kappa`` is
Fleiss, Cohen and Everitt's standard error), and scikit-learn's ``cohen_kappa_score``.
The bootstrap is checked against plain loops that resample rows (or persons) and call the
``krippendorff`` package, within Monte-Carlo error.
"""

import collections
import json
import math
import warnings

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

import perfci as pc
from perfci._core import registry
from perfci.agreement_codes import read_codes
from perfci.agreement_statistics import agreement_cells, unit_counts

TOL = 1e-10
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _codes(seed, n=None, annotators=None, categories=None, missing=0.3, accuracy=0.6):
    """Random codes 1..K of J annotators, with a share of them missing (NaN)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 80)) if n is None else n
    j = int(rng.integers(2, 6)) if annotators is None else annotators
    k = int(rng.integers(2, 5)) if categories is None else categories
    truth = rng.integers(0, k, size=n)
    noise = rng.integers(0, k, size=(n, j))
    codes = np.where(rng.random((n, j)) < accuracy, truth[:, None], noise).astype(float) + 1
    codes[rng.random((n, j)) < missing] = np.nan
    return codes


def _estimate(codes, **kwargs):
    """The statistic alone: the estimate of a call with the fewest resamples a 95% interval takes.

    What those resamples give is not checked here: on a few texts some hold one code only
    and are dropped with a warning, which says nothing about the estimate.
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".* was undefined in", pc.UndefinedMetricWarning)
        warnings.filterwarnings("ignore", "an interval at this level", pc.UndefinedMetricWarning)
        warnings.simplefilter("ignore", pc.DegenerateIntervalWarning)
        return pc.annotator_agreement(codes, n_resamples=40, rng=0, **kwargs).estimate


def _clustered(seed=11, persons=20, per=25, annotators=3):
    """Strongly clustered codes: persons differ in prevalence and in how hard they are."""
    rng = np.random.default_rng(seed)
    prevalence = rng.beta(0.5, 0.5, persons)
    easy = rng.choice([0.97, 0.55], persons)
    truth = (rng.random((persons, per)) < prevalence[:, None]).astype(int)
    codes = np.stack(
        [
            np.where(
                rng.random((persons, per)) < easy[:, None], truth, rng.integers(0, 2, truth.shape)
            )
            for _ in range(annotators)
        ],
        -1,
    ).reshape(-1, annotators)
    return codes.astype(float), np.repeat(np.arange(persons), per)


# ---------------------------------------------------------- independent references


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", range(12))
def test_krippendorff_alpha_equals_the_krippendorff_package(seed, level):
    codes = _codes(seed)
    # krippendorff.alpha(reliability_data=codes.T, level_of_measurement=level); checked with
    # krippendorff 0.8.0 and 0.9.0 (0.7.0 reads text codes with a value_domain otherwise)
    expected = krippendorff.alpha(reliability_data=codes.T, level_of_measurement=level)
    got = _estimate(codes, statistic="krippendorff_alpha", level_of_measurement=level)
    assert got == pytest.approx(expected, abs=TOL)


def test_krippendorff_alpha_of_the_published_example():
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the example of 4
    # coders and 12 units (as in the krippendorff package's docstring, which prints
    # alpha(data, level_of_measurement="ordinal") = 0.815 and "ratio" = 0.797, and with the
    # text codes alpha(data, level_of_measurement="nominal") = 0.743).
    nan = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    for level, printed in (("ordinal", 0.815), ("ratio", 0.797)):
        got = _estimate(data.T, level_of_measurement=level)
        assert round(got, 3) == printed
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert got == pytest.approx(expected, abs=TOL)
    words = np.array(["very low", "low", "mid", "high", "very high"], dtype=object)
    text = pd.DataFrame(data.T).apply(
        lambda c: c.map(lambda v: None if v != v else words[int(v) - 1])
    )
    assert round(_estimate(text), 3) == 0.743
    ordered = _estimate(text, level_of_measurement="ordinal", categories=list(words))
    assert round(ordered, 3) == 0.815
    # and the 3 coders x 15 units example: nominal 0.691358, interval 0.810845
    small = np.array(
        [
            [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
        ]
    )
    assert round(_estimate(small.T, level_of_measurement="nominal"), 6) == 0.691358
    assert round(_estimate(small.T, level_of_measurement="interval"), 6) == 0.810845


@pytest.mark.parametrize("seed", range(10))
def test_fleiss_kappa_equals_statsmodels(seed):
    rng = np.random.default_rng(100 + seed)
    codes = _codes(seed, annotators=int(rng.integers(2, 7)), missing=0.0)
    # fleiss_kappa(aggregate_raters(codes)[0], method="fleiss")
    expected = fleiss_kappa(aggregate_raters(codes)[0], method="fleiss")
    assert _estimate(codes, statistic="fleiss_kappa") == pytest.approx(expected, abs=TOL)


def test_fleiss_kappa_with_the_same_number_of_codes_from_different_annotators():
    rng = np.random.default_rng(7)
    codes = _codes(7, n=50, annotators=4, missing=0.0)
    # every text coded by 3 of the 4 annotators, a different one left out each time
    codes[np.arange(50), rng.integers(0, 4, size=50)] = np.nan
    table = np.array([[np.sum(row == c) for c in (1, 2, 3, 4)] for row in codes])  # a loop
    expected = fleiss_kappa(table[:, table.sum(0) > 0], method="fleiss")
    assert _estimate(codes, statistic="fleiss_kappa") == pytest.approx(expected, abs=TOL)
    # a text with no code at all is left out
    empty = np.vstack([codes, [np.nan] * 4])
    result = pc.annotator_agreement(empty, statistic="fleiss_kappa", n_resamples=40, rng=0)
    assert result.estimate == pytest.approx(expected, abs=TOL)
    assert (result.n_texts, result.n_texts_unused) == (50, 1)


@pytest.mark.parametrize("seed", range(10))
def test_cohen_kappa_equals_sklearn_on_the_texts_both_coded(seed):
    codes = _codes(seed, annotators=2, categories=int(2 + seed % 4))
    both = ~np.isnan(codes).any(1)
    # cohen_kappa_score(a, b) on the texts both annotators coded
    expected = cohen_kappa_score(codes[both, 0], codes[both, 1])
    result = pc.annotator_agreement(codes, statistic="cohen_kappa", n_resamples=40, rng=0)
    assert result.estimate == pytest.approx(expected, abs=TOL)
    assert (result.n_texts, result.n_texts_unused) == (both.sum(), (~both).sum())


@pytest.mark.parametrize("seed", range(8))
def test_asymptotic_interval_equals_statsmodels_cohens_kappa(seed):
    codes = _codes(seed, n=120, annotators=2, categories=int(2 + seed % 3), missing=0.1)
    both = ~np.isnan(codes).any(1)
    k = int(np.nanmax(codes))
    table = np.zeros((k, k))
    np.add.at(table, (codes[both, 0].astype(int) - 1, codes[both, 1].astype(int) - 1), 1)
    reference = cohens_kappa(table)  # statsmodels: kappa, std_kappa, kappa_low, kappa_upp
    ci = pc.annotator_agreement(codes, statistic="cohen_kappa", method="asymptotic")
    assert ci.estimate == pytest.approx(reference.kappa, abs=TOL)
    assert ci.se == pytest.approx(reference.std_kappa, abs=TOL)
    assert ci.low == pytest.approx(max(-1.0, reference.kappa_low), abs=1e-9)
    assert ci.high == pytest.approx(min(1.0, reference.kappa_upp), abs=1e-9)
    assert ci.sources == ("texts",) and math.isinf(ci.df)


def _kappa(a, b, weights, k):
    """Cohen's kappa of weighted pairs of codes (a plain formula, no perfci)."""
    table = np.zeros((k, k))
    np.add.at(table, (a, b), weights)
    p = table / table.sum()
    p_o, p_e = np.trace(p), p.sum(1) @ p.sum(0)
    return (p_o - p_e) / (1 - p_e)


def test_clustered_asymptotic_variance_equals_a_loop_over_persons_of_numerical_influences():
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 9, size=15)
    person = np.repeat(np.arange(15), sizes)
    codes = _codes(4, n=person.size, annotators=2, categories=3, missing=0.0)
    a, b = codes[:, 0].astype(int) - 1, codes[:, 1].astype(int) - 1
    n, h = person.size, 1e-6
    weights = np.ones(n)
    influence = np.empty(n)
    for t in range(n):  # d kappa((1 - e) P + e delta_t) / de at e = 0, by central differences
        up, down = weights * (1 - h), weights * (1 + h)
        up[t] += h * n
        down[t] -= h * n
        influence[t] = (_kappa(a, b, up, 3) - _kappa(a, b, down, 3)) / (2 * h)
    totals = np.array([influence[person == i].sum() for i in range(15)])
    variance = 15 / 14 * np.sum(totals**2) / n**2
    g_star = sizes.sum() ** 2 / np.sum(sizes**2)
    ci = pc.annotator_agreement(codes, groups=person, method="asymptotic", confidence_level=0.9)
    assert ci.se == pytest.approx(math.sqrt(variance), rel=1e-6)
    assert ci.df == pytest.approx(g_star - 1, rel=1e-12)
    half = stats.t.ppf(0.95, g_star - 1) * ci.se
    assert (ci.low, ci.high) == pytest.approx((ci.estimate - half, ci.estimate + half), rel=1e-12)
    assert ci.sources == ("texts", "persons") and ci.persons == 15
    # one text per person: the texts are a simple random sample, the plain interval
    single = pc.annotator_agreement(codes, groups=np.arange(n), method="asymptotic")
    plain = pc.annotator_agreement(codes, method="asymptotic")
    assert (single.low, single.high, single.sources) == (plain.low, plain.high, ("texts",))


# ------------------------------------------------------------------------ bootstrap


def _mc_close(ours, reference):
    """Means and standard deviations of two sets of replicates agree within 4 MC errors."""
    ours, reference = np.asarray(ours), np.asarray(reference)
    b1, b2 = ours.size, reference.size
    s1, s2 = ours.std(ddof=1), reference.std(ddof=1)
    assert abs(ours.mean() - reference.mean()) < 4 * math.sqrt(s1**2 / b1 + s2**2 / b2)
    # sd of a sample sd ~ s sqrt((kurtosis - 1) / 4B); kurtosis of these is near 3
    k1, k2 = stats.kurtosis(ours, fisher=False), stats.kurtosis(reference, fisher=False)
    se = math.sqrt(s1**2 * (k1 - 1) / (4 * b1) + s2**2 * (k2 - 1) / (4 * b2))
    assert abs(s1 - s2) < 4 * se


def test_iid_bootstrap_equals_resampling_rows_within_monte_carlo_error():
    codes = _codes(21, n=60, annotators=3, categories=3, missing=0.2)
    draws = 3000
    ci = pc.annotator_agreement(codes, n_resamples=draws, rng=1)
    pairable = codes[(~np.isnan(codes)).sum(1) >= 2]  # perfci resamples these texts
    rng = np.random.default_rng(2)
    reference = []
    for _ in range(draws):  # the plain bootstrap: resample rows, call the package
        rows = pairable[rng.integers(0, pairable.shape[0], pairable.shape[0])]
        value_counts = np.stack([(rows == c).sum(1) for c in (1, 2, 3)], -1)
        reference.append(
            krippendorff.alpha(value_counts=value_counts, level_of_measurement="nominal")
        )
    assert ci.bootstrap.n_invalid_resamples == 0
    _mc_close(ci.bootstrap.distribution, reference)


def test_cluster_bootstrap_equals_resampling_persons_within_monte_carlo_error():
    codes, person = _clustered(seed=5, persons=12, per=8)
    draws = 3000
    ci = pc.annotator_agreement(codes, groups=person, scheme="cluster", n_resamples=draws, rng=1)
    rng = np.random.default_rng(3)
    reference = []
    for _ in range(draws):  # resample persons with all their texts, call the package
        taken = rng.integers(0, 12, size=12)
        rows = np.concatenate([codes[person == i] for i in taken])
        reference.append(
            krippendorff.alpha(reliability_data=rows.T, level_of_measurement="nominal")
        )
    reference = np.asarray(reference)
    _mc_close(ci.bootstrap.distribution, reference[~np.isnan(reference)])


def test_cluster_bootstrap_is_wider_than_iid_on_clustered_texts():
    codes, person = _clustered()
    for statistic in ("krippendorff_alpha", "fleiss_kappa"):
        iid = pc.annotator_agreement(codes, groups=person, statistic=statistic, scheme="iid", rng=1)
        for scheme in ("cluster", "hierarchical"):
            nested = pc.annotator_agreement(
                codes, groups=person, statistic=statistic, scheme=scheme, rng=1
            )
            assert nested.half_width > 2 * iid.half_width, (statistic, scheme)
            assert nested.sources == ("texts", "persons") and iid.sources == ("texts",)
    pair = codes[:, :2]
    plain = pc.annotator_agreement(pair, method="asymptotic")
    clustered = pc.annotator_agreement(pair, groups=person, method="asymptotic")
    assert clustered.half_width > 2 * plain.half_width


@pytest.mark.parametrize("scheme", ["iid", "cluster", "hierarchical"])
@pytest.mark.parametrize(
    ("statistic", "level"),
    [
        ("krippendorff_alpha", "nominal"),
        ("krippendorff_alpha", "ordinal"),
        ("fleiss_kappa", "nominal"),
        ("cohen_kappa", "nominal"),
    ],
)
def test_batch_does_not_change_the_interval(statistic, level, scheme):
    codes, person = _clustered(seed=8, persons=10, per=6)
    codes = codes + np.where(np.arange(codes.size).reshape(codes.shape) % 7 == 0, 1, 0)
    codes = codes[:, :2] if statistic == "cohen_kappa" else codes
    options = {"statistic": statistic, "level_of_measurement": level, "scheme": scheme}
    options |= {"groups": person, "n_resamples": 300, "interval": "bca"}
    whole = pc.annotator_agreement(codes, rng=9, **options)
    pieces = pc.annotator_agreement(codes, rng=9, batch=7, **options)
    assert (whole.low, whole.high) == (pieces.low, pieces.high)
    np.testing.assert_array_equal(whole.bootstrap.distribution, pieces.bootstrap.distribution)


def test_relabelling_and_reordering_persons_changes_nothing():
    codes, person = _clustered(seed=6, persons=10, per=5)
    first = pc.annotator_agreement(codes, groups=person, rng=4)
    order = np.random.default_rng(0).permutation(person.size)
    names = np.array([f"p{9 - i}" for i in range(10)])[person]
    second = pc.annotator_agreement(codes[order], groups=names[order], rng=4)
    assert (first.estimate, first.low, first.high) == (second.estimate, second.low, second.high)


def test_texts_coded_once_add_nothing_to_alpha_draw_for_draw():
    codes = _codes(3, n=40, annotators=3, missing=0.1)
    codes = codes[(~np.isnan(codes)).sum(1) >= 2]
    once = np.full((5, 3), np.nan)
    once[np.arange(5), np.arange(5) % 3] = 1
    first = pc.annotator_agreement(codes, rng=2)
    second = pc.annotator_agreement(np.vstack([codes, once]), rng=2)
    assert (first.estimate, first.low, first.high) == (second.estimate, second.low, second.high)
    assert second.n_texts_unused == first.n_texts_unused + 5


@pytest.mark.parametrize(
    ("statistic", "level", "annotators"),
    [
        ("cohen_kappa", "nominal", 2),
        ("fleiss_kappa", "nominal", 3),
        *(("krippendorff_alpha", level, 4) for level in LEVELS),
    ],
)
def test_statistics_of_a_batch_of_cell_counts_equal_a_loop(statistic, level, annotators):
    codes = _codes(
        12, n=50, annotators=annotators, missing=0.0 if statistic == "fleiss_kappa" else 0.2
    )
    data, _ = read_codes("codes", codes, level=level, categories=None, groups=None)
    cells = agreement_cells(data, statistic, level)
    observed = unit_counts(cells, data, per_person=False)
    rows = np.random.default_rng(0).multinomial(int(observed.sum()), observed / observed.sum(), 40)
    rows = np.vstack([rows, np.zeros_like(rows[:1])]).astype(float)  # and an empty resample
    batched = cells.fn(rows)
    looped = np.array([cells.fn(r) for r in rows])
    np.testing.assert_array_equal(batched, looped)
    assert np.isnan(batched[-1]) and not np.isnan(batched[:-1]).any()


def test_bootstrap_replicates_are_reproducible_and_seeded():
    codes = _codes(2, n=50, annotators=3)
    a = pc.annotator_agreement(codes, rng=5, n_resamples=200)
    b = pc.annotator_agreement(codes, rng=np.random.default_rng(5), n_resamples=200)
    c = pc.annotator_agreement(codes, rng=6, n_resamples=200)
    np.testing.assert_array_equal(a.bootstrap.distribution, b.bootstrap.distribution)
    assert not np.array_equal(a.bootstrap.distribution, c.bootstrap.distribution)
    q = np.quantile(a.bootstrap.distribution, [0.025, 0.975])
    assert (a.low, a.high) == pytest.approx(tuple(q), abs=1e-12)


# ------------------------------------------------------------------ the choices


def test_auto_is_cohen_for_two_complete_nominal_annotators_else_alpha():
    complete = _codes(1, n=40, annotators=2, missing=0.0)
    missing = complete.copy()
    missing[0, 1] = np.nan
    three = _codes(1, n=40, annotators=3, missing=0.0)

    def choose(codes, **options):
        return pc.annotator_agreement(codes, rng=0, **options).statistic

    assert choose(complete) == "cohen_kappa"
    assert choose(complete, method="asymptotic") == "cohen_kappa"
    assert choose(missing) == "krippendorff_alpha"
    assert choose(three) == "krippendorff_alpha"
    assert choose(complete, level_of_measurement="ordinal") == "krippendorff_alpha"


def test_labels_are_read_as_everywhere():
    # text codes, booleans, and a binary code spelled several ways are one coding (the
    # asymptotic interval: nothing is drawn from these few texts)
    def kappa(codes):
        return pc.annotator_agreement(codes, statistic="cohen_kappa", method="asymptotic")

    words = pd.DataFrame({"a": ["yes", "no", "yes", None], "b": ["yes", "no", "no", "no"]})
    result = kappa(words)
    assert result.n_texts == 3 and result.n_categories == 2
    # cohen_kappa_score(["yes", "no", "yes"], ["yes", "no", "no"])
    expected = cohen_kappa_score(["yes", "no", "yes"], ["yes", "no", "no"])
    assert result.estimate == pytest.approx(expected, abs=TOL)
    spelled = [[1, "1"], [0, "0"], [True, 1.0], [0, "true"]]
    expected = cohen_kappa_score([1, 0, 1, 0], [1, 0, 1, 1])
    assert kappa(spelled).estimate == pytest.approx(expected, abs=TOL)
    nullable = pd.DataFrame({"a": pd.array([1, 2, pd.NA, 2], dtype="Int64"), "b": [1, 2, 2, 1]})
    assert kappa(nullable).n_texts == 3


# --------------------------------------------------------------- degenerate cases


@pytest.mark.parametrize("statistic", ["cohen_kappa", "fleiss_kappa", "krippendorff_alpha"])
@pytest.mark.parametrize("method", ["bootstrap", "asymptotic"])
def test_one_code_only_is_undefined_nan_with_a_warning(statistic, method):
    if method == "asymptotic" and statistic != "cohen_kappa":
        return
    codes = [[2, 2], [2, 2], [2, 2]] if statistic == "cohen_kappa" else [[2, 2, 2], [2, 2, 2]]
    with pytest.warns(pc.UndefinedMetricWarning, match="undefined: every code .* is 2"):
        result = pc.annotator_agreement(codes, statistic=statistic, method=method)
    assert all(math.isnan(v) for v in (result.estimate, result.low, result.high, result.se))
    assert json.loads(json.dumps(result.to_dict(), allow_nan=False))["estimate"] is None


def test_two_annotators_with_one_different_code_each_agree_at_zero():
    codes = [[0, 1], [0, 1], [0, 1]]
    # cohen_kappa_score([0, 0, 0], [1, 1, 1]) = 0.0: p_o = p_e = 0
    expected = cohen_kappa_score([0, 0, 0], [1, 1, 1])
    with pytest.warns(pc.DegenerateIntervalWarning, match="zero width"):
        result = pc.annotator_agreement(codes, statistic="cohen_kappa", rng=0)
    assert result.estimate == expected == 0.0


@pytest.mark.parametrize("method", ["bootstrap", "asymptotic"])
def test_perfect_agreement_is_one_with_a_zero_width_warning(method):
    codes = [[1, 1], [2, 2], [1, 1], [3, 3]]
    with pytest.warns(pc.DegenerateIntervalWarning, match="zero width"):
        result = pc.annotator_agreement(codes, method=method, rng=0)
    assert (result.estimate, result.low, result.high) == (1.0, 1.0, 1.0)


def test_one_resample_is_refused_rather_than_a_point():
    # one resample gave a zero-width interval at its replicate: each tail needs one
    with pytest.raises(ValueError, match=r"^`n_resamples` must be at least 40 .*got 1\.$"):
        pc.annotator_agreement(_codes(3, n=40), n_resamples=1, rng=0)


def test_resamples_with_one_code_are_dropped_and_counted():
    # a resample without the last text holds the code 1 only
    codes = np.array([[1, 1]] * 9 + [[1, 2]])
    with pytest.warns(pc.UndefinedMetricWarning, match="undefined in .* resamples"):
        result = pc.annotator_agreement(codes, statistic="krippendorff_alpha", rng=0)
    # it is left out of a resample of 10 texts with probability 0.9**10 (35%: far above
    # the 10% from which dropped resamples are warned about, whatever the draws)
    share, p = result.bootstrap.n_invalid_resamples / 2000, 0.9**10
    assert abs(share - p) < 4 * math.sqrt(p * (1 - p) / 2000)
    assert result.bootstrap.distribution.size == 2000 - result.bootstrap.n_invalid_resamples


@pytest.mark.parametrize(
    ("codes", "kwargs", "match"),
    [
        ([[1], [2]], {}, r"^`codes` must have at least 2 annotators \(columns\)"),
        ([1, 2, 3], {}, r"^`codes` must be a table of codes"),
        ([[np.nan, None], [None, np.nan]], {}, r"^`codes` holds no code: all 4 entries"),
        ([[1, "a"], [2, "b"]], {}, r"the labels mix numbers and text.*`codes`"),
        ([["yes", "Yes"], ["no", "no"]], {}, r"differ only in case"),
        ([[1, np.nan], [np.nan, 2], [1, np.nan]], {}, r"no text of `codes` was coded by two"),
        (
            [[1, 2, np.nan], [1, 1, 2], [2, 2, 2]],
            {"statistic": "fleiss_kappa"},
            r"^`statistic` 'fleiss_kappa' needs the same number of codes.* have 2 to 3 codes\.",
        ),
        (
            [[1, np.nan, np.nan], [np.nan, 2, np.nan]],
            {"statistic": "fleiss_kappa"},
            r"^`statistic` 'fleiss_kappa' needs the same number of codes, at least 2",
        ),
        (
            [[1, 2, 1], [1, 1, 2]],
            {"statistic": "cohen_kappa"},
            r"^`statistic` 'cohen_kappa' .* has 3",
        ),
        (
            [[1, np.nan], [np.nan, 2]],
            {"statistic": "cohen_kappa"},
            r"no text of `codes` was coded by both annotator 1 and annotator 2",
        ),
        ([[1, np.inf], [2, 1]], {}, r"^`codes` holds infinity, which is not a code, at text 0"),
    ],
)
def test_degenerate_and_bad_codes_raise_naming_the_argument(codes, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.annotator_agreement(codes, **kwargs)


GOOD = [[1, 2, 1], [2, 2, 2], [1, 1, 2], [2, 1, 1], [1, 1, 1], [2, 2, 1]]
PERSONS = ["a", "a", "b", "b", "c", "c"]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"statistic": "kappa"}, "statistic"),
        ({"statistic": None}, "statistic"),
        ({"method": "delta"}, "method"),
        ({"level_of_measurement": "nominal "}, "level_of_measurement"),
        ({"scheme": "persons"}, "scheme"),
        ({"interval": "basic"}, "interval"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 10.0}, "n_resamples"),
        ({"batch": 0}, "batch"),
        ({"rng": "seed"}, "rng"),
        ({"confidence_level": 95}, "confidence_level"),
        ({"confidence_level": [0.9, 0.95]}, "confidence_level"),
        ({"groups": PERSONS[:-1]}, "groups"),
        ({"groups": [None, *PERSONS[1:]]}, "groups"),
        ({"groups": ["a"] * 6}, "groups"),  # one person: nothing to say about persons
        ({"scheme": "cluster"}, "scheme"),  # persons resampled without person ids
        ({"method": "asymptotic", "scheme": "iid"}, "scheme"),
        ({"method": "asymptotic", "n_resamples": 500}, "n_resamples"),
        ({"method": "asymptotic"}, "method"),  # three annotators: alpha has none
        ({"statistic": "fleiss_kappa", "level_of_measurement": "ordinal"}, "level_of_measurement"),
        ({"categories": [1]}, "categories"),
        ({"categories": [1, 2, 1]}, "categories"),
        ({"categories": "12"}, "categories"),
        ({"categories": 3}, "categories"),
    ],
)
def test_bad_options_raise_naming_the_argument(kwargs, argument):
    with pytest.raises(ValueError) as err:
        pc.annotator_agreement(GOOD, **kwargs)
    assert f"`{argument}`" in str(err.value), str(err.value)
    assert "\n" not in str(err.value)


def test_levels_of_measurement_check_the_codes():
    words = [["low", "mid"], ["mid", "mid"], ["high", "low"]]
    with pytest.raises(ValueError, match=r"^`level_of_measurement` 'interval' needs numeric"):
        pc.annotator_agreement(words, level_of_measurement="interval")
    with pytest.raises(ValueError, match=r"^`categories` must give the order of the codes"):
        pc.annotator_agreement(words, level_of_measurement="ordinal")
    with pytest.raises(ValueError, match=r"^`level_of_measurement` 'ratio' needs non-negative"):
        pc.annotator_agreement([[-1, 2], [2, 2], [3, -1]], level_of_measurement="ratio")
    ordered = _estimate(words, level_of_measurement="ordinal", categories=["low", "mid", "high"])
    expected = krippendorff.alpha(
        reliability_data=np.array(words).T,
        level_of_measurement="ordinal",
        value_domain=["low", "mid", "high"],
    )
    assert ordered == pytest.approx(expected, abs=TOL)
    # codes nobody used change nothing
    wider = _estimate(
        words, level_of_measurement="ordinal", categories=["low", "mid", "high", "top"]
    )
    assert wider == pytest.approx(expected, abs=TOL)


# -------------------------------------------------------------------- the result


def test_the_result_is_json_a_frame_and_a_dataset():
    codes, person = _clustered(seed=2, persons=6, per=4)
    result = pc.annotator_agreement(codes, groups=person, rng=1, n_resamples=100)
    data = result.to_dict()
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    assert data["sources"] == ["texts", "persons"] and data["persons"] == 6
    assert data["bootstrap"]["scheme"] == "hierarchical"
    frame = result.to_frame()
    assert frame.shape[0] == 1 and "bootstrap.low" not in frame
    assert frame.loc[0, "statistic"] == "krippendorff_alpha"
    assert set(result.to_xarray().data_vars) >= {"estimate", "low", "high", "se"}
    assert "krippendorff_alpha" in repr(result)


# ------------------------------------------------------------------------ the report


def _report_data(seed=5, n=200):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, size=n)

    def coder(accuracy):
        return np.where(rng.random(n) < accuracy, truth, rng.integers(0, 3, size=n))

    humans = pd.DataFrame({"ana": coder(0.8), "ben": coder(0.8), "cy": coder(0.7)}).astype(float)
    humans.loc[rng.random(n) < 0.5, "cy"] = np.nan
    humans.loc[rng.random(n) < 0.2, "ben"] = np.nan
    return humans, coder(0.75), np.repeat(np.arange(n // 5), 5)


def test_report_rows_are_the_single_calls_with_spawned_streams():
    humans, machine, person = _report_data()
    table = pc.agreement_report(humans, machine, groups=person, rng=3, n_resamples=300)
    assert list(table["comparison"]) == [
        "ana vs ben",
        "ana vs cy",
        "ben vs cy",
        "all humans",
        "machine vs ana",
        "machine vs ben",
        "machine vs cy",
        "machine vs majority",
    ]
    assert list(table["role"]) == ["human_pair"] * 3 + ["humans"] + ["machine_human"] * 3 + [
        "machine_majority"
    ]
    streams = np.random.default_rng(3).spawn(8)
    both = dict(groups=person, n_resamples=300)
    expected = [
        pc.annotator_agreement(
            humans[["ana", "ben"]], statistic="cohen_kappa", rng=streams[0], **both
        ),
        pc.annotator_agreement(humans, statistic="krippendorff_alpha", rng=streams[3], **both),
        pc.annotator_agreement(
            np.column_stack([machine, humans["cy"]]),
            statistic="cohen_kappa",
            rng=streams[6],
            **both,
        ),
    ]
    for row, result in zip((0, 3, 6), expected, strict=True):
        got = table.loc[row, ["estimate", "low", "high", "se", "n_texts", "persons"]].tolist()
        assert got == [
            result.estimate,
            result.low,
            result.high,
            result.se,
            result.n_texts,
            result.persons,
        ]
        assert table.loc[row, "sources"] == result.sources == ("texts", "persons")
    assert table.attrs["confidence_level"] == 0.95


def test_report_majority_label_and_its_ties():
    humans, machine, _ = _report_data(seed=9)
    majority = []
    for row in humans.to_numpy():  # plurality of the codes given, None for a tie
        tally = collections.Counter(v for v in row if v == v).most_common()
        tie = len(tally) > 1 and tally[0][1] == tally[1][1]
        majority.append(None if not tally or tie else tally[0][0])
    has = np.array([m is not None for m in majority])
    expected = cohen_kappa_score(
        machine[has].astype(float), np.array(majority, dtype=object)[has].astype(float)
    )
    table = pc.agreement_report(humans, machine, rng=1, n_resamples=50)
    row = table.set_index("role").loc["machine_majority"]
    assert row["estimate"] == pytest.approx(expected, abs=TOL)
    assert (row["n_texts"], row["n_texts_unused"]) == (has.sum(), (~has).sum())
    assert (~has).sum() > 0


def test_report_with_the_asymptotic_method_bootstraps_the_alpha_row_and_says_so():
    humans, machine, _ = _report_data()
    table = pc.agreement_report(humans, machine, method="asymptotic", rng=1)
    methods = table.set_index("role")["method"]
    assert methods["humans"].startswith("bootstrap")
    assert all(m.startswith("asymptotic") for m in methods.drop("humans"))


def test_report_pair_without_common_texts_is_nan_with_a_warning():
    humans, machine, _ = _report_data(seed=2, n=100)
    humans.loc[humans["cy"].notna(), "ben"] = np.nan  # ben and cy never code the same text
    with pytest.warns(
        pc.UndefinedMetricWarning, match="no text of `human_codes` was coded by both ben and cy"
    ):
        table = pc.agreement_report(humans, machine, rng=1, n_resamples=50)
    row = table.set_index("comparison").loc["ben vs cy"]
    assert math.isnan(row["estimate"]) and row["n_texts"] == 0


@pytest.mark.parametrize(
    ("humans", "machine", "match"),
    [
        ([[1], [2], [1]], [1, 2, 1], r"^`human_codes` must have at least 2 annotators"),
        ([[1, 2], [2, 2], [1, 1]], [1, 2], r"^`machine_labels` must have one label per text"),
        ([[1, 2], [2, 2], [1, 1]], [1, None, 1], r"^`machine_labels` contains missing values"),
        ([[1, 2], [2, 2], [1, 1]], ["a", "b", "a"], r"mix numbers and text"),
        ([[1, 2], [2, 2], [1, 1]], [[1], [2], [1]], r"^`machine_labels` must be one-dimensional"),
    ],
)
def test_report_bad_input_raises_naming_the_argument(humans, machine, match):
    with pytest.raises(ValueError, match=match):
        pc.agreement_report(humans, machine)


def test_names_are_the_registry():
    assert pc.AGREEMENT_STATISTICS == registry.AGREEMENT_STATISTIC.names
    assert pc.AGREEMENT_METHODS == registry.AGREEMENT_METHOD.names
    assert pc.LEVELS_OF_MEASUREMENT == registry.LEVEL_OF_MEASUREMENT.names
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pc.annotator_agreement(GOOD, n_resamples=40, rng=0).n_annotators == 3
