"""An option left unset is UNSET, never a default value compared by equality.

A bootstrap option passed beside a method that does not bootstrap is an error at every
value, its default included: ``n_resamples=2000`` is refused as 1999 is.
"""

import pickle

import numpy as np
import pytest

import perfci as pc
from perfci._core.validation import N_RESAMPLES, UNSET, Unset, given, or_default


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


def test_unset_is_one_object_that_survives_pickling():
    assert Unset() is UNSET
    assert pickle.loads(pickle.dumps(UNSET)) is UNSET
    assert repr(UNSET) == "UNSET"
    assert not given(UNSET) and given(None) and given(0)
    assert or_default(UNSET, N_RESAMPLES) == 2000 and or_default(0, 5) == 0


@pytest.mark.parametrize("value", [2000, 1999])
def test_compare_refuses_n_resamples_beside_newcombe_at_any_value(texts, value):
    with pytest.raises(ValueError, match="`n_resamples` is an option of the paired bootstrap"):
        pc.compare(
            texts["human"], texts["model"], texts["model_b"], "recall",
            method="newcombe", n_resamples=value,
        )  # fmt: skip


@pytest.mark.parametrize(("name", "value"), [("pseudo_count", 0), ("interval", "percentile")])
def test_compare_refuses_other_bootstrap_options_at_their_defaults(texts, name, value):
    with pytest.raises(ValueError, match=f"`{name}` is an option of the paired bootstrap"):
        pc.compare(
            texts["human"], texts["model"], texts["model_b"], "recall",
            method="newcombe", **{name: value},
        )  # fmt: skip


def test_compare_left_unset_is_the_documented_default(texts):
    a = pc.compare(
        texts["human"], texts["model"], texts["model_b"], "f1", method="bootstrap", rng=3
    )
    b = pc.compare(
        texts["human"], texts["model"], texts["model_b"], "f1", method="bootstrap", rng=3,
        interval="percentile", pseudo_count=0, n_resamples=2000,
    )  # fmt: skip
    assert (a.low, a.high) == (b.low, b.high)


@pytest.mark.parametrize("value", [2000, 1999])
def test_auc_ci_refuses_n_resamples_beside_delong_at_any_value(texts, value):
    with pytest.raises(ValueError, match="`n_resamples` is an option of the bootstrap"):
        pc.auc_ci(texts["human"], texts["score"], method="delong", n_resamples=value)


def test_auc_ci_bootstrap_left_unset_draws_2000(texts):
    a = pc.auc_ci(texts["human"], texts["score"], method="bootstrap", rng=1)
    b = pc.auc_ci(texts["human"], texts["score"], method="bootstrap", rng=1, n_resamples=2000)
    assert (a.low, a.high) == (b.low, b.high)


@pytest.mark.parametrize("value", [2000, 1999])
def test_compare_groups_refuses_n_resamples_beside_newcombe_at_any_value(texts, value):
    with pytest.raises(ValueError, match="`n_resamples` is an option of the bootstrap"):
        pc.compare_groups(
            texts["human"], texts["model"], "recall", texts["site"],
            method="newcombe", n_resamples=value,
        )  # fmt: skip


def test_agreement_refuses_n_resamples_beside_the_asymptotic_interval(texts):
    codes = np.column_stack([texts["human"], texts["human_b"]])
    with pytest.raises(ValueError, match="`n_resamples` is an option of the bootstrap"):
        pc.annotator_agreement(codes, method="asymptotic", n_resamples=2000)


GROUPS_KEYWORD_ONLY = [
    (lambda t, g, **k: pc.metric_ci(t["human"], t["model"], "recall", *g, **k), "metric_ci"),
    (
        lambda t, g, **k: pc.compare(t["human"], t["model"], t["model_b"], "recall", *g, **k),
        "compare",
    ),  # fmt: skip
    (
        lambda t, g, **k: pc.pilot_estimates(t["human"], t["model"], "recall", *g, **k),
        "pilot_estimates",
    ),  # fmt: skip
    (
        lambda t, g, **k: pc.compare_auc(t["human"], t["score"], t["score_b"], *g, **k),
        "compare_auc",
    ),  # fmt: skip
    (lambda t, g, **k: pc.report(t["human"], t["model"], *g, metrics=["recall"], **k), "report"),
]


@pytest.mark.parametrize(("call", "name"), GROUPS_KEYWORD_ONLY)
def test_groups_by_position_warns_and_gives_the_keywords_result(texts, call, name):
    keyword = call(texts, (), groups=texts["person"])
    with pytest.warns(FutureWarning, match=rf"`groups` passed by position to {name}\(\)"):
        positional = call(texts, (texts["person"],))
    assert repr(positional) == repr(keyword)


@pytest.mark.parametrize(("call", "name"), GROUPS_KEYWORD_ONLY)
def test_groups_twice_is_a_type_error(texts, call, name):
    with pytest.raises(TypeError, match=rf"{name}\(\) takes `groups` as a keyword only"):
        call(texts, (texts["person"],), groups=texts["person"])


@pytest.mark.parametrize(
    "function",
    [
        pc.metric_ci,
        pc.compare,
        pc.pilot_estimates,
        pc.compare_auc,
        pc.report,
        pc.validation_report,
        pc.bayes.compare,
    ],  # fmt: skip
)
def test_the_signature_shows_groups_keyword_only(function):
    import inspect

    parameters = inspect.signature(function).parameters
    assert parameters["groups"].kind is inspect.Parameter.KEYWORD_ONLY
    assert not any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters.values())
