"""Every interval result has the one protocol of :class:`perfci._core.results.IntervalResult`.

`estimate` is the quantity `low` and `high` bound (for a difference, the difference);
every result has `confidence_level`, `method`, `sources` and `half_width`, a repr that is
short for a batch, and ``to_dict``/``to_frame``/``to_xarray``.
"""

import json
import warnings

import numpy as np
import pytest

import perfci as pc
from perfci._core.results import SOURCES, IntervalResult, ResultMixin


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def _results(texts):
    """One result of every interval type, from the public functions."""
    t, m, b, g = texts["human"], texts["model"], texts["model_b"], texts["person"]
    runs = texts[["run1", "run2", "run3"]]
    from perfci.subgroups import compare_groups_counts

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "ProportionCI": pc.proportion_ci(30, 40),
            "ClusteredProportionCI": pc.clustered_proportion_ci([3, 4, 5], [5, 6, 9]),
            "BootstrapCI": pc.bootstrap_ci([40, 6, 9, 45], "f1", rng=1, n_resamples=200),
            "MetricCI": pc.metric_ci(t, m, "recall", groups=g),
            "RocAucCI": pc.auc_ci(t, texts["score"]),
            "Comparison": pc.compare(t, m, b, "recall"),
            "RocAucComparison": pc.compare(t, texts["score"], texts["score_b"], "roc_auc"),
            "RunsCI": pc.runs_ci(t, runs, "recall"),
            "RunsComparison": pc.compare(t, runs, runs.iloc[:, ::-1], "recall"),
            "AnnotatorsCI": pc.annotator_ci(texts[["human", "human_b"]], m, "recall"),
            "AgreementCI": pc.annotator_agreement(texts[["human", "human_b"]]),
            "GroupDifference": compare_groups_counts([40, 5, 10, 45], [60, 4, 5, 31], "recall"),
            "CredibleInterval": pc.bayes.grid_intervals([3, 4, 5], [5, 6, 9], draws=200, rng=1),
            "MetricCredibleInterval": pc.bayes.nested_metric_intervals(
                np.array([[5, 1, 2, 9], [4, 2, 1, 8], [6, 1, 1, 7]]), "f1", draws=200, rng=1
            ),
            "PairedCredibleInterval": pc.bayes.compare(t, m, b, "recall", draws=200, rng=1),
            "WeightedCI": pc.weighted_ci(
                pc.design_cells(t, m, strata=m, stratum_sizes={0: 4000, 1: 600}), "recall"
            ),
            "CVInterval": pc.cv_ci(
                t, m, "recall", folds=pc.grouped_folds(5, groups=g, rng=1)[0], groups=g
            ),
            "StratifiedPosterior": pc.bayes.stratified_posterior(
                [[24, 6, 0, 0], [0, 0, 3, 27]], [240, 3140], "recall", draws=200, rng=1
            ),
        }


def test_every_interval_result_has_the_protocol(texts):
    results = _results(texts)
    for name, result in results.items():
        assert type(result).__name__ == name
        assert isinstance(result, IntervalResult), name
        for attribute in ("estimate", "low", "high", "confidence_level", "method"):
            getattr(result, attribute)
        assert set(result.sources) <= set(SOURCES), name
        assert "texts" in result.sources, name
        np.testing.assert_allclose(result.half_width, (result.high - result.low) / 2)
        assert isinstance(result.method, str) and result.method, name
        assert float(np.min(result.low)) <= float(np.max(result.high)), name
        json.dumps(result.to_dict(), allow_nan=False)
        assert len(result.to_frame()) >= 1
        result.to_xarray()


def test_every_public_interval_type_is_covered(texts):
    # a new public interval result must join the protocol test above
    public = set()
    for module, names in ((pc, pc.__all__), (pc.bayes, pc.bayes.__all__)):
        for name in names:
            obj = getattr(module, name)
            fields = getattr(obj, "__dataclass_fields__", {})
            if isinstance(obj, type) and issubclass(obj, ResultMixin) and "low" in fields:
                public.add(name)
    assert public <= set(_results(texts)), public - set(_results(texts))


