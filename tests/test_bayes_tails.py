"""Tails of the beta-binomial posterior (which moments of kappa exist) and prior sensitivity.

The theory (perfci._core.tails): as s = kappa^(-1/2) -> 0 the likelihood tends to the
pooled binomial likelihood, a positive constant in s, so the posterior density of s
behaves like its prior s^(a - 1) (s ~ Beta(a, 1)) and E[kappa^r] = E[s^(-2r)] is finite
iff r < a/2: under "pareto" (a = 3) the mean of kappa is finite and its variance
infinite, under "bda3" (a = 1) the mean is infinite, for every data set.
"""

import json
import warnings

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import betaln

import perfci as pc
from perfci._core import grid as core
from perfci._core import tails
from perfci.cli import main

# Efron and Morris (1975), Table 1: hits in the first 45 at-bats of 18 players in 1970
# (R: pscl::EfronMorris$r; the Stan case study on repeated binary trials uses them).
BASEBALL_HITS = np.array([18, 17, 16, 15, 14, 14, 13, 12, 11, 11, 10, 10, 10, 10, 10, 9, 8, 7])
BASEBALL_AT_BATS = np.full(18, 45)

Warning_ = pc.bayes.BayesianDiagnosticsWarning


def log_likelihood(y, n, mu, s):
    """Beta-binomial log-likelihood with scipy's betaln: independent of the stable form."""
    kappa = s**-2.0
    a, b = mu * kappa, (1 - mu) * kappa
    return np.sum(betaln(a + y, b + n - y) - betaln(a, b))


def quadrature_moments(y, n, prior_a):
    """E[mu] and E[kappa] by nested adaptive quadrature of the posterior (s < 1)."""
    ref = log_likelihood(y, n, 0.5, 0.5)

    def over_mu(s, f=lambda mu: 1.0):
        def integrand(mu):
            return f(mu) * np.exp(log_likelihood(y, n, mu, s) - ref)

        value = integrate.quad(integrand, 0, 1, epsabs=0, epsrel=1e-10, limit=200)[0]
        return value * s ** (prior_a - 1)

    def over_s(g):
        return integrate.quad(g, 0, 1, epsabs=0, epsrel=1e-9, limit=200)[0]

    z = over_s(over_mu)
    mean_mu = over_s(lambda s: over_mu(s, lambda mu: mu)) / z
    mean_kappa = over_s(lambda s: over_mu(s) * s**-2.0) / z
    return mean_mu, mean_kappa


def quantile_mcse(draws, q, ess):
    """Monte-Carlo SE of a posterior quantile estimated from draws with the given ESS."""
    density = stats.gaussian_kde(draws)(np.quantile(draws, q))[0]
    return np.sqrt(q * (1 - q) / ess) / density


# ------------------------------------------------------------------------- the theory


@pytest.mark.parametrize(("prior", "a"), [("pareto", 3.0), ("bda3", 1.0)])
def test_kappa_tail_follows_the_prior_exponent(prior, a):
    tail = tails.kappa_tail(prior)
    assert tail["moment_order"] == a / 2 and tail["pareto_k"] == 2 / a
    assert tail["mean_finite"] == (a / 2 > 1) and tail["variance_finite"] == (a / 2 > 2)


@pytest.mark.parametrize("prior", ["pareto", "bda3"])
def test_as_s_goes_to_zero_the_likelihood_is_the_pooled_binomial(prior):
    # The derivation's premise, on the grid's own log posterior of the baseball data:
    # minus the log prior density of s, it tends to Y log mu + (N - Y) log(1 - mu) as
    # s -> 0, the gap falling like s^2 (each term log(mu + j s^2) - log mu is j s^2 / mu).
    y, n = BASEBALL_HITS[None], BASEBALL_AT_BATS[None]
    hits, texts = BASEBALL_HITS.sum(), BASEBALL_AT_BATS.sum()
    mu = np.linspace(0.05, 0.95, 19)
    pooled = hits * np.log(mu) + (texts - hits) * np.log1p(-mu)
    a, _ = core.s_prior(prior)
    gaps = []
    for s in (1e-3, 1e-4, 1e-6):
        got = core.log_posterior(y, n, mu, np.array([s]), prior)[0, :, 0] - (a - 1) * np.log(s)
        gaps.append(np.max(np.abs(got - pooled)))
    assert gaps[2] < 1e-6  # s^2 terms of 1e-12 times at most 810 * 45 / 0.05
    assert gaps[0] / gaps[1] == pytest.approx(100, rel=0.01)


