import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

import perfci as pc
from perfci._core import grid as core


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


@pytest.mark.slow
@pytest.mark.parametrize("persons", [5, 20, 50])
@pytest.mark.parametrize(("mean_texts", "sd_texts"), [(3, 1), (30, 5)])
def test_grid_and_nutpie_agree_within_monte_carlo_error(persons, mean_texts, sd_texts):
    y, n = nested(np.random.default_rng(persons * 100 + mean_texts), persons, mean_texts, sd_texts)
    grid = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
        mcmc = pc.bayes.fit_proportion_counts(y, n, sampler="nutpie", draws=2000, tune=1000, rng=1)
    if mcmc.flagged:
        pytest.skip(f"MCMC flagged ({mcmc.flag_reasons}); not a reference")
    draws = mcmc.draws("mu")
    ess = mcmc.diagnostics["ess_tail"]
    exact = grid.interval("mu", "eti", 0.95)
    for q, end in [(0.025, exact.low), (0.975, exact.high)]:
        tol = 4 * quantile_mcse(draws, q, ess)
        assert abs(np.quantile(draws, q) - end) <= tol, (q, end, tol)
    # the population estimand: both drawn, so both have Monte-Carlo error
    ours, theirs = grid.draws("population"), mcmc.draws("population")
    for q in (0.025, 0.5, 0.975):
        tol = 4 * np.hypot(quantile_mcse(ours, q, ours.size), quantile_mcse(theirs, q, ess))
        assert abs(np.quantile(ours, q) - np.quantile(theirs, q)) <= tol, (q, tol)


def test_grid_is_converged_in_its_resolution():
    y, n = nested(np.random.default_rng(3), 20, 30, 5)
    default = pc.bayes.grid_intervals(y, n, estimand="mu")
    fine = pc.bayes.grid_intervals(y, n, shape=(1200, 600), estimand="mu")
    assert default.low == pytest.approx(fine.low, abs=2e-4)
    assert default.high == pytest.approx(fine.high, abs=2e-4)


def test_closed_form_f1_posterior_agrees_with_dirichlet_draws():
    counts, lam = np.array([40, 6, 9, 345]), 1.0
    post = pc.bayes.confusion_posterior(counts, prior=lam)
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


def test_same_seed_same_posterior_grid():
    y, n = [9, 8, 10, 7, 9], [10, 10, 10, 10, 10]
    a = pc.bayes.fit_proportion_counts(y, n, sampler="grid", draws=300, rng=11)
    b = pc.bayes.fit_proportion_counts(y, n, sampler="grid", draws=300, rng=11)
    np.testing.assert_array_equal(a.draws("mu"), b.draws("mu"))
    np.testing.assert_array_equal(a.draws("person"), b.draws("person"))


@pytest.mark.slow
def test_same_seed_same_posterior_nutpie():
    y, n = [9, 8, 10, 7, 9], [10, 10, 10, 10, 10]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
        a = pc.bayes.fit_proportion_counts(y, n, sampler="nutpie", draws=300, tune=300, rng=11)
        b = pc.bayes.fit_proportion_counts(y, n, sampler="nutpie", draws=300, tune=300, rng=11)
    np.testing.assert_array_equal(a.draws("mu"), b.draws("mu"))
    np.testing.assert_array_equal(a.draws("person"), b.draws("person"))


def test_estimands_and_result_structure():
    y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
    result = pc.bayes.fit_proportion_counts(
        y, n, sampler="grid", draws=1000, chains=2, rng=2, persons=["a", "b", "c", "d", "e"]
    )
    post = result.posterior["posterior"]
    assert set(post.data_vars) == {"mu", "s", "kappa", "population", "sampled_persons", "p"}
    assert list(post["person"].values) == ["a", "b", "c", "d", "e"]
    tw = result.draws("sampled_persons")
    np.testing.assert_allclose(tw, (result.draws("person") * np.array(n)[:, None]).sum(0) / sum(n))
    persons = result.interval("person", "hdi", 0.8)
    assert persons.low.shape == (5,)
    # partial pooling: person 3's rate (22 of 26) is pulled toward the others
    assert persons.estimate[3] > 22 / 26


@pytest.mark.slow
def test_all_correct_and_two_persons_end_in_a_result_not_a_hang():
    for y, n in [([3, 3, 2], [3, 3, 2]), ([5, 4], [5, 6])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
            result = pc.bayes.fit_proportion_counts(
                y, n, sampler="nutpie", draws=500, tune=500, rng=1
            )
        ci = result.interval("mu")
        assert 0 < ci.low < ci.high <= 1
        assert result.flagged == bool(result.flag_reasons)
        grid = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1)
        assert not grid.flagged


