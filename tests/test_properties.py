"""Property-based tests (Hypothesis) over every interval method, scheme and metric."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import perfci as pc

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Wald's lower end is not monotone in x near 0 (p - z sqrt(p (1 - p) / n) falls, then
# rises): it is the documented exception to monotonicity. The logit interval is monotone
# up to a level of about 0.982 (z = log 2 / (1 - 1/sqrt 2)); above it, its lower end at
# x = n - 1 falls below the one at x = n - 2 (and its upper end mirrors this).
MONOTONE = [m for m in pc.ANALYTIC_METHODS if m not in ("wald", "logit")]


@st.composite
def proportion(draw, max_n=500):
    n = draw(st.integers(1, max_n))
    x = draw(st.integers(0, n))
    return x, n


levels = st.floats(0.5, 0.999)


@SETTINGS
@given(proportion(), levels, st.sampled_from(pc.ANALYTIC_METHODS))
def test_bounds_ordered_inside_unit_interval_and_contain_the_estimate(xn, level, method):
    x, n = xn
    ci = pc.proportion_ci(x, n, method=method, confidence_level=level)
    assert 0 <= ci.low <= ci.high <= 1
    if method in ("wald", "wilson", "clopper_pearson"):  # intervals built around x / n
        assert ci.low - 1e-12 <= x / n <= ci.high + 1e-12


@SETTINGS
@given(proportion(), levels, st.sampled_from(pc.ANALYTIC_METHODS))
def test_symmetric_under_relabelling_successes_and_failures(xn, level, method):
    x, n = xn
    a = pc.proportion_ci(x, n, method=method, confidence_level=level)
    b = pc.proportion_ci(n - x, n, method=method, confidence_level=level)
    assert a.low == pytest.approx(1 - b.high, abs=1e-9)
    assert a.high == pytest.approx(1 - b.low, abs=1e-9)


@SETTINGS
@given(st.integers(1, 400), levels, st.sampled_from(MONOTONE))
def test_monotone_in_x(n, level, method):
    x = np.arange(n + 1)
    ci = pc.proportion_ci(x, n, method=method, confidence_level=level)
    assert np.all(np.diff(ci.low) >= -1e-12) and np.all(np.diff(ci.high) >= -1e-12)


@SETTINGS
@given(st.integers(1, 400), st.floats(0.5, 0.98))
def test_logit_is_monotone_in_x_up_to_a_level_of_0_98(n, level):
    x = np.arange(n + 1)
    ci = pc.proportion_ci(x, n, method="logit", confidence_level=level)
    assert np.all(np.diff(ci.low) >= -1e-12) and np.all(np.diff(ci.high) >= -1e-12)


def test_logit_is_not_monotone_at_high_levels():
    # the documented exception: at 99% and n = 28, x = 27 has the lower low end than x = 26
    ci = pc.proportion_ci([26, 27], 28, method="logit", confidence_level=0.99)
    assert ci.low[1] < ci.low[0]
    ci = pc.proportion_ci([1, 2], 28, method="logit", confidence_level=0.99)
    assert ci.high[0] > ci.high[1]


@SETTINGS
@given(
    proportion(),
    st.floats(0.5, 0.98),
    st.floats(0.001, 0.019),
    st.sampled_from(pc.ANALYTIC_METHODS),
)
def test_nested_across_confidence_levels(xn, level, step, method):
    x, n = xn
    narrow = pc.proportion_ci(x, n, method=method, confidence_level=level)
    wide = pc.proportion_ci(x, n, method=method, confidence_level=level + step)
    assert wide.low <= narrow.low + 1e-12 and narrow.high <= wide.high + 1e-12


cells = st.lists(st.integers(0, 60), min_size=4, max_size=4).filter(lambda c: sum(c) > 0)


@SETTINGS
@given(cells, st.sampled_from(pc.BINARY_METRICS))
def test_metrics_in_range_or_undefined(counts, metric):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        value = float(pc.compute_metric(counts, metric))
    if not np.isnan(value):
        low = -1 if metric in ("kappa", "mcc") else 0
        assert low - 1e-12 <= value <= 1 + 1e-12


@SETTINGS
@given(cells, st.sampled_from(["kappa", "ppa", "pna", "mcc", "accuracy", "f1"]))
def test_rater_swap_invariance_of_metrics(counts, metric):
    import warnings

    tp, fp, fn, tn = counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        a = float(pc.compute_metric([tp, fp, fn, tn], metric))
        b = float(pc.compute_metric([tp, fn, fp, tn], metric))
    assert (np.isnan(a) and np.isnan(b)) or a == pytest.approx(b, abs=1e-12)


persons = st.lists(st.tuples(st.integers(0, 12), st.integers(1, 12)), min_size=2, max_size=8)


@settings(max_examples=25, deadline=None)
@given(
    persons,
    st.sampled_from(["cluster", "hierarchical"]),
    st.sampled_from(["percentile", "bca"]),
    st.integers(0, 1),
    st.integers(1, 300),
)
def test_bootstrap_batch_and_person_order_change_nothing(rows, scheme, interval, lam, batch):
    import warnings

    cells = np.array([[min(y, n), n - min(y, n)] for y, n in rows])
    kwargs = dict(scheme=scheme, interval=interval, pseudo_count=lam, n_resamples=300, rng=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = pc.bootstrap_ci(cells, "proportion", **kwargs)
        b = pc.bootstrap_ci(cells[::-1], "proportion", batch=batch, **kwargs)
    np.testing.assert_array_equal(a.distribution, b.distribution)
    assert 0 <= a.low <= a.high <= 1


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 8), st.integers(1, 8)), min_size=2, max_size=10),
    st.sampled_from(pc.DESIGNS),
    st.sampled_from([None, *pc.DF_ADJUSTMENTS]),
    st.sampled_from(pc.ANALYTIC_METHODS),
)
def test_clustered_intervals_inside_unit_interval(rows, design, df_adjust, method):
    import warnings

    y = np.array([min(a, b) for a, b in rows])
    n = np.array([b for _, b in rows])
    method = "wilson" if design == "edge" else method  # the edge design is a score interval
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.UndefinedMetricWarning)
        ci = pc.clustered_proportion_ci(y, n, method=method, design=design, df_adjust=df_adjust)
    assert 0 <= ci.low <= ci.high <= 1
    assert ci.design_effect > 0 and ci.n_clusters == len(rows)


person_cells = st.lists(
    st.lists(st.integers(0, 6), min_size=4, max_size=4).filter(lambda c: sum(c) > 0),
    min_size=2,
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(
    person_cells,
    st.sampled_from(pc.BINARY_METRICS),
    st.sampled_from(pc.SCHEMES),
    st.sampled_from(pc.BOOTSTRAP_INTERVALS),
    st.integers(0, 1),
)
def test_bootstrap_every_metric_and_scheme_gives_ordered_bounds_in_range(
    rows, metric, scheme, interval, lam
):
    import warnings

    cells = np.array(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ci = pc.bootstrap_ci(
                cells,
                metric,
                scheme=scheme,
                interval=interval,
                pseudo_count=lam,
                n_resamples=200,
                nested=True,
                rng=3,
            )
        except ValueError as exc:  # the only allowed failure: undefined everywhere
            assert "undefined in every resample" in str(exc)
            return
    low_limit = -1 if metric in ("kappa", "mcc") else 0
    assert low_limit - 1e-12 <= ci.low <= ci.high <= 1 + 1e-12


@settings(max_examples=40, deadline=None)
@given(
    person_cells,
    st.sampled_from(["kappa", "ppa", "pna"]),
    st.sampled_from(pc.SCHEMES),
    st.integers(0, 1),
)
def test_bootstrap_rater_swap_gives_the_same_interval(rows, metric, scheme, lam):
    import warnings

    cells = np.array(rows)
    swapped = cells[:, [0, 2, 1, 3]]
    kwargs = dict(scheme=scheme, pseudo_count=lam, n_resamples=200, rng=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a = pc.bootstrap_ci(cells, metric, **kwargs)
        except ValueError:
            with pytest.raises(ValueError):
                pc.bootstrap_ci(swapped, metric, **kwargs)
            return
        b = pc.bootstrap_ci(swapped, metric, **kwargs)
    np.testing.assert_array_equal(a.distribution, b.distribution)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=3, max_size=30), st.sampled_from(pc.BINARY_METRICS))
def test_singleton_persons_cluster_equals_hierarchical_for_every_metric(kinds, metric):
    import warnings

    cells = np.eye(4, dtype=int)[kinds]  # one text per person, of the given kind
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            a = pc.bootstrap_ci(cells, metric, scheme="cluster", n_resamples=200, rng=6)
        except ValueError:
            return
        b = pc.bootstrap_ci(cells, metric, scheme="hierarchical", n_resamples=200, rng=6)
    np.testing.assert_array_equal(a.distribution, b.distribution)
