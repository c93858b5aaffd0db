import warnings

import numpy as np
import pytest
from scipy import stats

import perfci as pc


def nested(rng, persons, mean_texts, sd_texts, mean=0.9, sd=0.1):
    """The paper's design: person rates from a Beta with mean 0.9 and SD 0.1."""
    k = mean * (1 - mean) / sd**2 - 1
    rates = rng.beta(mean * k, (1 - mean) * k, persons)
    trials = np.maximum(1, np.round(rng.normal(mean_texts, sd_texts, persons))).astype(int)
    return rng.binomial(trials, rates), trials


def quantile_mcse(draws, q, ess):
    """Monte-Carlo SE of a posterior quantile estimated from draws with the given ESS."""
    density = stats.gaussian_kde(draws)(np.quantile(draws, q))[0]
    return np.sqrt(q * (1 - q) / ess) / density


@pytest.mark.parametrize("persons", [5, 20, 50])
@pytest.mark.parametrize(("mean_texts", "sd_texts"), [(3, 1), (30, 5)])
def test_grid_and_nutpie_agree_within_monte_carlo_error(persons, mean_texts, sd_texts):
    y, n = nested(np.random.default_rng(persons * 100 + mean_texts), persons, mean_texts, sd_texts)
    grid = pc.bayes.fit(y, n, sampler="grid", rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
        mcmc = pc.bayes.fit(y, n, sampler="nutpie", draws=2000, tune=1000, rng=1)
    if mcmc.flagged:
        pytest.skip(f"MCMC flagged ({mcmc.flag_reasons}); not a reference")
    draws = mcmc.draws("mu")
    ess = mcmc.diagnostics["ess_tail"]
    exact = grid.interval("mu", "eti", 0.95)
    for q, end in [(0.025, exact.low), (0.975, exact.high)]:
        tol = 4 * quantile_mcse(draws, q, ess)
        assert abs(np.quantile(draws, q) - end) <= tol, (q, end, tol)


def test_grid_is_converged_in_its_resolution():
    y, n = nested(np.random.default_rng(3), 20, 30, 5)
    default = pc.bayes.grid_intervals(y, n)
    fine = pc.bayes.grid_intervals(y, n, shape=(1200, 600))
    assert default.low == pytest.approx(fine.low, abs=2e-4)
    assert default.high == pytest.approx(fine.high, abs=2e-4)


def test_grid_batch_equals_one_at_a_time():
    rng = np.random.default_rng(4)
    trials = rng.integers(2, 6, size=(4, 12))
    successes = rng.binomial(trials, 0.85)
    batch = pc.bayes.grid_intervals(successes, trials)
    one = pc.bayes.grid_intervals(successes[2:3], trials[2:3])
    # each data set's grid adapts to the batch; ends agree to the grid's precision
    assert batch.low[2] == pytest.approx(one.low[0], abs=5e-4)
    assert batch.high[2] == pytest.approx(one.high[0], abs=5e-4)


def test_closed_form_f1_posterior_agrees_with_dirichlet_draws():
    counts, lam = np.array([40, 6, 9, 345]), 1.0
    post = pc.bayes.confusion_posterior(counts, concentration=lam)
    pi = np.random.default_rng(5).dirichlet(counts + lam, size=400_000)
    f1 = 2 * pi[:, 0] / (2 * pi[:, 0] + pi[:, 1] + pi[:, 2])
    recall = pi[:, 0] / (pi[:, 0] + pi[:, 2])
    for metric, draws in [("f1", f1), ("recall", recall)]:
        ci = post.interval(metric, "eti", 0.9)
        for q, end in [(0.05, ci.low), (0.95, ci.high)]:
            assert abs(np.quantile(draws, q) - end) <= 4 * quantile_mcse(draws, q, draws.size)
        hdi = post.interval(metric, "hdi", 0.9)
        inside = np.mean((draws >= hdi.low) & (draws <= hdi.high))
        assert inside == pytest.approx(0.9, abs=4 * np.sqrt(0.09 / draws.size))
        assert hdi.high - hdi.low <= ci.high - ci.low


def test_same_seed_same_posterior():
    y, n = [9, 8, 10, 7, 9], [10, 10, 10, 10, 10]
    for sampler in ["grid", "nutpie"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
            a = pc.bayes.fit(y, n, sampler=sampler, draws=300, tune=300, rng=11)
            b = pc.bayes.fit(y, n, sampler=sampler, draws=300, tune=300, rng=11)
        np.testing.assert_array_equal(a.draws("mu"), b.draws("mu"))
        np.testing.assert_array_equal(a.draws("person"), b.draws("person"))


def test_estimands_and_result_structure():
    y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
    result = pc.bayes.fit(
        y, n, sampler="grid", draws=1000, chains=2, rng=2, persons=["a", "b", "c", "d", "e"]
    )
    post = result.posterior["posterior"]
    assert set(post.data_vars) == {"mu", "s", "kappa", "text_weighted", "p"}
    assert list(post["person"].values) == ["a", "b", "c", "d", "e"]
    tw = result.draws("text_weighted")
    np.testing.assert_allclose(tw, (result.draws("person") * np.array(n)[:, None]).sum(0) / sum(n))
    persons = result.interval("person", "hdi", 0.8)
    assert persons.low.shape == (5,)
    # partial pooling: person 3's rate (22 of 26) is pulled toward the others
    assert persons.estimate[3] > 22 / 26


def test_all_correct_and_two_persons_end_in_a_result_not_a_hang():
    for y, n in [([3, 3, 2], [3, 3, 2]), ([5, 4], [5, 6])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
            result = pc.bayes.fit(y, n, sampler="nutpie", draws=500, tune=500, rng=1)
        ci = result.interval("mu")
        assert 0 < ci.low < ci.high <= 1
        assert result.flagged == bool(result.flag_reasons)
        grid = pc.bayes.fit(y, n, sampler="grid", rng=1)
        assert not grid.flagged


def test_failing_diagnostics_are_flagged_and_warned():
    with pytest.warns(pc.bayes.BayesianDiagnosticsWarning, match="flagged"):
        result = pc.bayes.fit(
            [9, 8, 10], [10, 10, 10], sampler="nutpie", draws=20, tune=20, chains=2, rng=1
        )
    assert result.flagged and any("ESS" in r for r in result.flag_reasons)


def test_fit_labels_uses_each_persons_relevant_texts():
    texts = pc.load_example()
    result = pc.bayes.fit_labels(
        texts["human"], texts["model"], texts["person"], "recall", sampler="grid", rng=1
    )
    per_person = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    y, n = pc.proportion_counts(per_person, "recall")
    np.testing.assert_array_equal(result.trials, n[n > 0])
    assert result.trials.size == np.count_nonzero(n)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([3], [5]), {}, "at least 2 persons with a relevant text"),
        (([3, 0], [5, 0]), {}, "at least 2 persons"),
        (([3, 6], [5, 5]), {}, "`successes` must not exceed `trials`"),
        (([3, 1.5], [5, 5]), {}, "non-negative whole numbers"),
        (([3, 1], [5, 5]), {"sampler": "metropolis"}, "`sampler` must be one of"),
        (([3, 1], [5, 5]), {"prior": "flat"}, "`prior` must be one of"),
        (([3, 1], [5, 5]), {"draws": 0}, "`draws` must be a positive integer"),
    ],
)
def test_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.bayes.fit(*args, **kwargs)