@pytest.mark.slow
def test_failing_diagnostics_are_flagged_and_warned():
    with pytest.warns(pc.bayes.BayesianDiagnosticsWarning, match="flagged"):
        result = pc.bayes.fit_proportion_counts(
            [9, 8, 10], [10, 10, 10], sampler="nutpie", draws=20, tune=20, chains=2, rng=1
        )
    assert result.flagged and any("ESS" in r for r in result.flag_reasons)


def test_fit_labels_uses_each_persons_relevant_texts():
    texts = pc.load_example()
    result = pc.bayes.fit_proportion(
        texts["human"], texts["model"], "recall", groups=texts["person"], sampler="grid", rng=1
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
        pc.bayes.fit_proportion_counts(*args, **kwargs)


def test_interval_arguments():
    result = pc.bayes.fit_proportion_counts([9, 8, 10], [10, 10, 10], sampler="grid", rng=1)
    with pytest.raises(ValueError, match="`estimand` must be one of"):
        result.interval("median")
    with pytest.raises(ValueError, match="`level` must lie strictly"):
        result.interval("mu", level=95)
    with pytest.raises(ValueError, match="`kind` must be one of"):
        result.interval("mu", kind="central")


@pytest.mark.slow
def test_full_model_reproduces_the_marginalized_posterior():
    # The full model samples every person's rate; integrating them out must not change
    # the posterior of mu: the grid (exact, marginalized) and the full model by nutpie
    # agree within the MCMC's Monte-Carlo error.
    import nutpie

    from perfci.models import beta_binomial

    y, n = nested(np.random.default_rng(7), 12, 10, 3)
    exact = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1).interval("mu", "eti", 0.9)
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
    # kappa: several persons are at 100%), about 2% of draws; that is why
    # pc.bayes.fit_proportion_counts samples the marginalized model. Its mu quantiles still
    # agree.
    ess = 500  # conservative for 8,000 draws with some divergences
    for q, end in [(0.05, exact.low), (0.95, exact.high)]:
        assert abs(np.quantile(draws, q) - end) <= 4 * quantile_mcse(draws, q, ess)


# ------------------------------------------------------------- the grid's contracts


def ragged(rng, sets, persons, low=1, high=8, rate=0.85):
    """`sets` data sets of 2..persons persons, padded to `persons` with trials = 0."""
    trials = rng.integers(low, high, size=(sets, persons))
    successes = rng.binomial(trials, rng.beta(8 * rate, 8 * (1 - rate), size=(sets, persons)))
    used = rng.integers(2, persons + 1, size=sets)
    pad = np.arange(persons)[None, :] >= used[:, None]
    trials[pad] = 0
    successes[pad] = 0
    return successes, trials, used


