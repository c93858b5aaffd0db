"""The default sampler "auto": the exact grid for one proportion, nutpie elsewhere."""

import json

import numpy as np
import pytest

import perfci as pc
from perfci.bayes import fitting
from perfci.cli import main

Y, N = [28, 25, 30, 22, 27, 29], [30, 30, 30, 26, 30, 30]


class _SampledWith(Exception):
    """Raised by the stand-in for MCMC, carrying the sampler it was asked for."""


@pytest.fixture
def no_mcmc(monkeypatch):
    """MCMC replaced by a stand-in that says which sampler would have run."""

    def run(sampler, *args, **kwargs):
        raise _SampledWith(sampler)

    monkeypatch.setattr(fitting, "run_mcmc", run)


def test_resolve_sampler():
    assert fitting.resolve_sampler("auto", grid_is_exact=True) == "grid"
    assert fitting.resolve_sampler("auto", grid_is_exact=False) == "nutpie"
    for name in ("grid", "nutpie", "pymc"):
        assert fitting.resolve_sampler(name, grid_is_exact=True) == name
        assert fitting.resolve_sampler(name, grid_is_exact=False) == name


def test_fit_uses_the_exact_grid_by_default_and_says_so(no_mcmc):
    default = pc.bayes.fit_proportion_counts(Y, N, rng=4)
    grid = pc.bayes.fit_proportion_counts(Y, N, sampler="grid", rng=4)
    assert default.sampler == "grid" and default.to_dict()["sampler"] == "grid"
    for estimand in ("population", "mu", "sampled_persons"):
        assert default.interval(estimand) == grid.interval(estimand)
    np.testing.assert_array_equal(
        default.posterior["posterior"]["p"].values, grid.posterior["posterior"]["p"].values
    )
    assert pc.bayes.fit_proportion_counts(Y, N, sampler="auto", rng=4).sampler == "grid"


def test_fit_labels_uses_the_grid_by_default(no_mcmc):
    texts = pc.load_example()
    fit = pc.bayes.fit_proportion(
        texts["human"], texts["model"], "recall", groups=texts["person"], rng=1
    )
    assert fit.sampler == "grid"


class _Compiled:
    """Stands for the compiled nutpie model (compiling it is tested elsewhere)."""

    def with_data(self, **data):
        return self


def test_mcmc_samplers_are_still_run_when_asked_for(no_mcmc, monkeypatch):
    monkeypatch.setattr(fitting, "compiled_marginal", lambda prior: _Compiled())
    for sampler in ("nutpie", "pymc"):
        with pytest.raises(_SampledWith, match=sampler):
            pc.bayes.fit_proportion_counts(Y, N, sampler=sampler)


def test_the_hierarchical_confusion_model_uses_nutpie_by_default(no_mcmc, monkeypatch):
    # building or compiling the PyMC model is not what is tested; which sampler runs it is
    monkeypatch.setattr("perfci.models.confusion.hierarchical_confusion", lambda cells: None)
    monkeypatch.setattr(fitting, "compiled_confusion", lambda: _Compiled())
    cells = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30]]
    with pytest.raises(_SampledWith, match="nutpie"):
        pc.bayes.fit_confusion_counts(cells)
    with pytest.raises(_SampledWith, match="pymc"):
        pc.bayes.fit_confusion_counts(cells, sampler="pymc")


def test_report_names_the_sampler_that_ran(no_mcmc, monkeypatch):
    texts = pc.load_example()
    table = pc.report(
        texts["human"], texts["model"], groups=texts["person"], metrics=["recall"], bayes=True
    )
    assert list(table["method"][1:]) == ["bayes beta-binomial, population (grid, eti)"]
    # F1 of nested texts: the hierarchical model by margins, on the exact grid (no MCMC:
    # the fixture would raise)
    f1 = pc.report(
        texts["human"], texts["model"], groups=texts["person"], metrics=["f1"], bayes=True
    )
    assert list(f1["method"][1:]) == ["bayes hierarchical margins, population (grid, eti)"]


def test_the_bayes_command_uses_the_grid_by_default(capsys, tmp_path, no_mcmc):
    csv = tmp_path / "texts.csv"
    pc.load_example().to_csv(csv, index=False)
    argv = ["bayes", str(csv), "--truth", "human", "--pred", "model", "--group", "person"]
    assert main([*argv, "--metric", "recall", "--seed", "1", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["sampler"] == "grid" and payload["diagnostics"]["r_hat"] is None
    assert main([*argv, "--metric", "recall", "--seed", "1"]) == 0
    assert "bayes (grid): population" in capsys.readouterr().out
