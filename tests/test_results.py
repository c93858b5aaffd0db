"""One result protocol: to_dict() is strict JSON, to_frame() and to_xarray() have the shape."""

import dataclasses
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import perfci as pc
from perfci._core.results import SOURCES, to_jsonable
from perfci.auc import auc_ci_counts
from perfci.runs import runs_ci_counts

TEXTS = pc.load_example()
PER_PERSON = pc.confusion(TEXTS["human"], TEXTS["model"], groups=TEXTS["person"])
Y, N = pc.proportion_counts(PER_PERSON, "recall")


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        return function(*args, **kwargs)


RESULTS = {
    "ProportionCI scalar": lambda: pc.proportion_ci(0, 12, method="wald"),
    "ProportionCI batched": lambda: pc.proportion_ci(
        [[0, 3, 12], [1, 2, 3]], 12, confidence_level=[[0.9], [0.95]]
    ),
    "ClusteredProportionCI scalar": lambda: pc.clustered_proportion_ci(Y, N),
    "ClusteredProportionCI batched": lambda: _quiet(
        pc.clustered_proportion_ci,
        [[3, 3, 0], [5, 5, 5]],
        [[5, 5, 0], [5, 5, 5]],
        design="cluster_robust",
    ),
    "OperatingCharacteristics scalar": lambda: pc.operating_characteristics("wilson", 20, 0.9),
    "OperatingCharacteristics batched": lambda: pc.operating_characteristics(
        "pseudo_percentile_1", [[10], [20]], [0.5, 0.9, 1.0]
    ),
    "SampleSizePlan independent": lambda: pc.plan_sample_size(0.9, 0.05, prevalence=0.2),
    "SampleSizePlan nested": lambda: pc.plan_sample_size(0.9, 0.05, icc=0.1, texts_per_person=8),
    "MetricCI analytic": lambda: pc.metric_ci(TEXTS["human"], TEXTS["model"], "recall"),
    "MetricCI nested": lambda: pc.metric_ci(
        TEXTS["human"], TEXTS["model"], "npv", groups=TEXTS["person"]
    ),
    "MetricCI bootstrap": lambda: pc.metric_ci(
        TEXTS["human"], TEXTS["model"], "kappa", groups=TEXTS["person"], n_resamples=200, rng=1
    ),
    "ConfusionCounts binary": lambda: pc.confusion([1, 0, 1], [1, 1, 1]),
    "ConfusionCounts per person": lambda: PER_PERSON,
    "ConfusionCounts multi-class": lambda: pc.confusion(
        TEXTS["human_topic"], TEXTS["model_topic"], groups=TEXTS["person"]
    ),
    "CredibleInterval scalar": lambda: pc.bayes.confusion_posterior([40, 6, 0, 0]).interval(
        "recall", "hdi", 0.9
    ),
    "CredibleInterval batched": lambda: pc.bayes.grid_intervals(
        [[3, 4, 0], [5, 5, 5]], [[5, 5, 0], [5, 5, 5]], confidence_level=0.9
    ),
    "RunsCI nested": lambda: pc.metric_ci(
        TEXTS["human"], TEXTS[["run1", "run2", "run3"]], "f1", groups=TEXTS["person"]
    ),
    "RunsCI batched": lambda: runs_ci_counts(
        np.eye(4, dtype=int)[np.random.default_rng(1).integers(0, 4, (2, 30, 3))], "kappa"
    ),
    "RocAucCI batched": lambda: auc_ci_counts([[3, 4, 5], [1, 2, 6]], [[5, 4, 3], [6, 2, 1]]),
    "AnnotatorsCI": lambda: pc.metric_ci(
        TEXTS[["human", "human_b"]], TEXTS["model"], "recall", groups=TEXTS["person"]
    ),
    "RunsComparison": lambda: pc.compare(
        TEXTS["human"], TEXTS[["run1", "run2", "run3"]], TEXTS["model_b"], "recall"
    ),
    "AgreementCI": lambda: pc.annotator_agreement(TEXTS[["human", "human_b"]], rng=1),
}