def same_interval(a, b):
    for field in ("estimate", "low", "high"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


@pytest.mark.parametrize("kind", ["eti", "hdi"])
@pytest.mark.parametrize("estimand", ["mu", "sampled_persons", "population"])
def test_grid_batch_equals_a_loop_of_single_calls(estimand, kind):
    # leading axes (2, 3): data set k (C order) uses pc.batch_generators(seed, 6)[k]
    y, n, used = ragged(np.random.default_rng(4), 6, 9)
    y, n = y.reshape(2, 3, 9), n.reshape(2, 3, 9)
    options = {"estimand": estimand, "kind": kind, "confidence_level": 0.9, "draws": 500}
    batch = pc.bayes.grid_intervals(y, n, rng=5, **options)
    assert batch.low.shape == (2, 3)
    children = pc.batch_generators(5, 6)
    for k, (i, j) in enumerate(np.ndindex(2, 3)):
        one = pc.bayes.grid_intervals(y[i, j], n[i, j], rng=children[k], **options)
        assert isinstance(one.low, float)
        for field in ("estimate", "low", "high"):
            assert getattr(batch, field)[i, j] == getattr(one, field), (k, field)


@pytest.mark.parametrize("estimand", ["mu", "sampled_persons", "population"])
def test_batch_size_changes_nothing(estimand):
    y, n, _ = ragged(np.random.default_rng(6), 7, 8)
    whole = pc.bayes.grid_intervals(y, n, estimand=estimand, draws=300, rng=1)
    for batch in (1, 3):
        same_interval(
            pc.bayes.grid_intervals(y, n, estimand=estimand, draws=300, rng=1, batch=batch),
            whole,
        )


@pytest.mark.parametrize("estimand", ["mu", "sampled_persons", "population"])
def test_padding_with_empty_persons_changes_nothing(estimand):
    rng = np.random.default_rng(7)
    y, n, used = ragged(rng, 5, 10)
    padded = pc.bayes.grid_intervals(y, n, estimand=estimand, rng=3)
    children = pc.batch_generators(3, 5)
    for k in range(5):
        # the data set alone, unpadded, with its generator from the batch rule
        alone = pc.bayes.grid_intervals(
            y[k, : used[k]], n[k, : used[k]], estimand=estimand, rng=children[k]
        )
        assert (padded.low[k], padded.high[k]) == (alone.low, alone.high)
        # empty persons inserted anywhere, and a much larger padding
        m = used[k]
        order = np.argsort(np.r_[np.arange(m), rng.uniform(-1, m, 25)], kind="stable")
        y_more = np.r_[y[k, :m], np.zeros(25, int)][order]
        n_more = np.r_[n[k, :m], np.zeros(25, int)][order]
        spread = pc.bayes.grid_intervals(
            y_more, n_more, estimand=estimand, rng=pc.batch_generators(3, 5)[k]
        )
        same_interval(spread, alone)


def test_padding_changes_no_draw():
    y, n = np.array([[5, 3, 0, 4, 0]]), np.array([[6, 3, 0, 5, 0]])
    keep = n[0] > 0
    posts = [core.grid_posterior(a, b) for a, b in [(y, n), (y[:, keep], n[:, keep])]]
    np.testing.assert_array_equal(posts[0].mass, posts[1].mass)
    draws = [
        core.draw_grid_posterior(post, a, b, 200, [np.random.default_rng(1)], rates=True)
        for post, (a, b) in zip(posts, [(y, n), (y[:, keep], n[:, keep])], strict=True)
    ]
    for name in ("mu", "s", "kappa", "sampled_persons", "population"):
        np.testing.assert_array_equal(getattr(draws[0], name), getattr(draws[1], name))
    np.testing.assert_array_equal(draws[0].rates[0][:, keep], draws[1].rates[0])
    assert np.isnan(draws[0].rates[0][:, ~keep]).all()


def test_person_rate_draws_do_not_depend_on_the_memory_bound():
    post = core.grid_posterior(np.array([[4, 9, 2]]), np.array([[5, 10, 4]]))
    y, n = np.array([[4, 9, 2]]), np.array([[5, 10, 4]])
    a = core.draw_grid_posterior(post, y, n, 101, [np.random.default_rng(2)], rates=True)
    b = core.draw_grid_posterior(post, y, n, 101, [np.random.default_rng(2)], rates=True, batch=7)
    np.testing.assert_array_equal(a.rates, b.rates)
    np.testing.assert_array_equal(a.sampled_persons, b.sampled_persons)
    np.testing.assert_array_equal(a.population, b.population)


@pytest.mark.parametrize("kind", ["eti", "hdi"])
def test_shared_grid_intervals_equal_the_own_calls(kind):
    # one posterior per data set for both estimands; each interval is its own call's,
    # in a batch, with a memory bound that splits the blocks, and for one data set
    y, n, _ = ragged(np.random.default_rng(9), 7, 8)
    options = {"kind": kind, "confidence_level": 0.9, "draws": 400, "batch": 3}
    shared = pc.bayes.shared_grid_intervals(y, n, ["sampled_persons", "mu"], rng=4, **options)
    assert list(shared) == ["sampled_persons", "mu"]
    for estimand, ci in shared.items():
        same_interval(ci, pc.bayes.grid_intervals(y, n, estimand=estimand, rng=4, **options))
        assert ci.estimand == estimand
    one = pc.bayes.shared_grid_intervals(y[2], n[2], ["mu", "sampled_persons"], rng=5)
    same_interval(
        one["sampled_persons"],
        pc.bayes.grid_intervals(y[2], n[2], estimand="sampled_persons", rng=5),
    )


@pytest.mark.parametrize(
    ("estimands", "match"),
    [
        ("mu", "`estimands` must be a sequence of names"),
        (["mu", "person"], "`estimands` must be one of"),
        (["mu", "mu"], "`estimands` must name distinct estimands"),
        ([], "`estimands` must name distinct estimands"),
    ],
)
def test_shared_grid_intervals_bad_estimands(estimands, match):
    with pytest.raises(ValueError, match=match):
        pc.bayes.shared_grid_intervals([3, 1], [5, 5], estimands)


@pytest.mark.parametrize(("draws", "chains"), [(1000, 4), (250, 2), (300, 1)])
@pytest.mark.parametrize("kind", ["eti", "hdi"])
def test_grid_fit_equals_grid_intervals(draws, chains, kind):
    y, n = [28, 25, 30, 22, 0, 27, 29], [30, 30, 30, 26, 0, 30, 30]
    result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", draws=draws, chains=chains, rng=8)
    for estimand in ("mu", "sampled_persons", "population"):
        ci = pc.bayes.grid_intervals(
            y, n, estimand=estimand, kind=kind, confidence_level=0.9, draws=draws * chains, rng=8
        )
        same_interval(result.interval(estimand, kind, 0.9), ci)


def test_grid_fit_defaults_equal_grid_intervals_defaults():
    y, n = [9, 8, 10, 7, 9], [10, 10, 10, 10, 10]
    result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=4)
    assert result.draws("mu").size == 4000
    for estimand in ("mu", "sampled_persons", "population"):
        same_interval(
            result.interval(estimand), pc.bayes.grid_intervals(y, n, estimand=estimand, rng=4)
        )