def test_untruncated_bda3_posterior_is_improper_exactly_when_every_person_is_extreme():
    # Without the truncation s ranges over (0, inf) with a flat density (bda3). As s
    # grows, the likelihood integrated over mu tends to a positive constant when every
    # y_i is 0 or n_i (the posterior's mass is then infinite), and falls like s^-2 per
    # person strictly between (integrable). Quadrature of scipy's betaln form:
    def integrated(y, n, s):
        y, n = np.asarray(y), np.asarray(n)
        f = lambda mu: np.exp(log_likelihood(y, n, mu, s))  # noqa: E731
        return integrate.quad(f, 0, 1, epsabs=0, epsrel=1e-10, limit=200)[0]

    cases = {
        "all right": ([5, 3, 4, 6, 2], [5, 3, 4, 6, 2]),  # tends to int mu^5 = 1/6
        "all right or all wrong": ([0, 3, 4], [2, 3, 4]),  # int mu^2 (1 - mu) = 1/12
        "one person between": ([5, 3, 4, 5, 2], [5, 3, 4, 6, 2]),
    }
    for name, (y, n) in cases.items():
        improper = bool(tails.improper_without_truncation(y, n, "bda3"))
        decay = integrated(y, n, 100.0) / integrated(y, n, 10.0)
        if improper:
            assert decay == pytest.approx(1, abs=0.02), name
        else:
            assert decay == pytest.approx(1e-2, rel=0.05), name  # (10 / 100)^2
        assert not tails.improper_without_truncation(y, n, "pareto")  # bounded by design


def test_improper_without_truncation_is_batched_and_ignores_padding():
    y = np.array([[5, 3, 0], [5, 2, 0]])
    n = np.array([[5, 3, 0], [5, 3, 0]])  # a person without texts is not a person
    np.testing.assert_array_equal(tails.improper_without_truncation(y, n, "bda3"), [True, False])


def test_grid_moments_against_quadrature():
    # E[kappa] (finite under pareto) and E[mu] of the exact grid against nested quadrature
    # of scipy's betaln likelihood: 10.7573 and 0.7124 (relative error of the quadrature
    # below 1e-8). The grid's midpoint rule is good to about 3e-4 here.
    y, n = np.array([3, 7, 5, 9, 6]), np.array([4, 9, 8, 10, 9])
    mean_mu, mean_kappa = quadrature_moments(y, n, prior_a=3.0)
    # the sd is infinite under pareto: said in the note, with no warning (-W error)
    table = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1).summary()
    assert "sd infinite" in table.loc["kappa", "note"]
    assert table.loc["kappa", "mean"] == pytest.approx(mean_kappa, rel=1e-3)
    assert table.loc["mu", "mean"] == pytest.approx(mean_mu, rel=1e-4)
    assert np.isnan(table.loc["kappa", "sd"])


def test_grid_draws_in_the_cell_at_zero_follow_the_prior_shape():
    # all the mass in the first s cell [EPS, h]: with s ~ s^(a-1) there, (s / h)^a is
    # uniform (Kolmogorov-Smirnov); uniform placement would fail it (its CDF is u^(1/a))
    edges_s = core.EPS + np.arange(5) * 0.01
    mass = np.zeros((1, 3, 4))
    mass[0, :, 0] = 1 / 3
    mu_edge = np.array([[0.1, 0.4, 0.7, 0.9]])
    y, n = np.array([[3, 4]]), np.array([[5, 5]])
    for a in (3.0, 1.0):
        post = core.GridPosterior(mass, mu_edge, edges_s[None], a)
        draws = core.draw_grid_posterior(post, y, n, 20_000, [np.random.default_rng(1)])
        s = draws.s[0]
        assert np.all((s >= edges_s[0]) & (s <= edges_s[1]))
        u = (s**a - edges_s[0] ** a) / (edges_s[1] ** a - edges_s[0] ** a)
        assert stats.kstest(u, "uniform").pvalue > 1e-3
    # the bda3 shape (a = 1) is the uniform placement itself, draw for draw
    rng = np.random.default_rng(2)
    post = core.GridPosterior(mass, mu_edge, edges_s[None], 1.0)
    got = core.draw_grid_posterior(post, y, n, 50, [np.random.default_rng(2)]).s[0]
    rng.random(50)  # the cells' uniforms, then mu's, then s's
    rng.random(50)
    expected = edges_s[0] + rng.random(50) * (edges_s[1] - edges_s[0])
    np.testing.assert_array_equal(got, expected)


# ------------------------------------------------------------------------ the fits