def _plain(value):
    """Raise unless `value` is plain JSON-ready Python with no NaN or infinity."""
    if isinstance(value, dict):
        assert all(isinstance(k, str) for k in value)
        for v in value.values():
            _plain(v)
    elif isinstance(value, list):
        for v in value:
            _plain(v)
    else:
        assert value is None or type(value) in (bool, int, float, str), type(value)
        assert not (isinstance(value, float) and not math.isfinite(value))


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_to_dict_is_strict_json(name):
    result = RESULTS[name]()
    data = result.to_dict()
    _plain(data)
    assert json.loads(json.dumps(data, allow_nan=False)) == data
    derived = list(getattr(result, "_derived", ()))
    assert list(data) == [f.name for f in dataclasses.fields(result)] + derived
    if "sources" in derived:  # every interval says which sources of variation it includes
        assert data["sources"][0] == "texts" and set(data["sources"]) <= set(SOURCES)


@pytest.mark.parametrize("name", sorted(RESULTS))
def test_to_frame_and_to_xarray(name):
    result = RESULTS[name]()
    frame = result.to_frame()
    dataset = result.to_xarray()
    assert isinstance(frame, pd.DataFrame) and isinstance(dataset, xr.Dataset)
    if name.startswith("ConfusionCounts"):
        assert list(frame.columns) == list(pc.CELLS)
        assert frame.shape[0] == int(np.prod(result.counts.shape[:-1]))
        assert dataset["counts"].dims == result.dims
        np.testing.assert_array_equal(dataset["counts"].values, result.counts)
        return
    shape = np.shape(getattr(result, "low", getattr(result, "coverage", 0.0)))
    assert frame.shape[0] == max(1, int(np.prod(shape)))
    assert frame.index.nlevels == max(1, len(shape))
    for variable in dataset.data_vars.values():
        assert variable.shape == shape
    for key, value in dataset.attrs.items():
        assert value is None or isinstance(value, str), key


def test_nan_and_infinity_become_none():
    ci = _quiet(pc.clustered_proportion_ci, [3, 2, 4], [5, 5, 5], design="cluster_robust")
    assert np.isnan(ci.icc) and ci.to_dict()["icc"] is None
    assert np.isnan(ci.to_frame()["icc"].item())
    assert to_jsonable(np.array([np.inf, -np.inf, 1.0])) == [None, None, 1.0]
    with pytest.raises(TypeError, match="`x` of type object has no JSON form"):
        to_jsonable(object(), "x")


def test_batched_frame_has_the_leading_axes_as_index():
    ci = pc.proportion_ci([[0, 3, 12], [1, 2, 3]], 12)
    frame = ci.to_frame()
    assert frame.index.names == ["dim_0", "dim_1"]
    assert frame.loc[(1, 2), "low"] == ci.low[1, 2]
    dataset = ci.to_xarray()
    assert dataset["high"].dims == ("dim_0", "dim_1")
    assert dataset.attrs["method"] == "agresti_coull"


def test_nested_results_are_nested_dicts_and_dotted_columns():
    ci = pc.clustered_proportion_ci(Y, N)
    assert ci.to_dict()["unadjusted"] == ci.unadjusted.to_dict()
    assert ci.to_frame()["unadjusted.low"].item() == ci.unadjusted.low
    assert ci.to_xarray()["unadjusted.high"].item() == ci.unadjusted.high
    m = pc.metric_ci(TEXTS["human"], TEXTS["model"], "precision", groups=TEXTS["person"])
    assert m.to_dict()["result"] == m.result.to_dict()
    assert "result.low" not in m.to_frame() and m.to_frame()["low"].item() == m.low


def test_confusion_counts_frame_is_the_old_dataframe():
    pd.testing.assert_frame_equal(PER_PERSON.to_frame(), PER_PERSON.to_dataframe())
    multi = RESULTS["ConfusionCounts multi-class"]()
    ds = multi.to_xarray()
    assert ds["matrix"].dims == ("person", "reference", "classifier")
    assert ds["counts"].sel(cell="tp").sum().item() == np.trace(multi.matrix.sum(0))


def test_bootstrap_and_comparison_results_round_trip_through_json():
    import json

    import numpy as np

    import perfci as pc

    single = pc.bootstrap_ci([40, 6, 9, 345], "f1", interval="bca", rng=1, n_resamples=200)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        batched = pc.bootstrap_ci(
            np.array([[40, 6, 9, 345], [0, 3, 0, 10]]),
            "recall",
            rng=1,
            n_resamples=50,
            nested=False,
        )
    texts = pc.load_example()
    comparison = pc.compare(texts["human"], texts["model"], texts["model_b"], "recall", rng=1)
    for result in (single, batched, comparison):
        text = json.dumps(result.to_dict(), allow_nan=False)
        assert json.loads(text) == result.to_dict()
    assert "distribution" not in single.to_dict()
    assert len(single.to_dict(replicates=True)["distribution"]) == 200
    assert batched.to_dict()["low"][1] is None  # recall undefined: NaN becomes None
    assert len(batched.to_frame()) == 2