def test_rng_rule_for_a_single_data_set():
    y, n = [9, 8, 10, 7, 9], [10, 10, 10, 10, 10]
    options = {"estimand": "sampled_persons", "draws": 400}
    seeded = pc.bayes.grid_intervals(y, n, rng=12, **options)
    same_interval(pc.bayes.grid_intervals(y, n, rng=np.random.default_rng(12), **options), seeded)
    # a batch of one is a batch: its data set uses the first of the batch generators
    one = pc.bayes.grid_intervals([y], [n], rng=12, **options)
    assert one.low.shape == (1,)
    child = pc.batch_generators(12, 1)[0]
    assert one.low[0] == pc.bayes.grid_intervals(y, n, rng=child, **options).low


def test_mu_is_deterministic():
    y, n, _ = ragged(np.random.default_rng(9), 3, 6)
    same_interval(
        pc.bayes.grid_intervals(y, n, estimand="mu", rng=1),
        pc.bayes.grid_intervals(y, n, estimand="mu", rng=2),
    )


def test_grid_mu_keeps_the_exact_marginal():
    # the median and ends are those of the gridded marginal CDF, not of draws
    y, n = np.array([[28, 25, 30, 22, 27, 29]]), np.array([[30, 30, 30, 26, 30, 30]])
    post = core.grid_posterior(y, n)
    cdf = np.cumsum(post.mu_mass[0])
    ci = pc.bayes.grid_intervals(y[0], n[0], confidence_level=0.9, estimand="mu")
    for q, end in [(0.05, ci.low), (0.5, ci.estimate), (0.95, ci.high)]:
        i = np.searchsorted(post.mu_edge[0], end) - 1
        below = cdf[i - 1] if i else 0.0
        inside = (end - post.mu_edge[0, i]) / np.diff(post.mu_edge[0])[i]
        assert below + inside * post.mu_mass[0, i] == pytest.approx(q, abs=1e-12)


def test_grid_quadrature_against_direct_summation():
    # the exact (rounded-log) products agree with plain floating-point sums of the
    # beta-binomial log-likelihood written with gammaln, away from s -> 0
    from scipy.special import betaln

    y, n = np.array([[3, 7, 5, 9]]), np.array([[4, 9, 8, 10]])
    mu, s = np.linspace(0.05, 0.95, 7), np.linspace(0.1, 0.9, 5)
    got = core.log_posterior(y, n, mu, s, "bda3")
    kappa = s[None, :] ** -2
    a, b = mu[:, None] * kappa, (1 - mu[:, None]) * kappa
    direct = sum(
        betaln(a + yi, b + ni - yi) - betaln(a, b) for yi, ni in zip(y[0], n[0], strict=True)
    )
    diff = got[0] - direct
    np.testing.assert_allclose(diff - diff.mean(), 0, atol=1e-9)  # equal up to a constant


def test_grid_edge_cases_all_correct_and_two_persons():
    for y, n in [([3, 3, 2], [3, 3, 2]), ([5, 4], [5, 6]), ([0, 0, 0], [4, 2, 7])]:
        result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1)
        for estimand in ("mu", "sampled_persons", "population"):
            ci = result.interval(estimand)
            assert 0 < ci.low < ci.estimate < ci.high <= 1
        assert not result.flagged


