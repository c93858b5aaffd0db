"""Bayesian intervals of every confusion-matrix metric: independent, nested and paired."""

import warnings

import numpy as np
import pytest
from scipy import special, stats

import perfci as pc
from perfci._core import margins
from perfci._core.joint import TO_A, TO_B

COUNTS = np.array([40, 6, 9, 345])  # tp, fp, fn, tn
PER_PERSON = np.array([[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]])


def quantile_se(draws, q):
    """Monte-Carlo SE of a sample quantile of independent draws (density by a KDE)."""
    density = stats.gaussian_kde(draws)(np.quantile(draws, q))[0]
    return np.sqrt(q * (1 - q) / draws.size) / density


def weighted_quantile(values, weights, q):
    order = np.argsort(values)
    cdf = np.cumsum(weights[order]) / weights.sum()
    return np.interp(q, cdf, values[order])


# ------------------------------------------------------------------ closed forms


@pytest.mark.parametrize(
    ("prior", "metric", "reference"),
    [
        # scipy.stats.beta.ppf([0.025, 0.5, 0.975], 40.5, 9.5)
        ("jeffreys", "recall", [0.69154527, 0.81415284, 0.90503769]),
        # scipy.stats.beta.ppf([0.025, 0.5, 0.975], 40.5, 6.5)
        ("jeffreys", "precision", [0.75076738, 0.86684443, 0.94367281]),
        # w = scipy.stats.beta.ppf([0.025, 0.5, 0.975], 40.5, 16.0); 2 w / (1 + w)
        ("jeffreys", "f1", [0.7450638, 0.83679528, 0.90434398]),
        # w = scipy.stats.beta.ppf([0.025, 0.5, 0.975], 40.5, 15.5); 2 w / (1 + w)
        ("metric_jeffreys", "f1", [0.7501146, 0.8411759, 0.90781375]),
        ("metric_jeffreys", "ppa", [0.7501146, 0.8411759, 0.90781375]),
        # scipy.stats.beta.ppf([0.025, 0.5, 0.975], 385.5, 15.5)
        ("metric_jeffreys", "accuracy", [0.94043518, 0.96211172, 0.97791715]),
        # scipy.stats.beta.ppf([0.025, 0.5, 0.975], 386, 16)
        ("jeffreys", "accuracy", [0.93905351, 0.96096038, 0.97702447]),
        # scipy.stats.beta.ppf([0.025, 0.5, 0.975], 346, 10)
        ("uniform", "npv", [0.95242085, 0.97278982, 0.98641095]),
        # scipy.stats.beta.ppf([0.025, 0.5, 0.975], 345.25, 6.25)
        ("perks", "specificity", [0.96603882, 0.98312594, 0.99326124]),
        # the recall is a margin: Beta(tp + 1/2, fn + 1/2) under jeffreys_margins too
        ("jeffreys_margins", "recall", [0.69154527, 0.81415284, 0.90503769]),
    ],
)
def test_closed_forms_are_scipy_beta_quantiles(prior, metric, reference):
    post = pc.bayes.confusion_posterior(COUNTS, prior=prior)
    assert post.closed_form(metric)
    ci = post.interval(metric, "eti", 0.95)
    np.testing.assert_allclose([ci.low, ci.estimate, ci.high], reference, rtol=0, atol=1e-7)


def test_a_number_is_a_symmetric_dirichlet_prior():
    ci = pc.bayes.confusion_posterior(COUNTS, prior=0.5).interval("precision")
    same = pc.bayes.confusion_posterior(COUNTS, prior="jeffreys").interval("precision")
    assert (ci.low, ci.high) == (same.low, same.high)
    assert pc.bayes.confusion_posterior(COUNTS, prior=0.3).prior == "dirichlet(0.3)"


def _exact_f1_coverage(n, precision, recall, prevalence=0.1, level=0.95):
    """Exact coverage of 2W/(1+W), W ~ Beta(tp + 1/2, fp + fn + 1/2), by enumeration.

    n' = tp + fp + fn ~ Binomial(n, P(tp) + P(fp) + P(fn)) and tp | n' ~ Binomial(n', W*)
    with W* = F1 / (2 - F1): the interval covers when the Beta interval of W covers W*.
    """
    tp_p = prevalence * recall
    fp_p = tp_p * (1 - precision) / precision
    relevant = tp_p + fp_p + prevalence * (1 - recall)
    w_star = tp_p / relevant
    coverage = 0.0
    for n_rel in range(n + 1):
        x = np.arange(n_rel + 1)
        low = stats.beta.ppf((1 - level) / 2, x + 0.5, n_rel - x + 0.5)
        high = stats.beta.ppf((1 + level) / 2, x + 0.5, n_rel - x + 0.5)
        inside = (low <= w_star) & (w_star <= high)
        coverage += (
            stats.binom.pmf(n_rel, n, relevant) * stats.binom.pmf(x, n_rel, w_star)[inside].sum()
        )
    return coverage


