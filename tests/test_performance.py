"""Performance models (perfci.bayes.performance_model) and their covariate design.

Reference values: the design's standardization is checked by identity (the linear
predictor of the standardized design and coefficients equals that of the original columns
and the back-transformed coefficients); the binomial rows by counting; the Gauss-Hermite
expectation over a new person's effect against scipy's quad; the model without covariates
against the beta-binomial model's mean person rate (``estimand="mu"``) on a large
simulated sample, within their Monte-Carlo error. MCMC output differs across CPUs and
library versions: no digit of it is pinned.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import integrate, special, stats

import perfci as pc
from perfci.bayes import BayesianDiagnosticsWarning
from perfci.bayes.performance import margins_of
from perfci.bayes.performance_design import design_of, parse_formula, patterns


@pytest.fixture(scope="module")
def texts():
    return pc.load_example()


@pytest.fixture(scope="module")
def site_fit(texts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
        return pc.bayes.performance_model(
            texts["human"],
            texts["model"],
            "recall",
            groups=texts["person"],
            covariates=texts[["site"]].assign(length=np.arange(len(texts)) % 7),
            rng=3,
        )


def test_the_standardized_design_and_its_back_transform_are_one_linear_predictor():
    rng = np.random.default_rng(0)
    table = pd.DataFrame(
        {
            "length": rng.normal(12, 4, 50),
            "site": rng.choice(["b", "a", "c"], 50),
            "expert": rng.integers(0, 2, 50),
        }
    )
    design = design_of(table, "length + C(site, reference='b') + expert")
    assert design.columns == ["Intercept", "length", "site[a]", "site[c]", "expert"]
    x = design.matrix(table)
    np.testing.assert_allclose(x[:, 1].mean(), 0, atol=1e-12)
    np.testing.assert_allclose(x[:, 1].std(), 1, rtol=1e-12)
    beta = rng.normal(size=(7, 5))
    original = design.to_original(beta)
    raw = np.column_stack(
        [
            np.ones(50),
            table["length"],
            table["site"] == "a",
            table["site"] == "c",
            table["expert"],
        ]
    ).astype(float)
    np.testing.assert_allclose(x @ beta.T, raw @ original.T, atol=1e-10)
    assert design.terms[2].indicator and not design.terms[0].indicator


def test_formulas_and_bad_covariates_name_what_is_wrong():
    assert parse_formula("y ~ a + C(b) + c") == [("a", False, None), ("b", True, None),
                                                 ("c", False, None)]  # fmt: skip
    table = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": ["x", "y", "x"], "k": [5, 5, 5]})
    with pytest.raises(ValueError, match="`formula` term 'a:b' is not a column name"):
        parse_formula("a + a:b")
    with pytest.raises(ValueError, match="`covariates` has no column 'z'"):
        design_of(table, "a + z")
    with pytest.raises(ValueError, match="`covariates` column 'k' is constant"):
        design_of(table, "k")
    with pytest.raises(ValueError, match="`formula` reference 'q' is not a level of 'b'"):
        design_of(table, "C(b, q)")
    with pytest.raises(ValueError, match="`covariates` column 'a' has 1 missing"):
        design_of(table.assign(a=[1.0, None, 3.0]), "a")
    design = design_of(table, "a + b")
    with pytest.raises(ValueError, match="`target` column 'b' has levels \\['w'\\]"):
        design.matrix(pd.DataFrame({"a": [1.0], "b": ["w"]}), "`target`")


def test_patterns_are_binomial_rows_of_a_person_and_a_covariate_pattern():
    x = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    person = np.array([0, 0, 0, 1])
    rows, who, hits, trials = patterns(x, person, np.array([1, 0, 1, 1]))
    assert rows.tolist() == [[1.0, 0.0], [1.0, 1.0], [1.0, 0.0]]
    assert who.tolist() == [0, 0, 1] and hits.tolist() == [1, 1, 1]
    assert trials.tolist() == [2, 1, 1]


def test_a_new_persons_rate_is_the_normal_expectation():
    from perfci.bayes.performance import new_person_rates

    eta, scale = np.array([[0.3, -1.2]]), np.array([[0.8, 1.5]])
    got = new_person_rates(eta, scale)
    for k in range(2):
        want, _ = integrate.quad(
            lambda u, k=k: special.expit(eta[0, k] + scale[0, k] * u) * stats.norm.pdf(u),
            -12,
            12,
        )
        assert got[0, k] == pytest.approx(want, abs=1e-8)


def test_metrics_are_fit_by_their_margins():
    assert margins_of("recall") == ("recall",)
    assert margins_of("precision") == ("precision",)
    assert margins_of("f1") == ("prevalence", "recall", "specificity")
    assert margins_of("kappa") == ("prevalence", "recall", "specificity")


def test_a_fit_answers_in_tables_and_credible_intervals(site_fit, texts):
    fit = site_fit
    coefficients = fit.coefficients()
    assert list(coefficients["term"]) == ["Intercept", "site[clinic_b]", "length", "sd(person)"]
    assert list(coefficients.columns) == [
        "margin", "term", "mean", "sd", "low", "high", "rhat", "ess_bulk",
    ]  # fmt: skip
    assert (coefficients["low"] < coefficients["high"]).all()
    effects = fit.effects()
    assert list(effects["contrast"]) == ["clinic_b vs clinic_a", "+1 SD (2)"]
    assert (
        (effects["low"] <= effects["estimate"]) & (effects["estimate"] <= effects["high"])
    ).all()
    population = fit.population()
    assert population.estimand == "population" and population.sources == ("texts", "persons")
    assert 0 < population.low < population.estimate < population.high < 1
    target = pd.DataFrame({"site": ["clinic_a", "clinic_b"], "length": [3, 3], "weight": [1, 3]})
    corpus = fit.poststratify(target)
    assert 0 < corpus.low < corpus.high < 1
    # a target of one pattern equals the same pattern weighted alone
    one = fit.poststratify(target.iloc[[1]])
    again = fit.poststratify(target.assign(weight=[0, 5]))
    assert one.estimate == pytest.approx(again.estimate, abs=1e-12)
    these = fit.poststratify(
        target.assign(person=[texts["person"].iloc[0]] * 2), persons="these", groups="person"
    )
    assert these.estimand == "sampled_persons"
    check = fit.posterior_predictive_check(rng=1)
    assert set(check["margin"]) == {"recall"} and 0 <= check.attrs["p_value"]["recall"] <= 1
    assert (check["trials"] > 0).all() and check["person"].nunique() == len(check)
    figure = fit.plot_effects()
    assert len(figure.axes[0].get_yticklabels()) == 2
    assert {"recall_beta", "recall_sigma", "recall_z"} <= {v.name for v in fit.model.free_RVs}
    assert "posterior" in fit.idata.children


def test_poststratify_refuses_bad_targets(site_fit):
    fit = site_fit
    with pytest.raises(ValueError, match="`target` has no column 'length'"):
        fit.poststratify(pd.DataFrame({"site": ["clinic_a"], "weight": [1]}))
    with pytest.raises(ValueError, match="`target` has no weight column 'w'"):
        fit.poststratify(pd.DataFrame({"site": ["clinic_a"], "length": [1]}), weight="w")
    with pytest.raises(ValueError, match="must hold non-negative numbers"):
        fit.poststratify(pd.DataFrame({"site": ["clinic_a"], "length": [1], "weight": [-1]}))
    with pytest.raises(ValueError, match="`persons='these'` needs"):
        fit.poststratify(
            pd.DataFrame({"site": ["clinic_a"], "length": [1], "weight": [1]}), persons="these"
        )
    with pytest.raises(ValueError, match="`term` must be one of the model's terms"):
        fit.effects("age")


def test_bad_input_names_the_argument(texts):
    args = (texts["human"], texts["model"], "recall")
    with pytest.raises(ValueError, match="`covariates` must have one row per text"):
        pc.bayes.performance_model(*args, covariates=texts[["site"]].iloc[:-1])
    with pytest.raises(ValueError, match="`formula` names columns of `covariates`"):
        pc.bayes.performance_model(*args, formula="site")
    with pytest.raises(ValueError, match="`random_slopes` are per person"):
        pc.bayes.performance_model(
            *args, covariates=texts[["site"]], random_slopes=["site[clinic_b]"]
        )
    with pytest.raises(ValueError, match="`random_slopes` must name columns of the design"):
        pc.bayes.performance_model(
            *args, covariates=texts[["site"]], groups=texts["person"], random_slopes=["site"]
        )
    with pytest.raises(ValueError, match="`sampler` must be one of"):
        pc.bayes.performance_model(*args, sampler="grid")
    with pytest.raises(ValueError, match="`metric` must be one of"):
        pc.bayes.performance_model(texts["human"], texts["model"], "auc")


def test_without_covariates_the_new_persons_rate_is_the_beta_binomials_mean_rate():
    # a large sample from a beta-binomial population, where the two models' priors and
    # person distributions matter little: the posterior medians agree within their
    # Monte-Carlo error (each from its bulk ESS)
    rng = np.random.default_rng(4)
    persons = 200
    rates = rng.beta(0.8 * 9, 0.2 * 9, persons)
    n = np.full(persons, 20)
    y = rng.binomial(n, rates)
    person = np.repeat(np.arange(persons), n)
    pred = np.concatenate(
        [np.r_[np.ones(k, int), np.zeros(m - k, int)] for k, m in zip(y, n, strict=True)]
    )
    fit = pc.bayes.performance_model(np.ones(n.sum(), int), pred, "recall", groups=person, rng=1)
    draws = fit.metric_draws(np.ones((1, 1)), np.ones(1))
    beta_binomial = pc.bayes.fit_proportion_counts(y, n, rng=1)
    mu = beta_binomial.interval(estimand="mu")
    sd = draws.std()
    se = sd * np.sqrt(1 / fit.diagnostics["ess_bulk"] + 1 / beta_binomial.diagnostics["ess_bulk"])
    # 1.25: a median's Monte-Carlo SE over a mean's
    assert abs(np.median(draws) - mu.estimate) <= 4 * 1.25 * se, (np.median(draws), mu)


def test_three_margin_metrics_give_f1_on_the_corpus(texts):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
        fit = pc.bayes.performance_model(
            texts["human"], texts["model"], "f1", covariates=texts[["site"]],
            draws=400, tune=400, chains=2, rng=2,
        )  # fmt: skip
    assert fit.margins == ("prevalence", "recall", "specificity")
    assert set(fit.coefficients()["margin"]) == set(fit.margins)
    target = pd.DataFrame({"site": ["clinic_a", "clinic_b"], "weight": [1.0, 1.0]})
    f1 = fit.poststratify(target)
    assert 0 < f1.low < f1.estimate < f1.high < 1
    assert fit.population().sources == ("texts",)  # no persons: texts only


def test_the_priors_are_weakly_informative_by_prior_predictive_simulation():
    import pymc as pm

    from perfci.models.performance import performance_model

    data = {
        "successes": np.zeros(40),
        "trials": np.ones(40),
        "X": np.column_stack([np.ones(40), np.linspace(-2, 2, 40)]),
        "person": np.arange(40) % 8,
    }
    model = performance_model({"recall": data}, persons=8, terms={"recall": ["Intercept", "x"]})
    with model:
        prior = pm.sample_prior_predictive(draws=2000, random_seed=1, var_names=["recall_beta",
                                           "recall_sigma", "recall_z"])  # fmt: skip
    beta = prior["prior"]["recall_beta"].to_numpy().reshape(-1, 2)
    sigma = prior["prior"]["recall_sigma"].to_numpy().ravel()
    z = prior["prior"]["recall_z"].to_numpy().reshape(-1, 8)
    rate = special.expit(beta @ data["X"].T + sigma[:, None] * z[:, data["person"]])
    # rates spread over (0, 1), not piled at its ends: the priors say little
    extreme = np.mean((rate < 0.01) | (rate > 0.99))
    assert extreme < 0.12, extreme
    assert 0.4 < np.median(rate) < 0.6
    assert np.mean(rate > 0.9) > 0.05 and np.mean(rate < 0.1) > 0.05


def test_the_validation_report_carries_the_performance_model(texts):
    target = pd.DataFrame({"site": ["clinic_a", "clinic_b"], "weight": [3, 1]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
        report = pc.validation_report(
            texts["human"], texts["model"], groups=texts["person"], metrics=["recall"],
            covariates=texts[["site"]], target=target, rng=1,
        )  # fmt: skip
    assert report.performance["metric"] == "recall"
    assert report.performance["terms"] == ["site"]
    assert list(report.performance_coefficients["term"]) == [
        "Intercept", "site[clinic_b]", "sd(person)",
    ]  # fmt: skip
    found = report.performance["target"]
    assert found["estimand"] == "population" and found["low"] < found["high"]
    assert report.figure_names()[-1] == "effects"
    page = report.to_html()
    assert '<section id="performance"><h2>Performance model</h2>' in page
    assert '<section id="effects"><h2>Effects and the target</h2>' in page
    assert 'id="figure-effects"' in page
    markdown = report.to_markdown()
    assert "| recall over the target's mix |" in markdown
    assert "poststratified to a target of 2 covariate patterns [" in report.methods
    assert report.references[-1].split("] ", 1)[1].startswith("Park DK, Gelman A, Bafumi J")
    import json

    json.dumps(report.to_dict(), allow_nan=False)
    with pytest.raises(ValueError, match="`target` is poststratified by the performance model"):
        pc.validation_report(texts["human"], texts["model"], target=target)


def test_cli_report_with_covariates_and_a_target(tmp_path, capsys):
    from perfci.cli import main

    data = tmp_path / "texts.csv"
    pc.load_example().to_csv(data, index=False)
    target = tmp_path / "target.csv"
    target.write_text("site,weight\nclinic_a,3\nclinic_b,1\n")
    out = tmp_path / "page.html"
    argv = ["report", str(data), "--truth", "human", "--pred", "model", "--group", "person"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
        status = main([*argv, "--html", str(out), "--covariates", "site", "--target",
                       str(target), "--quiet", "--seed", "1"])  # fmt: skip
    assert status == 0 and "Effects and the target" in out.read_text()
    assert main([*argv, "--covariates", "site"]) == 2
    assert "`--covariates` adds a performance model" in capsys.readouterr().err
    assert main([*argv, "--html", str(out), "--target", str(target)]) == 2
    assert "give `--covariates`" in capsys.readouterr().err
    bad = tmp_path / "bad.csv"
    bad.write_text("site,weight\nclinic_z,3\n")
    assert main([*argv, "--html", str(out), "--covariates", "site", "--target", str(bad)]) == 2
    assert "`--target` column 'site' has levels ['clinic_z']" in capsys.readouterr().err


def test_random_slopes_enter_every_answer(texts):
    covariates = texts[["site"]].assign(length=(np.arange(len(texts)) * 7) % 11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
        fit = pc.bayes.performance_model(
            texts["human"], texts["model"], "recall", groups=texts["person"],
            covariates=covariates, formula="length + C(site)", random_slopes=["length"],
            draws=500, chains=2, rng=4,
        )  # fmt: skip
    terms = list(fit.coefficients()["term"])
    assert terms == ["Intercept", "length", "site[clinic_b]", "sd(person)", "sd(length | person)"]
    assert {"recall_tau", "recall_v"} <= {v.name for v in fit.model.free_RVs}
    target = pd.DataFrame({"site": ["clinic_a"], "length": [5], "weight": [1]})
    new = fit.poststratify(target)
    these = fit.poststratify(
        target.assign(person=texts["person"].iloc[0]), persons="these", groups="person"
    )
    assert 0 < new.low < new.high < 1 and 0 < these.low < these.high < 1
    assert set(fit.posterior_predictive_check(rng=2)["margin"]) == {"recall"}