def test_empty_batch():
    ci = pc.bayes.grid_intervals(np.zeros((0, 4)), np.zeros((0, 4)), estimand="sampled_persons")
    assert ci.low.shape == (0,)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([3, 1], [5, 5]), {"estimand": "person"}, "`estimand` must be one of"),
        (([3, 1], [5, 5]), {"kind": "central"}, "`kind` must be one of"),
        (([3, 1], [5, 5]), {"level": 1.5}, "`level` must lie strictly"),
        (([3, 1], [5, 5]), {"prior": "flat"}, "`prior` must be one of"),
        (([3, 1], [5, 5]), {"shape": (400,)}, "`shape` must be two integers"),
        (([3, 1], [5, 5]), {"shape": (400, 1)}, "`shape` must be two integers"),
        (([3, 1], [5, 5]), {"draws": 0}, "`draws` must be a positive integer"),
        (([3, 1], [5, 5]), {"batch": 0}, "`batch` must be a positive integer"),
        (([3, 1], [5, 5, 5]), {}, "same shape"),
        ((3, 5), {}, "same shape"),
        (([[3, 1], [2, 0]], [[5, 5], [4, 0]]), {}, "at least 2 persons .* in data set 1"),
        (([3, -1], [5, 5]), {}, "non-negative whole numbers"),
        (([3, 6], [5, 5]), {}, "`successes` must not exceed `trials`"),
    ],
)
def test_grid_intervals_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.bayes.grid_intervals(*args, **kwargs)


def test_fit_bad_grid_shape():
    with pytest.raises(ValueError, match="`grid_shape` must be two integers"):
        pc.bayes.fit_proportion_counts([3, 1], [5, 5], sampler="grid", grid_shape=(10, 0))


# Import cost: the NumPy core and the bayes package itself import no heavy library. The
# check loads them under a bare `perfci` package (its __init__ is not run), so it sees
# only what these modules import.
_IMPORT_CHECK = """
import importlib, importlib.util, sys, types
spec = importlib.util.find_spec("perfci")
package = types.ModuleType("perfci")
package.__path__ = list(spec.submodule_search_locations)
sys.modules["perfci"] = package
importlib.import_module({module!r})
heavy = {{"pandas", "xarray", "pymc", "pytensor", "nutpie", "arviz", "arviz_plots",
          "arviz_stats", "arviz_base", "matplotlib"}}
print(sorted(heavy & {{name.split(".")[0] for name in sys.modules}}))
"""