@pytest.mark.parametrize("n", [30, 35, 40, 50])
def test_default_f1_interval_covers_on_the_paper_grid_exactly(n):
    values = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    coverages = [_exact_f1_coverage(n, p, r) for p in values for r in values]
    assert min(coverages) >= 0.93, min(coverages)


def test_exact_f1_coverage_is_the_library_interval_simulated():
    # the enumeration above against the library's interval on simulated data sets
    n, precision, recall, reps = 35, 0.7, 0.7, 20_000
    tp = 0.1 * recall
    probs = [tp, tp * (1 - precision) / precision, 0.1 - tp]
    probs.append(1 - sum(probs))
    counts = np.random.default_rng(8).multinomial(n, probs, size=reps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.bayes.PriorOnlyWarning)
        ci = pc.bayes.confusion_posterior(counts).interval("f1")
    truth = 2 * precision * recall / (precision + recall)
    simulated = np.mean((ci.low <= truth) & (truth <= ci.high))
    exact = _exact_f1_coverage(n, precision, recall)
    assert simulated == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / reps))


@pytest.mark.parametrize("prior", ["metric_jeffreys", "jeffreys", "uniform", "perks"])
@pytest.mark.parametrize("metric", ["f1", "pna", "precision", "accuracy"])
def test_draws_agree_with_the_closed_form(prior, metric):
    post = pc.bayes.confusion_posterior(COUNTS, prior=prior)
    draws = post.draws(metric, 100_000, rng=3)
    ci = post.interval(metric, "eti", 0.9)
    for q, end in [(0.05, ci.low), (0.5, ci.estimate), (0.95, ci.high)]:
        assert abs(np.quantile(draws, q) - end) <= 4 * quantile_se(draws, q)


def test_draws_are_the_dirichlet_posterior():
    """Kappa from the margins' draws against kappa of numpy's Dirichlet draws."""
    post = pc.bayes.confusion_posterior(COUNTS, prior="uniform")
    pi = np.random.default_rng(7).dirichlet(COUNTS + 1.0, size=100_000)
    tp, fp, fn, tn = pi.T
    kappa = 2 * (tp * tn - fp * fn) / ((tp + fp) * (fp + tn) + (tp + fn) * (fn + tn))
    ci = post.interval("kappa", "eti", 0.9, draws=100_000, rng=1)
    for q, end in [(0.05, ci.low), (0.5, ci.estimate), (0.95, ci.high)]:
        tol = 4 * np.hypot(quantile_se(kappa, q), quantile_se(kappa, q))
        assert abs(np.quantile(kappa, q) - end) <= tol


def test_jeffreys_margins_precision_is_the_product_of_three_betas():
    tp, fp, fn, tn = COUNTS
    rng = np.random.default_rng(11)
    size = 100_000
    prevalence = rng.beta(tp + fn + 0.5, fp + tn + 0.5, size)
    recall = rng.beta(tp + 0.5, fn + 0.5, size)
    specificity = rng.beta(tn + 0.5, fp + 0.5, size)
    positive = prevalence * recall
    precision = positive / (positive + (1 - prevalence) * (1 - specificity))
    post = pc.bayes.confusion_posterior(COUNTS, prior="jeffreys_margins")
    assert post.alpha is None and not post.closed_form("precision")
    ci = post.interval("precision", "eti", 0.9, draws=size, rng=2)
    for q, end in [(0.05, ci.low), (0.5, ci.estimate), (0.95, ci.high)]:
        assert abs(np.quantile(precision, q) - end) <= 4 * np.sqrt(2) * quantile_se(precision, q)


def test_hdi_holds_its_level_and_is_narrower():
    post = pc.bayes.confusion_posterior([3, 0, 1, 26])
    draws = post.draws("f1", 200_000, rng=5)
    hdi, eti = post.interval("f1", "hdi", 0.9), post.interval("f1", "eti", 0.9)
    inside = np.mean((draws >= hdi.low) & (draws <= hdi.high))
    assert inside == pytest.approx(0.9, abs=4 * np.sqrt(0.09 / draws.size))
    assert hdi.high - hdi.low < eti.high - eti.low


def test_multiclass_micro_is_accuracy_and_macro_from_draws():
    matrix = np.array([[30, 3, 2], [4, 25, 1], [2, 2, 31]])
    post = pc.bayes.confusion_posterior(matrix, prior="uniform", multiclass=True)
    hits, total = np.trace(matrix), matrix.sum()
    # scipy.stats.beta.ppf([0.025, 0.975], hits + 3, total - hits + 6): Dirichlet(1) on 9 cells
    ci = post.interval("micro_f1")
    np.testing.assert_allclose(
        [ci.low, ci.high], stats.beta.ppf([0.025, 0.975], hits + 3, total - hits + 6), atol=1e-9
    )
    pi = np.random.default_rng(4).dirichlet(matrix.ravel() + 1.0, size=100_000).reshape(-1, 3, 3)
    tp = np.diagonal(pi, axis1=1, axis2=2)
    f1 = 2 * tp / (2 * tp + (pi.sum(1) - tp) + (pi.sum(2) - tp))
    macro = f1.mean(1)
    drawn = post.interval("macro_f1", "eti", 0.9, draws=100_000, rng=1)
    for q, end in [(0.05, drawn.low), (0.95, drawn.high)]:
        assert abs(np.quantile(macro, q) - end) <= 4 * np.sqrt(2) * quantile_se(macro, q)