def test_baseball_bda3_is_flagged_with_an_infinite_mean_kappa_pareto_is_not():
    # bda3: s ~ Beta(1, 1), so E[kappa^r] < inf iff r < 1/2: the mean is infinite
    with pytest.warns(Warning_, match="kappa's posterior mean is infinite"):
        bda3 = pc.bayes.fit_proportion_counts(
            BASEBALL_HITS, BASEBALL_AT_BATS, sampler="grid", prior="bda3", rng=1
        )
    assert bda3.flagged and "infinite" in bda3.flag_reasons[0]
    assert bda3.tail["kappa"]["mean_finite"] is False
    assert bda3.tail["kappa"]["moment_order"] == 0.5
    with pytest.warns(Warning_, match="mean and sd infinite"):
        table = bda3.summary()
    assert np.isnan(table.loc["kappa", ["mean", "sd"]].astype(float)).all()
    assert table.loc["kappa", "low"] < table.loc["kappa", "median"] < table.loc["kappa", "high"]
    # pareto: s ~ Beta(3, 1), moments below order 3/2: mean finite, not flagged (and no
    # warning: the module runs with warnings as errors)
    pareto = pc.bayes.fit_proportion_counts(BASEBALL_HITS, BASEBALL_AT_BATS, sampler="grid", rng=1)
    assert not pareto.flagged and pareto.tail["kappa"]["mean_finite"] is True
    assert pareto.tail["kappa"]["variance_finite"] is False
    # the intervals of mu and the rates are quantiles: valid under both priors
    for result in (bda3, pareto):
        ci = result.interval("mu", confidence_level=0.95)
        assert 0.2 < ci.low < ci.estimate < ci.high < 0.35
    json.dumps(bda3.to_dict(), allow_nan=False)


def test_all_extreme_persons_under_bda3_are_flagged_as_decided_by_the_truncation():
    y = n = [5, 3, 4, 6, 2]
    with pytest.warns(Warning_, match="truncation at kappa >= 1"):
        result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", prior="bda3", rng=1)
    assert result.tail["kappa"]["improper_without_truncation"] is True
    assert len(result.flag_reasons) == 2  # and the infinite mean
    pareto = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1)
    assert not pareto.flagged and not pareto.tail["kappa"]["improper_without_truncation"]


def test_grid_summary_equals_the_intervals_and_the_draws():
    y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
    result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=3)
    table = result.summary(confidence_level=0.9)  # no warning: only kappa's sd is NaN
    assert list(table.index) == ["mu", "s", "kappa", "population", "sampled_persons"]
    for estimand in ("mu", "population", "sampled_persons"):
        ci = result.interval(estimand, "eti", 0.9)
        assert table.loc[estimand, "low"] == ci.low and table.loc[estimand, "high"] == ci.high
        assert table.loc[estimand, "median"] == ci.estimate
    # kappa's quantiles are the exact s quantiles transformed; the draws agree within MC error
    kappa = np.log(result.posterior["posterior"]["kappa"].values.ravel())
    for q, column in [(0.05, "low"), (0.5, "median"), (0.95, "high")]:
        tol = 4 * quantile_mcse(kappa, q, kappa.size)
        assert abs(np.quantile(kappa, q) - np.log(table.loc["kappa", column])) <= tol, q
    s = result.posterior["posterior"]["s"].values.ravel()
    assert table.loc["s", "mean"] == pytest.approx(s.mean(), abs=4 * s.std() / np.sqrt(s.size))


def test_summary_bad_level():
    result = pc.bayes.fit_proportion_counts([9, 8, 10], [10, 10, 10], sampler="grid", rng=1)
    with pytest.raises(ValueError, match="`level` must lie strictly between 0 and 1"):
        result.summary(level=95)


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["pareto", "bda3"])
def test_kappa_quantiles_grid_and_nutpie_agree_within_monte_carlo_error(prior):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Warning_)  # bda3 flags; summary() warns of the sd
        exact = pc.bayes.fit_proportion_counts(
            BASEBALL_HITS, BASEBALL_AT_BATS, sampler="grid", prior=prior, rng=1
        )
        mcmc = pc.bayes.fit_proportion_counts(
            BASEBALL_HITS, BASEBALL_AT_BATS, sampler="nutpie", prior=prior, draws=2000, rng=1
        )
        grid_table = exact.summary()
        mcmc_table = mcmc.summary()
    if mcmc.diagnostics["ess_tail"] < 400 or mcmc.diagnostics["r_hat"] > 1.01:
        pytest.skip(f"MCMC failed its diagnostics ({mcmc.flag_reasons}); not a reference")
    # on log kappa, where a kernel density of the draws is smooth
    draws = np.log(mcmc.posterior["posterior"]["kappa"].values.ravel())
    for q, column in [(0.025, "low"), (0.5, "median"), (0.975, "high")]:
        tol = 4 * quantile_mcse(draws, q, mcmc.diagnostics["ess_tail"])
        assert (
            abs(np.log(mcmc_table.loc["kappa", column]) - np.log(grid_table.loc["kappa", column]))
            <= tol
        )
    # the empirical check: k-hat of the draws' upper tail; theory k = 2/a
    k_hat = mcmc.tail["kappa"]["pareto_k_hat"]
    if prior == "bda3":
        assert k_hat > 1 and mcmc.flagged and np.isnan(mcmc_table.loc["kappa", "mean"])
    else:
        assert 0 < k_hat and not any("kappa" in r for r in mcmc.flag_reasons)
        assert np.isnan(mcmc_table.loc["kappa", "sd"])


