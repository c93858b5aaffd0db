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
