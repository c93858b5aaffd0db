"""Import cost: ``import perfci`` is cheap, and the NumPy-only core stays NumPy-only."""

import json
import subprocess
import sys

import pytest

HEAVY = ("pymc", "pytensor", "nutpie", "arviz", "xarray", "pandas", "scipy.stats", "matplotlib")


def _loaded(code: str) -> set[str]:
    probe = f"{code}; import sys, json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(json.loads(out.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import perfci",
        "import perfci.bayes",
        "import perfci; perfci.proportion_ci(3, 10)",
        "import perfci.cli",
    ],
)
def test_cheap_imports_load_no_heavy_library(code):
    loaded = _loaded(code)
    assert not {m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY}


def test_names_load_on_first_use_and_every_public_name_resolves():
    import perfci as pc

    for name in pc.__all__:
        assert getattr(pc, name) is not None
    assert "bootstrap_ci" in dir(pc)
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        pc.not_a_name  # noqa: B018


_INTERVAL = "from perfci.cli import main; main(['interval', '--successes', '264', '--trials', '300'"


@pytest.mark.parametrize("method", ["wald", "wilson", "agresti_coull", "agresti_coull_plus4"])
@pytest.mark.parametrize("json", [False, True])
def test_interval_command_with_a_normal_quantile_loads_no_scipy(method, json):
    # the command's default method is one of these; SciPy would be most of its start-up
    flags = f", '--method', '{method}'" + (", '--json'" if json else "")
    loaded = _loaded(f"{_INTERVAL}{flags}])")
    assert not {m for m in loaded if m.split(".")[0] in {"scipy", "pandas", "xarray", *HEAVY}}


@pytest.mark.parametrize("method", ["clopper_pearson", "jeffreys", "logit"])
def test_interval_command_with_beta_or_logit_loads_scipy_special_only(method):
    loaded = _loaded(f"{_INTERVAL}, '--method', '{method}'])")
    assert "scipy.special" in loaded
    assert not {m for m in loaded if m.split(".")[0] in {"pandas", "xarray", *HEAVY}}


def test_the_bayes_command_on_the_grid_loads_no_sampler_plotting_or_scipy_stats(tmp_path):
    # the default `perfci bayes` (the exact grid) needs neither an MCMC stack nor ArviZ,
    # matplotlib or scipy.stats (Student's t comes from scipy.special)
    import perfci as pc

    csv = tmp_path / "texts.csv"
    pc.load_example().to_csv(csv, index=False)
    argv = ["bayes", str(csv), "--truth", "human", "--pred", "model", "--group", "person"]
    argv += ["--metric", "recall", "--seed", "1", "--quiet"]
    code = (
        "import contextlib, io; from perfci.cli import main; "
        f"f = io.StringIO(); c = contextlib.redirect_stdout(f); c.__enter__(); main({argv!r}); "
        "c.__exit__(None, None, None)"
    )
    loaded = _loaded(code)
    heavy = {"pymc", "pytensor", "nutpie", "arviz", "arviz_base", "arviz_stats", "matplotlib"}
    assert not {m for m in loaded if m.split(".")[0] in heavy}
    assert "scipy.stats" not in loaded and "perfci.bayes" in loaded
