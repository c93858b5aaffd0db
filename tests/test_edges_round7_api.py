"""Round-7 edge cases of the API: labelled counts, aligned domains, tiny weights, options."""

import numpy as np
import pandas as pd
import pytest

import perfci as pc
from perfci.bootstrap import DegenerateBootstrapWarning

rng = np.random.default_rng(0)
N = 120
T = rng.integers(0, 2, N)
P = np.where(rng.random(N) < 0.8, T, 1 - T)
P2 = np.where(rng.random(N) < 0.75, T, 1 - T)
C = pc.confusion(T, P).counts
SHUFFLED = pd.Series({"tn": C[3], "fn": C[2], "fp": C[1], "tp": C[0]})


def test_labelled_counts_are_read_by_label():
    want = float(pc.compute_metric(C, "recall"))
    assert float(pc.compute_metric(SHUFFLED, "recall")) == pytest.approx(want)
    assert pc.metric_ci_counts(SHUFFLED, "recall", rng=1).estimate == pytest.approx(want)
    assert pc.bootstrap_ci(SHUFFLED, "recall", rng=1).estimate == pytest.approx(want)
    frame = pd.DataFrame([SHUFFLED, SHUFFLED])
    np.testing.assert_allclose(pc.compute_metric(frame, "recall"), want)
    assert float(pc.compute_metric(pd.Series(C), "recall")) == pytest.approx(want)


def test_counts_with_other_labels_are_refused():
    with pytest.raises(ValueError, match="`counts` is labelled"):
        pc.compute_metric(pd.Series(C, index=list("abcd")), "recall")


def test_shuffled_domain_is_refused():
    dom = pd.Series(np.repeat([True, False], N // 2))
    with pytest.raises(ValueError, match="index is not"):
        pc.design_cells(pd.Series(T), pd.Series(P), domain=dom.sample(frac=1, random_state=2))


def test_tiny_weights_are_refused():
    with pytest.raises(ValueError, match="`weights` must have a mean"):
        pc.compare(T, P, P2, "recall", weights=np.full(N, 1e-320))


def test_compare_warns_when_the_pseudo_count_dominates():
    with pytest.warns(DegenerateBootstrapWarning, match="prior dominates"):
        pc.compare(
            T, P, P2, "recall", method="bootstrap", pseudo_count=1000, n_resamples=400, rng=1
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"design": "cluster_robust"}, "`design`.*needs `groups`"),
        ({"bayes_sampler": "grid"}, "`bayes_sampler`.*needs `bayes=True`"),
    ],
)
def test_report_refuses_ignored_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.report(T, P, metrics=["recall"], **kwargs)


def test_plan_refuses_df_adjust_without_icc():
    with pytest.raises(ValueError, match="`df_adjust`.*`icc`"):
        pc.plan_sample_size(0.8, 0.05, df_adjust="korn_graubard")


def test_half_width_curves_refuses_huge_work():
    with pytest.raises(ValueError, match="binomial terms"):
        pc.half_width_curves(np.arange(1, 3 * 10**5), 0.8)