def test_batched_equals_looped_independent():
    rng = np.random.default_rng(2)
    counts = rng.multinomial(60, [0.1, 0.05, 0.05, 0.8], size=(2, 3))
    post = pc.bayes.confusion_posterior(counts)
    batched = post.interval("kappa", rng=9)
    small = post.interval("kappa", rng=9, batch=2)
    generators = pc.batch_generators(9, 6)
    for k, (i, j) in enumerate(np.ndindex(2, 3)):
        one = pc.bayes.confusion_posterior(counts[i, j]).interval("kappa", rng=generators[k])
        assert batched.low[i, j] == one.low and batched.high[i, j] == one.high
    np.testing.assert_array_equal(batched.low, small.low)
    closed = post.interval("f1")
    assert closed.low[1, 2] == pc.bayes.confusion_posterior(counts[1, 2]).interval("f1").low


def test_no_relevant_texts_gives_the_prior_with_a_warning():
    # policy: the posterior is the prior, Beta(1/2, 1/2) for the recall under jeffreys
    with pytest.warns(pc.bayes.PriorOnlyWarning, match="no relevant text.*prior"):
        ci = pc.bayes.confusion_posterior([0, 3, 0, 27]).interval("recall")
    np.testing.assert_allclose([ci.low, ci.high], stats.beta.ppf([0.025, 0.975], 0.5, 0.5))
    with pytest.warns(pc.bayes.PriorOnlyWarning, match="for 1 of 2 data sets"):
        pc.bayes.confusion_posterior([[0, 0, 0, 30], [2, 1, 1, 26]]).interval("f1")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"counts": [1, 2, 3]}, "`counts` must have a last axis of length 4"),
        ({"counts": [1, 2, 3, -1]}, "`counts` must be non-negative"),
        ({"counts": [[1, 2], [3, 4]], "multiclass": True, "prior": "nope"}, "`prior` must be"),
        ({"counts": [1, 2, 3, 4], "prior": 0.01}, "`prior` as a number"),
        ({"counts": [1, 2, 3, 4], "prior": True}, "`prior` must be"),
        ({"counts": [1, 2, 3, 4], "multiclass": 1}, "`multiclass` must be True or False"),
        ({"counts": [1, 2, 3, 4], "multiclass": True}, "`counts` must be k x k"),
    ],
)
def test_confusion_posterior_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.bayes.confusion_posterior(**kwargs)


# ------------------------------------------------------------------ nested texts


def _brute_force_f1(cells, size, seed):
    """Posterior of the sampled persons' F1 by importance sampling from the full prior.

    Every margin's mu ~ U(0, 1) and s ~ Beta(3, 1) (the Pareto(1.5, 1) prior of kappa =
    s^-2), person rates p ~ Beta(mu kappa, (1 - mu) kappa); the weights are the
    multinomial likelihood of each person's four cells (not the margins' binomials).
    """
    rng = np.random.default_rng(seed)
    m = cells.shape[0]

    def rates():
        mu, s = rng.uniform(size=size), rng.beta(3, 1, size)
        kappa = s**-2.0
        return rng.beta((mu * kappa)[:, None], ((1 - mu) * kappa)[:, None], (size, m))

    prevalence, recall, specificity = rates(), rates(), rates()
    pi = np.stack(
        [
            prevalence * recall,
            (1 - prevalence) * (1 - specificity),
            prevalence * (1 - recall),
            (1 - prevalence) * specificity,
        ],
        -1,
    )
    log_weight = special.xlogy(cells, pi).sum((-2, -1))  # a rate of 0 has weight 0
    weight = np.exp(log_weight - log_weight.max())
    n = cells.sum(1)
    pooled = (pi * n[:, None]).sum(1) / n.sum()
    keep = weight > 0  # prior draws that cannot have made the data (a rate of 0)
    f1 = pc.compute_metric(pooled[keep], "f1")
    return f1, weight[keep]


