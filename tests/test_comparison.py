import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

import perfci as pc
from perfci.comparison import newcombe_paired_interval


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def test_identical_classifiers_give_zero_difference_and_zero_width(texts):
    for groups in [None, texts["person"]]:
        result = pc.compare(
            texts["human"], texts["model"], texts["model"], "f1", groups=groups, rng=1
        )
        assert result.difference == 0 and result.low == 0 and result.high == 0
        assert result.disagreement == 0


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
        texts["human"], texts["model"], texts["model_b"], "precision", groups=texts["person"], rng=1
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
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.compare(*args, **kwargs)


@pytest.mark.parametrize("scheme", ["cluster", "hierarchical", None])
def test_one_person_is_refused_for_the_cluster_schemes(scheme):
    y, a, b = [1, 0, 1, 1, 0, 1], [1, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0]
    with pytest.raises(ValueError, match=r"^`groups` must give at least 2 persons"):
        pc.compare(y, a, b, "f1", groups=["p"] * 6, scheme=scheme, rng=1)
    ci = pc.compare(y, a, b, "f1", groups=["p"] * 6, scheme="iid", rng=1)
    assert ci.low < ci.high