def _round_trips(data):
    _plain(data)
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_bayesian_results_round_trip_through_json():
    fit = pc.bayes.fit_proportion_counts(Y, N, sampler="grid", rng=1)
    summary = fit.to_dict()
    _round_trips(summary)
    assert list(summary) == [
        "sampler",
        "prior",
        "persons",
        "diagnostics",
        "flagged",
        "flag_reasons",
        "tail",
        "population",
        "mu",
        "sampled_persons",
    ]
    assert summary["persons"] == fit.trials.size and summary["diagnostics"]["r_hat"] is None
    # the grid's posterior is exact: no empirical k-hat (NaN, None in JSON)
    assert summary["tail"]["kappa"]["mean_finite"] is True
    assert summary["tail"]["kappa"]["pareto_k_hat"] is None
    assert summary["mu"] == fit.interval("mu", "eti", 0.95).to_dict()
    assert (
        fit.to_dict(confidence_level=0.9)["sampled_persons"]
        == fit.interval("sampled_persons", confidence_level=0.9).to_dict()
    )
    person = fit.interval("person", "hdi", 0.9)
    _round_trips(person.to_dict())
    assert len(person.to_frame()) == fit.trials.size

    posterior = pc.bayes.confusion_posterior([40, 6, 9, 345], prior="uniform")
    _round_trips(posterior.to_dict())
    assert posterior.to_dict() == {
        "counts": [40.0, 6.0, 9.0, 345.0],
        "prior": "uniform",
        "alpha": [41.0, 7.0, 10.0, 346.0],
        "margins": ["prevalence", "recall", "specificity"],
        # Beta(2 + 49, 2 + 351) of the prevalence, Beta(1 + 40, 1 + 9), Beta(1 + 345, 1 + 6)
        "margin_alpha": [[51.0, 353.0], [41.0, 10.0], [346.0, 7.0]],
    }
    assert posterior.to_xarray()["alpha"].dims == ("cell",)
    margins = pc.bayes.confusion_posterior([40, 6, 9, 345], prior="jeffreys_margins")
    assert margins.to_dict()["alpha"] is None and margins.to_frame()["prior"].item() == (
        "jeffreys_margins"
    )
    nested = pc.bayes.nested_metric_intervals(
        [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30]], "kappa", draws=300, rng=1
    )
    _round_trips(nested.to_dict())
    assert nested.to_dict()["fallback"] == [False, False, False]
    assert list(nested.to_frame().columns)[:3] == ["metric", "estimand", "kind"]
    paired = pc.bayes.compare_counts([30, 2, 1, 3, 2, 1, 4, 20], "recall", draws=300, rng=1)
    _round_trips(paired.to_dict())
    assert paired.to_dict()["persons"] is None and len(paired.to_frame()) == 1

    # the frame and the dataset hold the fit's own fields, never the posterior or the data
    frame = fit.to_frame()
    assert len(frame) == 1 and "posterior" not in frame and "successes" not in frame
    assert np.isnan(frame["diagnostics.r_hat"].item()) and frame["flagged"].item() is False
    dataset = fit.to_xarray()
    assert dataset["diagnostics.ess_bulk"].item() == fit.diagnostics["ess_bulk"]
    assert dataset.attrs["sampler"] == "grid"


@pytest.mark.slow
def test_confusion_fit_round_trips_through_json():
    per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
        fit = pc.bayes.fit_confusion_counts(per_person, draws=300, tune=300, rng=1)
    summary = fit.to_dict(confidence_level=0.9)
    _round_trips(summary)
    assert list(summary) == ["diagnostics", "flagged", "flag_reasons", "recall", "precision", "f1"]
    assert summary["f1"] == fit.interval("f1", "eti", 0.9).to_dict()
    assert summary["flag_reasons"] == list(fit.flag_reasons)
    assert len(fit.to_frame()) == 1 and "posterior" not in fit.to_xarray().attrs