@pytest.mark.parametrize(
    ("make", "shape"),
    [
        (lambda: pc.proportion_ci(np.arange(5000) % 10, 10), (5000,)),
        (
            lambda: pc.compare(
                [[1, 0, 1, 1], [0, 0, 1, 1]],
                [[1, 0, 1, 0]] * 2,
                [[1, 1, 1, 1]] * 2,
                "accuracy",
                method="newcombe",
            ),
            (2,),
        ),  # fmt: skip
        (
            lambda: pc.bootstrap_ci(
                np.array([[40, 6, 9, 45]] * 3), "f1", nested=False, n_resamples=50, rng=1
            ),
            (3,),
        ),  # fmt: skip
    ],
)
def test_a_batch_has_a_short_repr(make, shape):
    text = repr(make())
    assert len(text) < 300
    assert f"shape {shape}" in text


def test_differences_estimate_what_their_interval_bounds(texts):
    results = _results(texts)
    for name in ("Comparison", "RocAucComparison", "RunsComparison", "GroupDifference"):
        assert results[name].estimate == results[name].difference
    group = results["GroupDifference"]
    assert group.estimate_subgroup - group.estimate_reference == pytest.approx(group.difference)


def test_the_former_level_of_a_credible_interval_warns():
    ci = pc.bayes.grid_intervals([3, 4, 5], [5, 6, 9], estimand="mu")
    with pytest.warns(FutureWarning, match="`level` is deprecated; use `confidence_level`"):
        assert ci.level == ci.confidence_level == 0.95


def test_bootstrap_method_names_its_options():
    ci = pc.bootstrap_ci([40, 6, 9, 45], "f1", pseudo_count=1, rng=1, n_resamples=100)
    assert ci.method == "bootstrap (scheme=iid, interval=percentile, pseudo_count=1)"


def test_the_validation_report_has_the_protocol(texts):
    rep = pc.validation_report(texts["human"], texts["model"], metrics=["recall", "f1"], rng=1)
    out = rep.to_dict()
    json.dumps(out, allow_nan=False)
    assert [row["metric"] for row in out["table"]] == rep.table["metric"].tolist()
    assert out["confidence_level"] == 0.95 and out["title"] == rep.title
    assert rep.to_frame().equals(rep.table)
    assert rep.to_xarray().sizes["row"] == len(rep.table)


BAYES_FITS = [
    "fit_proportion",
    "fit_proportion_counts",
    "fit_confusion_counts",
    "grid_intervals",
    "shared_grid_intervals",
    "nested_metric_intervals",
    "shared_nested_metric_intervals",
    "compare",
    "compare_counts",
    "prior_sensitivity",
]


@pytest.mark.parametrize("name", BAYES_FITS)
def test_every_bayes_fitting_function_takes_confidence_level(name):
    import inspect

    parameters = inspect.signature(getattr(pc.bayes, name)).parameters
    assert "confidence_level" in parameters and "level" not in parameters


def test_a_fits_level_is_its_intervals_default():
    fit = pc.bayes.fit_proportion_counts(
        [28, 25, 30, 22], [30, 30, 30, 26], confidence_level=0.8, rng=1
    )
    assert fit.confidence_level == 0.8
    assert fit.interval("mu").confidence_level == 0.8
    asked = fit.interval("mu", confidence_level=0.95)
    assert asked.confidence_level == 0.95 and asked.high - asked.low > (
        fit.interval("mu").high - fit.interval("mu").low
    )
    assert fit.to_dict()["mu"]["confidence_level"] == 0.8
    with pytest.raises(ValueError, match="`confidence_level` must lie strictly"):
        pc.bayes.fit_proportion_counts([3, 4], [5, 5], confidence_level=1.5)
