"""Cross-validated metrics (perfci.splits).

Reference values: the out-of-fold intervals' standard errors are statsmodels' cluster-robust
standard error of an intercept-only regression of the metric's success on its relevant
texts (``OLS(y, ones).fit(cov_type="cluster", cov_kwds={"groups": g})``, whose small-sample
factor is G/(G - 1) for one regressor), with persons as the clusters (``"naive"``) or the
folds (``"fold_clusters"``). The nested scheme is checked against a plain loop over its
folds written from the authors' R code (nestedcv's ``nested_cv_helper``: the pivots, the
inflation, the bias factor), with every other fold where the R code draws one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import stats

import perfci as pc
from perfci._core.validation import UndefinedMetricWarning
from perfci.splits import cv_counts, grouped_folds, nested_cv_counts


def _data(seed=0, persons=12, texts=8):
    rng = np.random.default_rng(seed)
    person = np.repeat(np.arange(persons), texts)
    truth = rng.random(person.size) < 0.4
    hit = rng.random(person.size) < np.where(truth, 0.8, 0.9)
    pred = np.where(hit, truth, ~truth).astype(int)
    return truth.astype(int), pred, person


def _cluster_se(y, groups):
    sm = pytest.importorskip("statsmodels.api")
    fit = sm.OLS(y.astype(float), np.ones(y.size)).fit(
        cov_type="cluster", cov_kwds={"groups": groups}
    )
    return float(fit.bse[0]), float(fit.params[0])


@pytest.mark.parametrize("method", ["naive", "fold_clusters"])
def test_standard_error_equals_statsmodels_cluster_robust(method):
    truth, pred, person = _data()
    folds = grouped_folds(4, groups=person, rng=5)[0]
    ci = pc.cv_ci(truth, pred, "recall", folds=folds, groups=person, method=method)
    positive = truth == 1
    clusters = person if method == "naive" else folds
    se, estimate = _cluster_se(pred[positive] == 1, clusters[positive])
    assert ci.estimate == pytest.approx(estimate, abs=1e-12)
    assert ci.se == pytest.approx(se, rel=1e-10)
    # the interval is the t interval on the logit scale
    t = stats.t.ppf(0.975, ci.df)
    half = t * se / (estimate * (1 - estimate))
    logit = np.log(estimate / (1 - estimate))
    assert ci.low == pytest.approx(1 / (1 + np.exp(-(logit - half))), abs=1e-12)
    assert ci.high == pytest.approx(1 / (1 + np.exp(-(logit + half))), abs=1e-12)
    assert ci.df == (3 if method == "fold_clusters" else pytest.approx(ci.df))
    assert ci.sources == ("texts", "persons", "splits")
    assert ci.training_fraction == 0.75 and ci.n_folds == 4 and ci.n_repeats == 1


def test_naive_df_is_effective_persons_less_one():
    truth, pred, person = _data(1)
    folds = grouped_folds(3, groups=person, rng=1)[0]
    ci = pc.cv_ci(truth, pred, "recall", folds=folds, groups=person, method="naive")
    sizes = np.bincount(person[truth == 1])
    assert ci.df == pytest.approx(sizes.sum() ** 2 / (sizes**2).sum() - 1, rel=1e-12)


def test_repeats_average_their_estimates_and_variances():
    truth, pred, person = _data(2)
    rng = np.random.default_rng(3)
    other = np.where(rng.random(pred.size) < 0.1, 1 - pred, pred)
    folds = grouped_folds(4, groups=person, repeats=2, rng=4)
    method = "fold_clusters"
    both = pc.cv_ci(truth, np.c_[pred, other], "f1", folds=folds.T, groups=person, method=method)
    one = [
        pc.cv_ci(truth, p, "f1", folds=f, groups=person, method=method)
        for p, f in ((pred, folds[0]), (other, folds[1]))
    ]
    assert both.estimate == pytest.approx(np.mean([c.estimate for c in one]), abs=1e-12)
    assert both.se**2 == pytest.approx(np.mean([c.se**2 for c in one]), rel=1e-12)
    assert both.n_repeats == 2
    # one column of folds is shared by every column of labels (seeds on the same folds)
    shared = pc.cv_ci(truth, np.c_[pred, other], "f1", folds=folds[0], groups=person)
    assert shared.n_repeats == 2


def test_batch_equals_loop():
    rng = np.random.default_rng(7)
    counts = rng.multinomial(6, [0.3, 0.1, 0.1, 0.5], size=(3, 2, 10))
    folds = np.stack([np.stack([rng.permutation(10) % 4 for _ in range(2)]) for _ in range(3)])
    for method in ("naive", "fold_clusters"):
        batch = cv_counts(counts, folds, "precision", method=method)
        for b in range(3):
            single = cv_counts(counts[b], folds[b], "precision", method=method)
            assert batch.low[b] == single.low and batch.high[b] == single.high
    pairs = rng.multinomial(20, [0.3, 0.1, 0.1, 0.5], size=(3, 4, 5, 5))
    batch = nested_cv_counts(pairs, counts, "precision")
    for b in range(3):
        single = nested_cv_counts(pairs[b], counts[b], "precision")
        assert batch.low[b] == pytest.approx(single.low, abs=1e-15)
        assert batch.inflation[b] == pytest.approx(single.inflation, abs=1e-15)


def _metric(c):
    return c[0] / (c[0] + c[2])  # recall


def test_nested_scheme_equals_a_loop_over_its_folds():
    rng = np.random.default_rng(11)
    k, repeats = 4, 3
    pairs = rng.multinomial(30, [0.35, 0.1, 0.15, 0.4], size=(repeats, k, k))
    oof = rng.multinomial(8, [0.35, 0.1, 0.15, 0.4], size=(2, 15))
    pivots, groups = [], []
    for r in range(repeats):
        for i in range(k):
            inner = sum(pairs[r, j, i] for j in range(k) if j != i)
            for other in range(k):
                if other != i:
                    pivots.append(_metric(inner) - _metric(pairs[r, i, other]))
                    groups.append(_metric(pairs[r, i, other]))
    inflation = min(k, max(1, (np.var(pivots, ddof=1) / np.var(groups, ddof=1) - 1) * (k - 1)))
    pooled = pairs.sum((0, 1, 2))
    raw = _metric(pooled)
    naive = []
    for run in oof:
        total = run.sum(0)
        theta = _metric(total)
        u = (run[:, 0] - theta * (run[:, 0] + run[:, 2])) / (total[0] + total[2])
        m = np.count_nonzero(run[:, 0] + run[:, 2])
        naive.append(m / (m - 1) * np.sum(u**2))
    cv_mean = np.mean([_metric(run.sum(0)) for run in oof])
    estimate = raw - (raw - cv_mean) * (1 + ((k - 2) / (k - 1)) ** 1.5)
    ci = nested_cv_counts(pairs, oof, "recall", nested=False)
    assert ci.inflation == pytest.approx(inflation, rel=1e-12)
    assert ci.estimate == pytest.approx(estimate, abs=1e-12)
    assert ci.se == pytest.approx(np.sqrt(np.mean(naive) * inflation), rel=1e-12)
    z = stats.norm.ppf(0.975)
    assert ci.low == pytest.approx(estimate - z * ci.se, abs=1e-12)
    assert ci.training_fraction == 1.0 and ci.sources == ("texts", "splits")
    plain = nested_cv_counts(pairs, oof, "recall", nested=False, bias=False)
    assert plain.estimate == pytest.approx(raw, abs=1e-12)


class _Threshold:
    """A duck-typed estimator (no scikit-learn): codes positive above the training mean."""

    def fit(self, x, y):
        self.cut = float(np.mean(x[:, 0]))
        return self

    def predict(self, x):
        return (x[:, 0] > self.cut).astype(int)


def test_nested_cv_ci_fits_every_pair_of_folds():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((90, 2))
    y = (x[:, 0] + 0.8 * rng.standard_normal(90) > 0).astype(int)
    person = np.repeat(np.arange(30), 3)
    ci = pc.nested_cv_ci(_Threshold(), x, y, "accuracy", groups=person, n_folds=5, repeats=3, rng=2)
    assert ci.n_folds == 5 and ci.n_repeats == 3 and ci.units == 30
    assert ci.low < ci.estimate < ci.high and 1 <= ci.inflation <= 5
    assert ci.sources == ("texts", "persons", "splits")
    again = pc.nested_cv_ci(
        _Threshold(), x, y, "accuracy", groups=person, n_folds=5, repeats=3, rng=2
    )
    assert again.low == ci.low  # the folds follow `rng`


def test_nested_cv_ci_with_scikit_learn():
    linear_model = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((80, 3))
    y = np.where(x[:, 0] + rng.standard_normal(80) > 0, "yes", "no")
    ci = pc.nested_cv_ci(
        linear_model.LogisticRegression(), x, y, "recall", positive="yes", n_folds=4,
        repeats=2, bias_repeats=1, rng=0,
    )  # fmt: skip
    assert 0 < ci.low < ci.estimate < ci.high < 1


def test_bad_input_names_the_argument():
    truth, pred, person = _data()
    leaky = np.arange(truth.size) % 4  # texts of one person in several folds
    with pytest.raises(ValueError, match="`folds` column 0 puts texts of one person"):
        pc.cv_ci(truth, pred, "recall", folds=leaky, groups=person)
    pc.cv_ci(truth, pred, "recall", folds=leaky, groups=person, method="naive")
    with pytest.raises(ValueError, match="`folds` must hold one value per text"):
        pc.cv_ci(truth, pred, "recall", folds=leaky[:-1], groups=person)
    with pytest.raises(ValueError, match="one column per column of `y_pred`"):
        pc.cv_ci(truth, np.c_[pred, pred], "recall", folds=np.c_[leaky, leaky, leaky])
    with pytest.raises(ValueError, match="`method` must be one of"):
        pc.cv_ci(truth, pred, "recall", folds=leaky, method="fold")
    with pytest.raises(ValueError, match="`folds` has missing values|`folds` column 0 has"):
        pc.cv_ci(truth, pred, "recall", folds=np.where(leaky == 0, np.nan, leaky))
    with pytest.raises(ValueError, match="at least two folds"):
        cv_counts(np.ones((1, 5, 4)), np.zeros((1, 5), int), "recall")
    with pytest.raises(ValueError, match="at least 3 folds"):
        nested_cv_counts(np.ones((2, 2, 2, 4)), np.ones((1, 5, 4)), "recall")
    with pytest.raises(ValueError, match="`estimator` must have a `fit` method"):
        pc.nested_cv_ci(object(), np.zeros((10, 1)), np.arange(10) % 2, "recall")
    with pytest.raises(ValueError, match="`n_folds` must be an integer of at least 3"):
        pc.nested_cv_ci(_Threshold(), np.zeros((10, 1)), np.arange(10) % 2, "recall", n_folds=2)


def test_an_estimate_at_its_bound_gives_nan_and_a_warning():
    truth, _, person = _data()
    folds = grouped_folds(3, groups=person, rng=0)[0]
    with pytest.warns(UndefinedMetricWarning, match="at the bound"):
        ci = pc.cv_ci(truth, truth, "recall", folds=folds, groups=person)
    assert ci.estimate == 1 and np.isnan(ci.low) and np.isnan(ci.high)


def test_grouped_folds_keep_persons_together_and_balance_them():
    person = np.repeat(np.arange(11), np.arange(1, 12))
    folds = grouped_folds(3, groups=person, repeats=4, rng=1)
    assert folds.shape == (4, person.size)
    for fold in folds:
        per_person = [set(fold[person == p]) for p in range(11)]
        assert all(len(s) == 1 for s in per_person)
        sizes = np.bincount([s.pop() for s in per_person], minlength=3)
        assert sorted(sizes) == [3, 4, 4]
    assert not np.array_equal(folds[0], folds[1])
    assert np.array_equal(
        grouped_folds(3, groups=person, rng=9), grouped_folds(3, groups=person, rng=9)
    )
    with pytest.raises(ValueError, match="`n_folds` must be between 2 and the number of persons"):
        grouped_folds(12, groups=person)
    with pytest.raises(ValueError, match="needs `groups` or `n_texts`"):
        grouped_folds(3)


def test_harness_kernel_scores_what_the_public_functions_give():
    from perfci.harness import schema
    from perfci.harness.execution import compute_cell

    suite = schema.load_suite("atlas-cv")
    cell = suite.cells("smoke")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = compute_cell(suite, "smoke", cell)
    valid = out[:, 4]
    assert np.all(valid == 100)
    # hits + misses below + misses above = valid data sets
    assert np.allclose(out[:, 0] + out[:, 1] + out[:, 2], valid)


def test_larger_variance_is_the_larger_of_the_two_with_the_persons_df():
    for seed in range(4):
        truth, pred, person = _data(seed, persons=15)
        folds = grouped_folds(5, groups=person, rng=seed)[0]
        found = {
            method: pc.cv_ci(truth, pred, "f1", folds=folds, groups=person, method=method)
            for method in ("naive", "fold_clusters", "larger_variance")
        }
        larger = found["larger_variance"]
        assert larger.se == max(found["naive"].se, found["fold_clusters"].se)
        assert larger.df == found["naive"].df
    assert pc.cv_ci(truth, pred, "f1", folds=folds, groups=person).method == larger.method
