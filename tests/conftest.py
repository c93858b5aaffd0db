import numpy as np
import pytest


@pytest.fixture
def suite_workdir(tmp_path, monkeypatch):
    """A working directory holding one tiny suite, ``validation/suites/t.toml``."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "validation" / "suites").mkdir(parents=True)
    (tmp_path / "validation" / "suites" / "t.toml").write_text(
        'name = "t"\ndescription = "d"\nseed = 1\n[population]\nkind = "bernoulli"\n'
        "[grid]\nn = [5, 9]\np = [0.5]\n[scales.smoke]\nreplications = 10\nresamples = 10\n"
        '[[methods]]\nname = "wald"\nfamily = "analytic"\nmethod = "wald"\n'
    )
    return tmp_path


@pytest.fixture
def cli(capsys):
    """Run ``perfci ARGV...`` in-process: return (status, standard output, standard error)."""
    from perfci.cli import main

    def run(*argv):
        status = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        return status, out, err

    return run


def assert_one_line_error(status: int, err: str) -> None:
    """Assert the command line's usage error: status 2 and one line, ``perfci: error: ...``."""
    assert status == 2, (status, err)
    assert err.startswith("perfci: error: ") and err.count("\n") == 1, err


@pytest.fixture
def one_line_error():
    """:func:`assert_one_line_error`, for the tests of the command line's errors."""
    return assert_one_line_error


def analytic_suite_text(name: str, *, seed: int, n=(10, 40), p=(0.6, 0.9)) -> str:
    """A suite of Wilson and Wald intervals on a Bernoulli population, 20 replications."""
    return (
        f'name = "{name}"\ndescription = "analytic intervals"\nseed = {seed}\n'
        '[population]\nkind = "bernoulli"\n'
        f"[grid]\nn = {list(n)}\np = {list(p)}\n"
        "[scales.smoke]\nreplications = 20\nresamples = 0\n"
        '[[methods]]\nname = "wilson"\nfamily = "analytic"\nmethod = "wilson"\n'
        '[[methods]]\nname = "wald"\nfamily = "analytic"\nmethod = "wald"\n'
    )


@pytest.fixture
def analytic_suite():
    """:func:`analytic_suite_text`: the text of a small suite of analytic intervals."""
    return analytic_suite_text


@pytest.fixture
def rng():
    return np.random.default_rng(20261130)


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that ran and ended (and was reaped): a dead writer's."""
    import subprocess
    import sys

    from perfci._core.files import pid_alive

    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    pid = int(done.stdout)
    assert not pid_alive(pid)
    return pid


# Property tests draw the same examples on every run, so a run is reproducible; a new
# seed is a deliberate change (pytest --hypothesis-seed=N explores others).
from hypothesis import settings  # noqa: E402

settings.register_profile("perfci", derandomize=True, deadline=None)
settings.load_profile("perfci")