# ----------------------------------------------------------------- prior sensitivity

FEW_Y, FEW_N = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]


def many_persons(seed=1, persons=300):
    rng = np.random.default_rng(seed)
    trials = rng.integers(2, 10, size=persons)
    return rng.binomial(trials, rng.beta(7.2, 0.8, size=persons)), trials


def test_priors_differ_with_few_persons_and_agree_with_many():
    few = pc.bayes.prior_sensitivity(FEW_Y, FEW_N, estimand="mu")
    assert few.differs and few.shift > 0.2 and "more than 10%" in few.reason
    many = pc.bayes.prior_sensitivity(*many_persons(), estimand="mu")
    assert not many.differs and many.shift < 0.05 and "at most 10%" in many.reason


@pytest.mark.parametrize("estimand", ["population", "mu", "sampled_persons"])
def test_prior_sensitivity_intervals_are_the_grid_intervals(estimand):
    for prior, alternative in [("pareto", "bda3"), ("bda3", "pareto")]:
        check = pc.bayes.prior_sensitivity(
            FEW_Y, FEW_N, estimand=estimand, prior=prior, confidence_level=0.9, draws=500, rng=4
        )
        assert (check.prior, check.alternative_prior) == (prior, alternative)
        for name, ci in ((prior, check.interval), (alternative, check.alternative)):
            own = pc.bayes.grid_intervals(
                FEW_Y, FEW_N, estimand=estimand, prior=name, confidence_level=0.9, draws=500, rng=4
            )
            assert (ci.estimate, ci.low, ci.high) == (own.estimate, own.low, own.high)
        # the rule, by hand
        ends = np.array([check.interval.low, check.interval.estimate, check.interval.high])
        moved = np.array(
            [check.alternative.low, check.alternative.estimate, check.alternative.high]
        )
        shift = np.max(np.abs(moved - ends)) / (ends[2] - ends[0])
        assert check.shift == pytest.approx(shift, rel=1e-12)
        assert check.differs == (shift > 0.1)
        rows = check.rows()
        assert [r["prior"] for r in rows] == [prior, alternative]
        assert rows[0]["low"] == check.interval.low and rows[1]["high"] == check.alternative.high
        assert all(r["differs"] == check.differs and r["reason"] == check.reason for r in rows)


def test_prior_sensitivity_batch_equals_a_loop():
    y, n = many_persons(seed=5, persons=8)
    ys = np.stack([y, np.r_[FEW_Y, 0, 0, 0], y[::-1]])
    ns = np.stack([n, np.r_[FEW_N, 0, 0, 0], n[::-1]])
    batch = pc.bayes.prior_sensitivity(ys, ns, estimand="sampled_persons", draws=300, rng=2)
    assert batch.differs.shape == (3,) and batch.reason.shape == (3,)
    children = pc.batch_generators(2, 3)
    for k in range(3):
        one = pc.bayes.prior_sensitivity(
            ys[k], ns[k], estimand="sampled_persons", draws=300, rng=children[k]
        )
        assert one.interval.low == batch.interval.low[k]
        assert one.alternative.high == batch.alternative.high[k]
        assert one.shift == batch.shift[k] and one.reason == batch.reason[k]