def test_margins_model_is_the_full_model_by_importance_sampling():
    # person 3 has no reference positive: their recall comes from the population
    cells = np.array([[2, 1, 0, 3], [1, 0, 1, 2], [0, 1, 0, 3]])
    f1, weight = [], []
    for seed in range(6):  # chunks of one importance sample (memory)
        a, b = _brute_force_f1(cells, 400_000, seed)
        f1.append(a)
        weight.append(b)
    f1, weight = np.concatenate(f1), np.concatenate(weight)
    ess = weight.sum() ** 2 / (weight**2).sum()
    assert ess > 5_000
    draws = 200_000
    ci = pc.bayes.nested_metric_intervals(
        cells, "f1", estimand="sampled_persons", confidence_level=0.8, draws=draws, rng=1
    )
    assert not ci.flagged
    for q, end in [(0.1, ci.low), (0.5, ci.estimate), (0.9, ci.high)]:
        exact = weighted_quantile(f1, weight, q)
        density = stats.gaussian_kde(f1[:50_000], weights=weight[:50_000])(exact)[0]
        se = np.sqrt(q * (1 - q) * (1 / ess + 1 / draws)) / density
        assert abs(exact - end) <= 4 * se, (q, exact, end, se)


def test_margins_factor_the_multinomial():
    rates = np.random.default_rng(1).uniform(size=(5, 3))
    cells = margins.BINARY.probabilities(rates)
    phi, r, s = rates.T
    np.testing.assert_allclose(
        cells, np.stack([phi * r, (1 - phi) * (1 - s), phi * (1 - r), (1 - phi) * s], -1)
    )
    joint = margins.PAIRED.probabilities(np.random.default_rng(2).uniform(size=(4, 7)))
    np.testing.assert_allclose(joint.sum(-1), 1.0)
    matrix = margins.multiclass_tree(3).probabilities(np.full(8, 0.5))
    assert matrix.sum() == pytest.approx(1.0) and matrix.shape == (9,)


def test_nested_batched_equals_looped_and_padding_changes_nothing():
    rng = np.random.default_rng(5)
    cells = rng.multinomial(12, [0.25, 0.05, 0.05, 0.65], size=(3, 6))
    batched = pc.bayes.nested_metric_intervals(cells, "kappa", draws=500, rng=4)
    blocked = pc.bayes.nested_metric_intervals(cells, "kappa", draws=500, rng=4, batch=1)
    np.testing.assert_array_equal(batched.low, blocked.low)
    generators = pc.batch_generators(4, 3)
    padded = np.concatenate([cells, np.zeros((3, 2, 4), dtype=int)], axis=1)
    shuffled = pc.bayes.nested_metric_intervals(padded, "kappa", draws=500, rng=4)
    for k in range(3):
        one = pc.bayes.nested_metric_intervals(cells[k], "kappa", draws=500, rng=generators[k])
        assert (one.low, one.high) == (batched.low[k], batched.high[k])
    np.testing.assert_array_equal(shuffled.low, batched.low)


def test_shared_equals_own_calls_and_population_is_wider():
    shared = pc.bayes.shared_nested_metric_intervals(
        PER_PERSON, ["f1", "precision"], ["population", "sampled_persons"], draws=1000, rng=3
    )
    for (metric, estimand), ci in shared.items():
        own = pc.bayes.nested_metric_intervals(
            PER_PERSON, metric, estimand=estimand, draws=1000, rng=3
        )
        assert (ci.low, ci.estimate, ci.high) == (own.low, own.estimate, own.high)
    for metric in ["f1", "precision"]:
        population, sampled = shared[metric, "population"], shared[metric, "sampled_persons"]
        assert population.high - population.low > sampled.high - sampled.low


def test_fit_confusion_grid_is_nested_metric_intervals():
    fit = pc.bayes.fit_confusion_counts(PER_PERSON, sampler="grid", draws=500, chains=2, rng=6)
    assert not fit.flagged and np.isnan(fit.diagnostics["r_hat"])
    for metric in ["f1", "kappa", "npv"]:
        own = pc.bayes.nested_metric_intervals(PER_PERSON, metric, draws=1000, rng=6)
        ci = fit.interval(metric, "eti", 0.95)
        assert (ci.low, ci.high) == pytest.approx((own.low, own.high), abs=1e-12)
    assert fit.posterior["posterior"]["margin_kappa"].dims == ("chain", "draw", "margin")


def test_population_of_every_person_is_the_sampled_persons():
    everyone = pc.bayes.nested_metric_intervals(PER_PERSON, "f1", population_persons=4, rng=2)
    sampled = pc.bayes.nested_metric_intervals(PER_PERSON, "f1", estimand="sampled_persons", rng=2)
    assert everyone.low == pytest.approx(sampled.low, abs=1e-12)


def test_kappa_population_may_be_negative():
    # a classifier that disagrees with the reference: kappa below 0, inside (-1, 1)
    cells = np.array([[0, 5, 5, 2], [1, 4, 6, 1], [0, 6, 4, 3]])
    ci = pc.bayes.nested_metric_intervals(cells, "kappa", draws=1000, rng=1)
    assert -1 < ci.low < ci.estimate < 0 and ci.high < 1


