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