def test_fit_prior_sensitivity_is_the_function_on_its_counts():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Warning_)  # bda3 flags the fit
        result = pc.bayes.fit_proportion_counts(FEW_Y, FEW_N, sampler="grid", prior="bda3", rng=1)
    check = result.prior_sensitivity("mu", confidence_level=0.9, tolerance=0.5)
    direct = pc.bayes.prior_sensitivity(
        FEW_Y, FEW_N, estimand="mu", prior="bda3", confidence_level=0.9, tolerance=0.5
    )
    assert check.alternative_prior == "pareto" and check.to_dict() == direct.to_dict()
    assert check.differs == (check.shift > 0.5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"prior": "flat"}, "`prior` must be one of"),
        ({"alternative": "flat"}, "`prior` must be one of"),
        ({"alternative": "pareto"}, "`alternative` must differ from `prior`"),
        ({"tolerance": 0}, "`tolerance` must be a positive fraction"),
        ({"tolerance": "0.1"}, "`tolerance` must be"),
        ({"estimand": "person"}, "`estimand` must be one of"),
        ({"level": 1.5}, "`level` must lie strictly"),
    ],
)
def test_prior_sensitivity_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pc.bayes.prior_sensitivity(FEW_Y, FEW_N, **kwargs)


# ------------------------------------------------------------------- the command line


@pytest.fixture
def example_csv(tmp_path):
    path = tmp_path / "texts.csv"
    pc.load_example().to_csv(path, index=False)
    return path


def bayes_argv(path, *more):
    return ["bayes", str(path), "--truth", "human", "--pred", "model", "--group", "person",
            "--metric", "recall", "--sampler", "grid", "--seed", "1", *more]  # fmt: skip


def test_cli_prior_sensitivity_and_tail(capsys, example_csv):
    assert main(bayes_argv(example_csv, "--prior-sensitivity", "--json")) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["tail"]["kappa"]["mean_finite"] is True
    assert payload["kappa"]["sd"] is None and "sd infinite" in payload["kappa"]["note"]
    texts = pc.load_example()
    per_person = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    y, n = pc.proportion_counts(per_person, "recall")
    for estimand in ("population", "mu", "sampled_persons"):
        ref = pc.bayes.prior_sensitivity(y[n > 0], n[n > 0], estimand=estimand, rng=1)
        assert payload["prior_sensitivity"][estimand] == json.loads(json.dumps(ref.to_dict()))
    assert main(bayes_argv(example_csv, "--prior-sensitivity")) == 0
    out = capsys.readouterr().out
    assert "prior sensitivity (exact grid, 95% equal-tailed)" in out
    assert "grid, prior bda3: mu" in out and "concentration kappa: median" in out


def test_cli_prior_sensitivity_passes_the_population_on(capsys, tmp_path):
    texts = pc.load_example()
    persons = sorted(texts["person"].unique())
    size = {p: 10 + 3 * i for i, p in enumerate(persons)}  # one size per person
    texts["size"] = texts["person"].map(size)
    path = tmp_path / "sized.csv"
    texts.to_csv(path, index=False)
    argv = bayes_argv(path, "--prior-sensitivity", "--json", "--population-sizes", "size")
    assert main([*argv, "--population-persons", "200"]) == 0
    got = json.loads(capsys.readouterr().out)["prior_sensitivity"]["population"]
    per_person = pc.confusion(texts["human"], texts["model"], groups=texts["person"])
    y, n = pc.proportion_counts(per_person, "recall")
    keep = n > 0
    sizes = [size[p] for p in np.asarray(per_person.groups)[keep]]
    ref = pc.bayes.prior_sensitivity(
        y[keep], n[keep], population_sizes=sizes, population_persons=200, rng=1
    )
    assert got == json.loads(json.dumps(ref.to_dict()))
    plain = pc.bayes.prior_sensitivity(y[keep], n[keep], rng=1)
    assert got["interval"]["low"] != plain.interval.low  # the sizes did reach the grid


def test_cli_bda3_prints_the_flag_and_the_note(capsys, example_csv):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Warning_)
        assert main(bayes_argv(example_csv, "--prior", "bda3")) == 0
    out, err = capsys.readouterr()
    assert "FLAGGED: kappa's posterior mean is infinite" in out
    assert "mean and sd infinite (under prior 'bda3'" in out
    assert "perfci: warning: the posterior is flagged" in err


def test_a_data_set_s_own_posterior_keeps_the_prior_shape():
    # the margins model draws each data set from its own rows of a batch's posterior:
    # the rows keep the shape of s in the cell at zero (else it is drawn uniformly there)
    mass = np.full((3, 2, 2), 0.25)
    mu_edge = np.tile([0.1, 0.5, 0.9], (3, 1))
    s_edge = np.tile([core.EPS, 0.5, 1.0], (3, 1))
    post = core.GridPosterior(mass, mu_edge, s_edge, 3.0)
    own = post.rows(slice(1, 2))
    assert own.s_shape == 3.0 and own.mass.shape == (1, 2, 2)
    np.testing.assert_array_equal(own.s_edge, s_edge[1:2])