def test_margin_with_one_person_falls_back_and_is_flagged():
    # only person 1 has reference positives: the recall margin is one pooled rate
    cells = np.array([[3, 1, 1, 10], [0, 1, 0, 12], [0, 0, 0, 9]])
    with pytest.warns(pc.bayes.PriorOnlyWarning, match=r"\['recall'\].*pooled"):
        ci = pc.bayes.nested_metric_intervals(cells, "f1", draws=500, rng=1)
    assert ci.flagged and ci.fallback.tolist() == [False, True, False]
    with pytest.warns(pc.bayes.BayesianDiagnosticsWarning, match="fell back"):
        fit = pc.bayes.fit_confusion_counts(cells, sampler="grid", draws=100, chains=2, rng=1)
    assert fit.flagged and "recall" in fit.flag_reasons[0]


def test_one_person_and_no_texts():
    one = np.array([[[3, 1, 1, 10], [0, 0, 0, 0]]])
    with (
        pytest.warns(pc.UndefinedMetricWarning, match="one person"),
        pytest.warns(pc.bayes.PriorOnlyWarning, match="pooled"),
    ):
        ci = pc.bayes.nested_metric_intervals(one, "f1", draws=500, rng=1)
    assert np.isnan(ci.low[0]) and ci.persons[0] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.bayes.PriorOnlyWarning)  # every margin falls back
        sampled = pc.bayes.nested_metric_intervals(
            one, "f1", estimand="sampled_persons", draws=500, rng=1
        )
    assert 0 < sampled.low[0] < sampled.high[0] < 1 and sampled.flagged[0]
    with pytest.warns(pc.UndefinedMetricWarning, match="no texts"):
        empty = pc.bayes.nested_metric_intervals(np.zeros((2, 4)), "f1", draws=100, rng=1)
    assert np.isnan(empty.low)


def test_paired_differences_without_a_relevant_text_follow_the_written_policy():
    # docs/bayes.md (bayes-paired): independent texts give the prior's interval, as
    # ConfusionPosterior does; nested texts give NaN with the reason
    no_positives = [4, 1, 1, 6, 0, 0, 0, 0]  # joint cells 4 t + 2 a + b, t = 0 only
    prior_only = pc.bayes.compare_counts(no_positives, "recall", draws=20_000, rng=1)
    # the prior Dirichlet(1/2) on the eight joint cells: the difference of the recalls is
    # p6 - p5 of the four reference-positive cells, Dirichlet(1/2, 1/2, 1/2, 1/2); its
    # 2.5% and 97.5% quantiles are -0.815 and 0.815 (numpy, 4 million Dirichlet draws);
    # an end from 20,000 draws has an MC SE of 0.0052 (density 0.21 there): 4 SE
    assert prior_only.low == pytest.approx(-0.815, abs=0.021)
    assert prior_only.high == pytest.approx(0.815, abs=0.021)
    options = {"nested": True, "draws": 200, "grid_shape": (40, 20), "rng": 1}
    with (
        pytest.warns(pc.UndefinedMetricWarning, match="no text relevant"),
        pytest.warns(pc.bayes.PriorOnlyWarning, match="fewer than 2"),
    ):
        nested = pc.bayes.compare_counts([no_positives] * 3, "recall", **options)
    assert np.isnan(nested.low)
    with (
        pytest.warns(pc.UndefinedMetricWarning, match="recall difference is undefined with one"),
        pytest.warns(pc.bayes.PriorOnlyWarning),
    ):
        one = pc.bayes.compare_counts([[3, 1, 1, 2, 1, 1, 2, 5]], "recall", **options)
    assert np.isnan(one.low) and one.persons == 1


def test_nested_macro_average():
    rng = np.random.default_rng(8)
    matrices = rng.multinomial(20, np.full(9, 1 / 9) * 0.4 + np.eye(3).ravel() * 0.2, size=8)
    ci = pc.bayes.nested_metric_intervals(matrices.reshape(8, 3, 3), "macro_f1", draws=500, rng=1)
    assert 0 < ci.low < ci.estimate < ci.high < 1 and len(ci.margins) == 8


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"cells": [[1, 2, 3]]}, r"`cells` must be per-person \[tp, fp, fn, tn\]"),
        ({"cells": [[1, 2, 3, 0.5]]}, "`cells` must hold whole non-negative"),
        ({"metric": "macro_f1"}, "`cells` must be per-person k x k"),
        ({"metric": "roc_auc"}, "`metric` must be one of"),
        ({"estimand": "mu"}, "`estimand` must be one of"),
        ({"prior": "uniform"}, "`prior` must be one of"),
        ({"kind": "mode"}, "`kind` must be one of"),
        ({"draws": 0}, "`draws` must be a positive integer"),
        ({"grid_shape": (1, 5)}, "`grid_shape` must be two integers"),
        ({"population_sizes": [1, 2]}, "`population_sizes` must give one size per person"),
        ({"population_persons": 2}, "`population_persons` must be"),
        ({"level": 1.5}, "`level` must lie strictly between 0 and 1"),
    ],
)
def test_nested_bad_input(kwargs, match):
    arguments = {"cells": PER_PERSON, "metric": "f1", **kwargs}
    with pytest.raises(ValueError, match=match):
        pc.bayes.nested_metric_intervals(**arguments)