@pytest.mark.parametrize("module", ["perfci._core.grid", "perfci.bayes"])
def test_import_pulls_in_no_heavy_library(module):
    out = subprocess.run(
        [sys.executable, "-c", _IMPORT_CHECK.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------- the population estimand


def test_population_of_the_sampled_persons_only_is_sampled_persons():
    # every person of the population sampled: no new persons, no deviation (f = 1)
    y, n, _ = ragged(np.random.default_rng(21), 4, 8)
    options = {"draws": 300, "rng": 3}
    these = pc.bayes.grid_intervals(y, n, estimand="sampled_persons", **options)
    everyone = pc.bayes.grid_intervals(
        y, n, estimand="population", population_persons=(n > 0).sum(-1), **options
    )
    same_interval(everyone.__class__(**{**vars(everyone), "estimand": "sampled_persons"}), these)
    infinite = pc.bayes.grid_intervals(y, n, estimand="population", **options)
    assert np.all(infinite.high - infinite.low > these.high - these.low)
    # a large finite population is nearly an infinite one (finite population correction)
    large = pc.bayes.grid_intervals(y, n, population_persons=1e9, **options)
    np.testing.assert_allclose(large.low, infinite.low, atol=1e-6)


def test_text_weighted_is_the_former_name_of_sampled_persons():
    y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
    new = pc.bayes.grid_intervals(y, n, estimand="sampled_persons", draws=200, rng=1)
    with pytest.warns(FutureWarning, match="now called 'sampled_persons'"):
        old = pc.bayes.grid_intervals(y, n, estimand="text_weighted", draws=200, rng=1)
    assert (old.estimand, old.low, old.high) == ("sampled_persons", new.low, new.high)
    fit = pc.bayes.fit_proportion_counts(y, n, sampler="grid", draws=100, chains=2, rng=1)
    with pytest.warns(FutureWarning):
        assert fit.interval("text_weighted").low == fit.interval("sampled_persons").low


def test_population_sizes_weight_the_sampled_persons():
    y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
    sizes = np.array([300.0, 30, 30, 600, 30])  # two persons with many unlabelled texts
    fit = pc.bayes.fit_proportion_counts(
        y, n, sampler="grid", draws=500, chains=2, rng=4, population_sizes=sizes
    )
    rates = fit.draws("person")  # (persons, draws)
    np.testing.assert_allclose(
        fit.draws("sampled_persons"), (rates * sizes[:, None]).sum(0) / sizes.sum(), rtol=1e-12
    )
    # person 3 (22 of 26) weighs most: the weighted rate sits below the unweighted one
    plain = pc.bayes.fit_proportion_counts(y, n, sampler="grid", draws=500, chains=2, rng=4)
    assert np.median(fit.draws("sampled_persons")) < np.median(plain.draws("sampled_persons"))
    # labels: sizes by person id
    texts = pc.load_example()
    persons = sorted(set(texts["person"]))
    by_id = {p: 10.0 + i for i, p in enumerate(persons)}
    a = pc.bayes.fit_proportion(
        texts["human"],
        texts["model"],
        "recall",
        groups=texts["person"],
        sampler="grid",
        draws=100,
        chains=2,
        rng=1,
        population_sizes=by_id,
    )
    kept = list(a.posterior["posterior"]["person"].values)
    b = pc.bayes.fit_proportion_counts(
        a.successes,
        a.trials,
        sampler="grid",
        draws=100,
        chains=2,
        rng=1,
        population_sizes=[by_id[p] for p in kept],
    )
    assert a.interval("population").low == b.interval("population").low
    with pytest.raises(ValueError, match="population_sizes.*missing"):
        pc.bayes.fit_proportion(
            texts["human"],
            texts["model"],
            "recall",
            groups=texts["person"],
            sampler="grid",
            population_sizes={persons[0]: 3.0},
        )


def test_the_general_population_step_is_the_proportions_one():
    from perfci._core import population

    y, n = np.array([[8, 9, 2, 7, 5]]), np.array([[10, 10, 4, 9, 5]])
    m = y.shape[1]
    post = core.grid_posterior(y, n)
    drawn = core.draw_grid_posterior(post, y, n, 4000, [np.random.default_rng(6)], rates=True)
    rates, sampled = drawn.rates[0], drawn.sampled_persons[0]
    u = n[0].astype(float)
    # the spread by its definition: the root mean square (m - 1 denominator) of
    # u_i (p_i - theta_s) / mean(u) ...
    # ... CR2-corrected by the leverage u_i / sum(u) of each person
    leverage = u / u.sum()
    deviations = u * (rates - sampled[:, None]) / u.mean() / np.sqrt(1 - leverage)
    spread = np.sqrt((deviations**2).sum(1) / (m - 1))
    factor = population.deviation_scale(m, None)
    # the grid's population draws imply t variates that are Student t on m - 1 df
    logit = np.log(drawn.population[0] / (1 - drawn.population[0]))
    implied = (logit - np.log(sampled / (1 - sampled))) * sampled * (1 - sampled)
    implied /= factor * spread
    assert stats.kstest(implied, stats.t(m - 1).cdf).pvalue > 1e-3
    # a proportion as a two-cell metric: the numerical linearization of
    # population_metric_draws gives the same draws for the same t variates
    t = np.random.default_rng(7).standard_t(m - 1, size=sampled.size)
    cells = np.stack([rates, 1 - rates], axis=-1)
    general, pop = population.population_metric_draws(cells, u, lambda c: c[..., 0] / c.sum(-1), t)
    np.testing.assert_allclose(general, sampled, rtol=1e-12)
    np.testing.assert_allclose(
        pop, population.population_shift(sampled, spread, t, factor), rtol=1e-6
    )


@pytest.mark.slow
def test_population_covers_with_informative_sizes_where_mu_does_not():
    # 20 persons of ~30 texts (CV 1.5) whose log size correlates 0.5 with their rate: the
    # population's text-weighted rate (0.940) is above the mean person rate (0.9)
    from perfci.harness import populations

    params = {
        "rate": 0.9,
        "icc": 0.1,
        "texts_per_person": 30.0,
        "size_cv": 1.5,
        "min_texts": 1,
        "informative": 0.5,
    }
    truth = float(populations.population_truth("nested", params))
    y, n = populations.draw_nested(params, (300, 20), np.random.default_rng(2026))
    both = pc.bayes.shared_grid_intervals(y, n, ["population", "mu"], draws=2000, rng=1)
    covered = {e: np.mean((ci.low <= truth) & (truth <= ci.high)) for e, ci in both.items()}
    se = np.sqrt(0.95 * 0.05 / 300)
    assert covered["population"] >= 0.95 - 3 * se, covered
    assert covered["mu"] <= 0.8, covered  # about 0.55: mu is another estimand here


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"population_sizes": [10, 10]}, "population_sizes.*shape"),
        ({"population_sizes": [10, 0, 5, 5]}, "population_sizes.*positive"),
        ({"population_persons": 3}, "population_persons.*at least"),
        ({"population_persons": "9"}, "population_persons"),
    ],
)
def test_population_arguments_are_checked(options, match):
    with pytest.raises(ValueError, match=match):
        pc.bayes.grid_intervals([3, 2, 4, 5], [5, 5, 6, 6], **options)


# ------------------------------------------------------ former names, former keyword

FEW_Y, FEW_N = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
PER_PERSON_CELLS = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
JOINT = [300, 10, 4, 6, 5, 3, 12, 60]