def test_interval_arguments():
    result = pc.bayes.fit([9, 8, 10], [10, 10, 10], sampler="grid", rng=1)
    with pytest.raises(ValueError, match="`estimand` must be one of"):
        result.interval("median")
    with pytest.raises(ValueError, match="`level` must lie strictly"):
        result.interval("mu", level=95)
    with pytest.raises(ValueError, match="`kind` must be one of"):
        result.interval("mu", kind="central")


def test_full_model_reproduces_the_marginalized_posterior():
    # The full model samples every person's rate; integrating them out must not change
    # the posterior of mu: the grid (exact, marginalized) and the full model by nutpie
    # agree within the MCMC's Monte-Carlo error.
    import nutpie

    from perfci.models import beta_binomial

    y, n = nested(np.random.default_rng(7), 12, 10, 3)
    exact = pc.bayes.fit(y, n, sampler="grid", rng=1).interval("mu", "eti", 0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = nutpie.compile_pymc_model(beta_binomial(y, n))
        trace = nutpie.sample(
            compiled,
            draws=2000,
            tune=1000,
            chains=4,
            seed=3,
            progress_bar=False,
            target_accept=0.95,
        )
    draws = trace["posterior"]["mu"].to_numpy().ravel()
    # The centered full model has divergent transitions here (a funnel toward large
    # kappa: several persons are at 100%), about 2% of draws; that is why pc.bayes.fit
    # samples the marginalized model. Its mu quantiles still agree.
    ess = 500  # conservative for 8,000 draws with some divergences
    for q, end in [(0.05, exact.low), (0.95, exact.high)]:
        assert abs(np.quantile(draws, q) - end) <= 4 * quantile_mcse(draws, q, ess)