# ------------------------------------------------------------ paired comparison


def _joint(cells_a):
    """Joint counts of two identical classifiers from one classifier's [tp, fp, fn, tn]."""
    joint = np.zeros((*cells_a.shape[:-1], 8), dtype=int)
    joint[..., 7], joint[..., 3], joint[..., 4], joint[..., 0] = cells_a.T  # a = b
    return joint


def test_joint_cells_give_each_classifier():
    joint = np.arange(8.0)
    np.testing.assert_array_equal(joint @ TO_A, [6 + 7, 2 + 3, 4 + 5, 0 + 1])
    np.testing.assert_array_equal(joint @ TO_B, [5 + 7, 1 + 3, 4 + 6, 0 + 2])


@pytest.mark.parametrize("nested", [False, True])
@pytest.mark.parametrize("metric", ["f1", "recall", "kappa"])
def test_paired_difference_of_identical_classifiers_is_zero(nested, metric):
    joint = _joint(PER_PERSON) if nested else _joint(PER_PERSON.sum(0))
    draws = 20_000
    with warnings.catch_warnings():
        # no disagreement at all: the disagreement margins have no texts (their priors)
        warnings.simplefilter("ignore", pc.bayes.PriorOnlyWarning)
        diff = pc.bayes.compare_counts(joint, metric, nested=nested, draws=draws, rng=1)
    # the margins are symmetric in A and B, so the posterior of the difference is
    # symmetric about 0: half the (independent) draws above it, within binomial error
    assert diff.low < 0 < diff.high
    assert diff.prob_a_better == pytest.approx(0.5, abs=4 * np.sqrt(0.25 / draws))


def test_paired_independent_is_the_dirichlet_of_the_joint_cells():
    joint = np.array([300, 10, 4, 6, 5, 3, 12, 60])
    pi = np.random.default_rng(3).dirichlet(joint + 0.5, size=100_000)
    recall_a = (pi[:, 6] + pi[:, 7]) / pi[:, 4:].sum(1)
    recall_b = (pi[:, 5] + pi[:, 7]) / pi[:, 4:].sum(1)
    reference = recall_a - recall_b
    diff = pc.bayes.compare_counts(joint, "recall", prior="jeffreys", draws=100_000, rng=2)
    for q, end in [(0.025, diff.low), (0.5, diff.estimate), (0.975, diff.high)]:
        assert abs(np.quantile(reference, q) - end) <= 4 * np.sqrt(2) * quantile_se(reference, q)
    assert diff.prob_a_better == pytest.approx(np.mean(reference > 0), abs=0.005)


def test_paired_batched_equals_looped_and_labels_equal_counts():
    texts = pc.load_example()
    kwargs = {"draws": 500, "rng": 3}
    labelled = pc.bayes.compare(
        texts["human"], texts["model"], texts["model_b"], "f1", groups=texts["person"], **kwargs
    )
    joint = np.zeros((texts["person"].nunique(), 8), dtype=int)
    person = texts["person"].factorize(sort=True)[0]
    cell = (4 * texts["human"] + 2 * texts["model"] + texts["model_b"]).to_numpy()
    np.add.at(joint, (person, cell), 1)
    counted = pc.bayes.compare_counts(joint, "f1", nested=True, **kwargs)
    assert (labelled.low, labelled.high) == (counted.low, counted.high)
    batch = np.stack([joint, joint[::-1]])
    both = pc.bayes.compare_counts(batch, "f1", nested=True, **kwargs)
    second = pc.bayes.compare_counts(
        joint[::-1], "f1", nested=True, draws=500, rng=pc.batch_generators(3, 2)[1]
    )
    assert (both.low[1], both.high[1]) == (second.low, second.high)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"joint": [1, 2, 3]}, r"`joint` must have shape \(\*batch, 8\)"),
        ({"metric": "roc_auc"}, "`metric` must be one of"),
        ({"nested": "yes"}, "`nested` must be True or False"),
        ({"prior": "pareto"}, "`prior` must be one of"),
        ({"nested": True, "joint": [[1] * 8, [2] * 8], "prior": 0.5}, "for nested texts"),
        ({"population_persons": 10}, "`population_persons` applies to nested texts"),
    ],
)
def test_paired_bad_input(kwargs, match):
    arguments = {"joint": [5, 1, 1, 2, 1, 1, 2, 6], "metric": "recall", **kwargs}
    with pytest.raises(ValueError, match=match):
        pc.bayes.compare_counts(**arguments)