@pytest.fixture(scope="module")
def fits():
    texts = pc.load_example()
    return {
        "proportion": pc.bayes.fit_proportion_counts(
            FEW_Y, FEW_N, sampler="grid", draws=100, chains=2, rng=1
        ),
        "confusion": pc.bayes.fit_confusion_counts(
            PER_PERSON_CELLS, sampler="grid", draws=100, chains=2, rng=1
        ),
        "texts": texts,
    }


def _plot(draw):
    """The texts and data of a figure drawn by `draw`, then closed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ax = draw()
    drawn = (
        [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else [],
        [line.get_xydata().tolist() for line in ax.get_lines()],
        [t.get_text() for t in ax.get_yticklabels()],
    )
    plt.close(ax.figure)
    return drawn


#: Every function and method of pc.bayes that takes a credible level, as a call of it.
LEVELLED = {
    "grid_intervals": lambda f, **kw: pc.bayes.grid_intervals(
        FEW_Y, FEW_N, draws=200, shape=(40, 20), rng=1, **kw
    ),
    "shared_grid_intervals": lambda f, **kw: pc.bayes.shared_grid_intervals(
        FEW_Y, FEW_N, ["mu", "population"], draws=200, shape=(40, 20), rng=1, **kw
    ),
    "prior_sensitivity": lambda f, **kw: pc.bayes.prior_sensitivity(
        FEW_Y, FEW_N, estimand="mu", shape=(40, 20), **kw
    ),
    "nested_metric_intervals": lambda f, **kw: pc.bayes.nested_metric_intervals(
        PER_PERSON_CELLS, "f1", draws=200, grid_shape=(40, 20), rng=1, **kw
    ),
    "shared_nested_metric_intervals": lambda f, **kw: pc.bayes.shared_nested_metric_intervals(
        PER_PERSON_CELLS, ["f1", "kappa"], draws=200, grid_shape=(40, 20), rng=1, **kw
    ),
    "compare_counts": lambda f, **kw: pc.bayes.compare_counts(
        JOINT, "recall", draws=200, rng=1, **kw
    ),
    "compare": lambda f, **kw: pc.bayes.compare(
        f["texts"]["human"],
        f["texts"]["model"],
        f["texts"]["model_b"],
        "recall",
        draws=200,
        rng=1,
        **kw,
    ),
    "ConfusionPosterior.interval": lambda f, **kw: pc.bayes.confusion_posterior(
        [40, 6, 9, 345]
    ).interval("kappa", draws=200, rng=1, **kw),
    "BayesFit.interval": lambda f, **kw: f["proportion"].interval("mu", **kw),
    "BayesFit.to_dict": lambda f, **kw: f["proportion"].to_dict(**kw),
    "BayesFit.summary": lambda f, **kw: f["proportion"].summary(**kw),
    "BayesFit.prior_sensitivity": lambda f, **kw: f["proportion"].prior_sensitivity("mu", **kw),
    "ConfusionFit.interval": lambda f, **kw: f["confusion"].interval("recall", **kw),
    "ConfusionFit.to_dict": lambda f, **kw: f["confusion"].to_dict(**kw),
    "plot_posterior": lambda f, **kw: _plot(
        lambda: pc.bayes.plot_posterior(f["proportion"], "mu", **kw)
    ),
    "plot_forest": lambda f, **kw: _plot(lambda: pc.bayes.plot_forest(f["proportion"], **kw)),
}


def _same(a, b) -> bool:
    """Whether two results of the same call hold the same values (NaN equal to NaN)."""
    if hasattr(a, "equals"):  # a DataFrame
        return bool(a.equals(b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "to_dict"):
        return _same(a.to_dict(), b.to_dict())
    return a == b


@pytest.mark.parametrize("name", list(LEVELLED))
def test_level_is_the_former_name_of_confidence_level(fits, name):
    call = LEVELLED[name]
    new = call(fits, confidence_level=0.9)
    with pytest.warns(
        FutureWarning, match=r"^`level` is deprecated; use `confidence_level`\.$"
    ) as w:
        old = call(fits, level=0.9)
    assert [r.filename for r in w] == [__file__]  # the warning points at the caller
    assert _same(old, new)
    # both: an error, even when confidence_level is the default's value
    for given in (0.9, 0.95):
        with pytest.raises(ValueError, match=r"^`level` and `confidence_level` were both given"):
            call(fits, level=0.9, confidence_level=given)
    # a bad value is refused under the name the caller gave
    with pytest.raises(ValueError, match=r"^`level` must lie strictly between 0 and 1"):
        call(fits, level=1.5)
    with pytest.raises(ValueError, match=r"^`confidence_level` must lie strictly between 0 and 1"):
        call(fits, confidence_level=1.5)


@pytest.mark.parametrize(
    "function",
    [
        pc.bayes.grid_intervals,
        pc.bayes.shared_grid_intervals,
        pc.bayes.prior_sensitivity,
        pc.bayes.nested_metric_intervals,
        pc.bayes.shared_nested_metric_intervals,
        pc.bayes.compare_counts,
        pc.bayes.plot_posterior,
        pc.bayes.plot_forest,
        pc.bayes.ConfusionPosterior.interval,
        pc.bayes.BayesFit.interval,
        pc.bayes.BayesFit.to_dict,
        pc.bayes.BayesFit.summary,
        pc.bayes.BayesFit.prior_sensitivity,
        pc.bayes.ConfusionFit.interval,
        pc.bayes.ConfusionFit.to_dict,
    ],
    ids=lambda f: f.__qualname__,
)
def test_signatures_show_confidence_level_only(function):
    import inspect

    parameters = inspect.signature(function).parameters
    assert "confidence_level" in parameters and "level" not in parameters
    assert parameters["confidence_level"].default == 0.95


def test_former_function_names_warn_and_give_the_same_result(fits):
    import inspect

    texts = fits["texts"]
    with pytest.warns(FutureWarning, match=r"^`fit` is renamed `fit_proportion_counts`;"):
        old = pc.bayes.fit(FEW_Y, FEW_N, sampler="grid", draws=100, chains=2, rng=1)
    assert old.to_dict() == fits["proportion"].to_dict()
    assert old.interval("population") == fits["proportion"].interval("population")
    with pytest.warns(FutureWarning, match=r"^`fit_labels` is renamed `fit_proportion` "):
        old = pc.bayes.fit_labels(
            texts["human"], texts["model"], texts["person"], "recall", sampler="grid", rng=1
        )
    new = pc.bayes.fit_proportion(
        texts["human"], texts["model"], "recall", groups=texts["person"], sampler="grid", rng=1
    )
    assert old.to_dict() == new.to_dict()
    np.testing.assert_array_equal(old.draws("person"), new.draws("person"))
    with pytest.warns(FutureWarning, match=r"^`fit_confusion` is renamed `fit_confusion_counts`;"):
        old = pc.bayes.fit_confusion(PER_PERSON_CELLS, sampler="grid", draws=100, chains=2, rng=1)
    assert old.to_dict() == fits["confusion"].to_dict()
    # where they were, with the signature of the new name
    from perfci.bayes import fitting

    assert fitting.fit is pc.bayes.fit and fitting.fit_labels is pc.bayes.fit_labels
    assert fitting.fit_confusion is pc.bayes.fit_confusion
    assert inspect.signature(pc.bayes.fit) == inspect.signature(pc.bayes.fit_proportion_counts)
    assert {"fit", "fit_labels", "fit_confusion"} <= set(pc.bayes.__all__)


def test_the_former_module_of_the_confusion_models_still_exports_them():
    from perfci.bayes import confusion

    for name in confusion.__all__:
        assert getattr(confusion, name) is getattr(pc.bayes, name, getattr(confusion, name))
    assert confusion.compare_counts is pc.bayes.compare_counts
    assert confusion.ConfusionPosterior is pc.bayes.ConfusionPosterior


@pytest.mark.parametrize(
    "call",
    [
        lambda: pc.bayes.fit_proportion_counts([2**40, 5], [2**40, 10]),
        lambda: pc.bayes.fit_proportion_counts([2**40, 5], [2**40, 10], sampler="pymc"),
        lambda: pc.bayes.grid_intervals([[2**40, 5], [3, 5]], [[2**40, 10], [5, 5]]),
        lambda: pc.bayes.prior_sensitivity([2**40, 5], [2**40, 10]),
    ],
)
def test_counts_too_many_to_hold_are_refused_naming_the_argument(call):
    # the exact products of the marginal likelihood need fewer than 2**32 texts a data set
    with pytest.raises(ValueError, match=r"^`trials` must sum to fewer than 4294967296 texts"):
        call()


def test_a_person_with_texts_beyond_memory_is_refused_naming_the_argument():
    # fewer than 2**32 texts, but one person's 2**31 need per-text tables of tens of TB
    with pytest.raises(ValueError, match=r"^`trials` needs about .* of memory"):
        pc.bayes.fit_proportion_counts([2**31, 5], [2**31, 10])
    with pytest.raises(ValueError, match=r"^`trials` needs about .* of memory"):
        pc.bayes.grid_intervals([2**31, 5], [2**31, 10], estimand="mu")