def test_the_margins_default_grid_gives_the_fine_grid_intervals():
    rng = np.random.default_rng(12)
    sizes = rng.integers(2, 40, size=(3, 12))
    cells = np.stack([rng.multinomial(k, [0.2, 0.05, 0.05, 0.7]) for k in sizes.ravel()])
    cells = cells.reshape(3, 12, 4)
    draws = 40_000
    default = pc.bayes.nested_metric_intervals(cells, "f1", draws=draws, rng=1)
    fine = pc.bayes.nested_metric_intervals(cells, "f1", draws=draws, grid_shape=(400, 100), rng=1)
    # the SE of a 2.5% quantile of independent draws, the posterior taken as normal
    sd = (fine.high - fine.low) / (2 * stats.norm.ppf(0.975))
    se = np.sqrt(0.025 * 0.975 / draws) / stats.norm.pdf(stats.norm.ppf(0.975)) * sd
    for a, b in [(default.low, fine.low), (default.high, fine.high)]:
        assert np.all(np.abs(a - b) <= 4 * np.sqrt(2) * se)


# ------------------------------------------------------------------ the harness

CONFUSION_SUITE = """
name = "bayes-f1"
seed = 3
[population]
kind = "confusion"
prevalence = 0.1
[grid]
n = [30, 200]
precision = [0.95]
recall = [0.9]
metric = ["f1", "kappa"]
[scales.smoke]
replications = 50
resamples = 40
[[methods]]
name = "percentile"
family = "bootstrap"
interval = "percentile"
[[methods]]
name = "bayes"
family = "bayes_confusion"
draws = 300
"""

NESTED_SUITE = """
name = "bayes-nested"
seed = 4
[population]
kind = "nested_confusion"
recall = 0.85
specificity = 0.95
icc = 0.1
prevalence = 0.3
texts_per_person = 8.0
[grid]
metric = ["f1", "kappa"]
persons = [6]
[scales.smoke]
replications = 12
resamples = 20
[[methods]]
name = "population"
family = "bayes_nested_confusion"
draws = 200
[[methods]]
name = "sampled"
family = "bayes_nested_confusion"
estimand = "sampled_persons"
draws = 200
[[methods]]
name = "first_five"
family = "bayes_nested_confusion"
draws = 200
replications = 5
"""

PAIRED_SUITE = """
name = "bayes-paired"
seed = 5
[population]
kind = "paired_nested"
prevalence = 0.4
recall_a = 0.9
recall_b = 0.85
specificity_a = 0.9
specificity_b = 0.9
agreement = 0.5
icc = 0.1
texts_per_person = 8.0
[grid]
metric = ["recall"]
persons = [6]
[scales.smoke]
replications = 10
resamples = 20
[[methods]]
name = "bayes"
family = "bayes_comparison"
draws = 200
"""


def _load(tmp_path, text):
    from perfci import harness

    path = tmp_path / "suite.toml"
    path.write_text(text)
    return harness.load_suite(path)


def _cell_streams(suite, cell):
    from perfci import harness

    seed = harness.execution._cell_seed(suite, "smoke", cell)
    return np.random.default_rng(seed).spawn(1 + len(suite.methods))


def _scores(low, high, truth, flagged=0):
    valid = np.isfinite(low) & np.isfinite(high)
    low, high = low[valid], high[valid]
    hits = np.sum((low <= truth) & (truth <= high))
    return [hits, np.sum(high < truth), np.sum(low > truth), np.sum(high - low) / 2, low.size]


def test_harness_scores_confusion_posterior(tmp_path):
    from perfci import harness

    suite = _load(tmp_path, CONFUSION_SUITE)
    for cell in suite.cells("smoke"):
        data_rng, _, rng = _cell_streams(suite, cell)
        probs = harness.confusion_probabilities(0.1, cell["precision"], cell["recall"])
        counts = data_rng.multinomial(int(cell["n"]), probs, size=50)
        truth = float(pc.compute_metric(probs, cell["metric"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pc.bayes.PriorOnlyWarning)
            ci = pc.bayes.confusion_posterior(counts).interval(cell["metric"], draws=300, rng=rng)
        row = harness.compute_cell(suite, "smoke", cell)[1]
        np.testing.assert_allclose(row[:5], _scores(ci.low, ci.high, truth))


def test_harness_scores_nested_margins_with_flags(tmp_path):
    from perfci import harness
    from perfci.harness.kernels import _binary_cells
    from perfci.harness.populations import draw_confusion, person_parameters, population_truth

    suite = _load(tmp_path, NESTED_SUITE)
    for cell in suite.cells("smoke"):
        data_rng, first, _, third = _cell_streams(suite, cell)
        params = person_parameters(suite, cell)
        counts = _binary_cells(draw_confusion(params, (12, 6), data_rng))
        pooled = _binary_cells(population_truth("nested_confusion", params))
        truth = float(pc.compute_metric(pooled, cell["metric"]))
        rows = harness.compute_cell(suite, "smoke", cell)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            both = pc.bayes.shared_nested_metric_intervals(
                counts, [cell["metric"]], ["population", "sampled_persons"], draws=200, rng=first
            )
            five = pc.bayes.nested_metric_intervals(
                counts[:5], cell["metric"], draws=200, rng=third
            )
        for row, ci in zip(
            rows,
            [both[cell["metric"], e] for e in ("population", "sampled_persons")] + [five],
            strict=True,
        ):
            np.testing.assert_allclose(row[:5], _scores(ci.low, ci.high, truth))
            valid = np.isfinite(ci.low)
            assert row[5] == np.sum(ci.flagged & valid)
        assert rows[2, 4] <= 5


def test_harness_scores_paired_margins(tmp_path):
    from perfci import harness
    from perfci.harness.populations import draw_paired, paired_truth, person_parameters

    suite = _load(tmp_path, PAIRED_SUITE)
    for cell in suite.cells("smoke"):
        data_rng, rng = _cell_streams(suite, cell)
        params = person_parameters(suite, cell)
        joint = draw_paired(params, (10, 6), data_rng)
        truth = paired_truth(params, "recall")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            diff = pc.bayes.compare_counts(joint, "recall", nested=True, draws=200, rng=rng)
        row = harness.compute_cell(suite, "smoke", cell)[0]
        np.testing.assert_allclose(row[:5], _scores(diff.low, diff.high, truth))


def test_margins_families_only_where_they_apply(tmp_path):
    text = CONFUSION_SUITE.replace(
        'family = "bayes_confusion"', 'family = "bayes_nested_confusion"'
    )
    with pytest.raises(ValueError, match="takes iid `bootstrap` and `bayes_confusion` methods"):
        _load(tmp_path, text)
    text = NESTED_SUITE.replace(
        'draws = 200\n[[methods]]\nname = "sampled"', 'draws = 50\n[[methods]]\nname = "sampled"'
    )
    with pytest.raises(ValueError, match="draws` must be an integer at least 100"):
        _load(tmp_path, text)


@pytest.mark.slow
def test_the_hierarchical_dirichlet_multinomial_has_its_written_log_density():
    # log p(pi, kappa | cells) up to a constant, written out with gammaln: the
    # Dirichlet-multinomial of each person, pi ~ Dirichlet(1), kappa ~ Pareto(1.5, 1);
    # and refit by pm.set_data to other persons, the same formula on those persons
    import pymc as pm
    from scipy.special import gammaln

    from perfci.models import hierarchical_confusion

    def written(cells, pi, kappa):
        cells = np.asarray(cells, float)
        a = kappa * pi
        n = cells.sum(1)
        person = (
            gammaln(n + 1)
            - gammaln(cells + 1).sum(1)
            + gammaln(kappa)
            - gammaln(n + kappa)
            + (gammaln(cells + a) - gammaln(a)).sum(1)
        )
        return person.sum() + np.log(1.5) - 2.5 * np.log(kappa) + gammaln(4.0)

    four = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    model = hierarchical_confusion(four)
    # the log density of the free variables on their own scale, without the transforms'
    # Jacobians: the formula above
    logp = model.compile_logp(jacobian=False)
    pi, kappa = np.array([0.2, 0.05, 0.05, 0.7]), 12.5
    values = {}
    for rv, value in ((model["pi"], pi), (model["kappa"], kappa)):
        transform = model.rvs_to_transforms[rv]
        values[model.rvs_to_values[rv].name] = transform.forward(value, *rv.owner.inputs).eval()
    # PyTensor's Pareto log density differs from the written one by about 1e-9 relative
    np.testing.assert_allclose(logp(values), written(four, pi, kappa), rtol=1e-8)
    two = [[9, 0, 3, 40], [2, 2, 0, 9]]
    with model:
        pm.set_data({"counts": two}, coords={"person": [0, 1]})
    np.testing.assert_allclose(logp(values), written(two, pi, kappa), rtol=1e-8)


def test_counts_too_many_to_hold_are_refused_naming_the_argument():
    big = [[2**40, 1, 1, 5], [3, 1, 1, 5]]
    match = r"must sum to fewer than 4294967296 texts per data set"
    with pytest.raises(ValueError, match=rf"^`cells` {match}"):
        pc.bayes.nested_metric_intervals(big, "f1")
    with pytest.raises(ValueError, match=rf"^`counts` {match}"):
        pc.bayes.fit_confusion_counts(big, sampler="grid")
    joint = [[2**40, 1, 1, 1, 1, 1, 1, 5], [3, 1, 1, 1, 1, 1, 1, 5]]
    with pytest.raises(ValueError, match=rf"^`joint` {match}"):
        pc.bayes.compare_counts(joint, "recall", nested=True)
    # independent texts hold no per-text arrays: any count has its posterior
    ci = pc.bayes.confusion_posterior([2**40, 1, 1, 5]).interval("recall")
    assert 0 < ci.low < ci.high <= 1
