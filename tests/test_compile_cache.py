"""The on-disk cache of compiled nutpie models: round trips, damaged entries, bad folders."""

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import perfci as pc
from perfci.bayes import compile_cache, samplers
from perfci.bayes.compile_cache import CompileCacheWarning, JitteredStart, cache_dir

MODEL = ("toy", {"prior": "flat", "s_prior": (1.0, 1.0)})


@pytest.fixture
def fake_nutpie(monkeypatch):
    """Compiling and (un)freezing without nutpie: counts compiles and loads.

    ``compiled_model`` itself (key, file, atomic write, checks, warnings) is the real one.
    """
    calls = {"compile": 0, "thaw": 0}

    def compile_(build):
        calls["compile"] += 1
        return {"model": build(), "compiled": calls["compile"]}, JitteredStart((0.0,))

    def thaw(payload):
        calls["thaw"] += 1
        if payload.get("broken"):
            raise compile_cache._Unusable("its callbacks do not compute what they computed")
        return {"model": payload["model"], "loaded": True}

    monkeypatch.setattr(compile_cache, "_compile", compile_)
    # an entry of some size: a truncation cuts its body, not its header
    monkeypatch.setattr(
        compile_cache, "_freeze", lambda compiled, start: {**compiled, "code": bytes(4000)}
    )
    monkeypatch.setattr(compile_cache, "_thaw", thaw)
    return calls


def _get():
    # the source is a real module of perfci.models, read without importing it
    return compile_cache.compiled_model(*MODEL, lambda: "graph", source="beta_binomial")


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "nutpie").iterdir()) if (folder / "nutpie").exists() else []


def test_cache_dir_follows_the_environment(monkeypatch):
    home = Path.home() / ".cache" / "perfci"
    assert cache_dir({}) == home
    assert cache_dir({"PERFCI_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}) == Path("/c")
    assert cache_dir({"PERFCI_CACHE_DIR": "", "XDG_CACHE_HOME": "/x"}) == Path("/x/perfci")
    # the XDG specification: a relative XDG_CACHE_HOME is to be ignored
    assert cache_dir({"XDG_CACHE_HOME": "relative/dir"}) == home
    assert cache_dir({"PERFCI_NO_CACHE": "1", "PERFCI_CACHE_DIR": "/c"}) is None
    assert cache_dir({"PERFCI_NO_CACHE": "0", "PERFCI_CACHE_DIR": "/c"}) == Path("/c")
    monkeypatch.setenv("PERFCI_CACHE_DIR", "/from/os/environ")
    assert cache_dir() == Path("/from/os/environ")


def test_the_key_changes_with_the_model_its_prior_and_every_version(monkeypatch):
    source = b"def model(): ..."
    key = compile_cache._cache_key("m", {"prior": "pareto"}, source)
    assert key == compile_cache._cache_key("m", {"prior": "pareto"}, source)  # deterministic
    others = {
        compile_cache._cache_key("other", {"prior": "pareto"}, source),
        compile_cache._cache_key("m", {"prior": "bda3"}, source),
        compile_cache._cache_key("m", {"prior": "pareto"}, source + b"\n# edited"),
    }
    real = compile_cache._version
    for package in compile_cache.PACKAGES:
        monkeypatch.setattr(
            compile_cache, "_version", lambda p, q=package: "0-other" if p == q else real(p)
        )
        others.add(compile_cache._cache_key("m", {"prior": "pareto"}, source))
    assert key not in others and len(others) == 3 + len(compile_cache.PACKAGES)


def test_a_second_call_loads_the_entry_instead_of_compiling(tmp_path, monkeypatch, fake_nutpie):
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))
    first = _get()
    assert first == {"model": "graph", "compiled": 1} and fake_nutpie == {"compile": 1, "thaw": 0}
    [entry] = _entries(tmp_path)
    assert entry.name.startswith("toy-flat-") and entry.suffix == ".pkl"
    assert _get() == {"model": "graph", "loaded": True}
    assert fake_nutpie == {"compile": 1, "thaw": 1}
    assert _entries(tmp_path) == [entry]  # no temporary file left behind


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda data: b"garbage", "not a perfci compile cache entry"),
        (lambda data: data[: len(data) // 2], "checksum does not match"),
        (lambda data: data[:-1] + bytes([data[-1] ^ 1]), "checksum does not match"),
        (lambda data: data.replace(data[28:40], b"0" * 12, 1), "another model or other library"),
    ],
    ids=["garbage", "truncated", "flipped-bit", "other-key"],
)
def test_a_damaged_or_stale_entry_is_ignored_with_a_warning_and_rebuilt(
    tmp_path, monkeypatch, fake_nutpie, damage, reason
):
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))
    _get()
    [entry] = _entries(tmp_path)
    entry.write_bytes(damage(entry.read_bytes()))
    with pytest.warns(CompileCacheWarning, match=f"ignoring the compile cache entry .*{reason}"):
        assert _get()["compiled"] == 2
    # rebuilt: the next call loads it again, silently
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _get()["loaded"] and fake_nutpie["compile"] == 2


def test_an_entry_whose_callbacks_fail_their_check_is_rebuilt(tmp_path, monkeypatch, fake_nutpie):
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compile_cache, "_freeze", lambda compiled, start: {"broken": True})
    _get()
    with pytest.warns(CompileCacheWarning, match="do not compute what they computed"):
        assert _get()["compiled"] == 2


def test_a_folder_that_cannot_be_written_falls_back_to_compiling(
    tmp_path, monkeypatch, fake_nutpie
):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(blocker / "cache"))
    for k in (1, 2):
        with pytest.warns(CompileCacheWarning, match="could not write the compile cache entry"):
            assert _get()["compiled"] == k


def test_a_read_only_folder_falls_back_to_compiling_and_leaves_nothing(
    tmp_path, monkeypatch, fake_nutpie
):
    # Permission bits do not bind root (the CI user), so the refusal is simulated where
    # the entry would become visible: the rename.
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(compile_cache.os, "replace", refuse)
    with pytest.warns(CompileCacheWarning, match="could not write .*Permission denied"):
        assert _get()["compiled"] == 1
    assert _entries(tmp_path) == []  # the temporary file was removed


def test_an_unreadable_entry_is_compiled_anew(tmp_path, monkeypatch, fake_nutpie):
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))
    _get()
    [entry] = _entries(tmp_path)
    entry.unlink()
    entry.mkdir()  # reading it raises IsADirectoryError, an OSError; so does replacing it
    with (
        pytest.warns(CompileCacheWarning, match="could not read the compile cache entry"),
        pytest.warns(CompileCacheWarning, match="could not write the compile cache entry"),
    ):
        assert _get()["compiled"] == 2


def test_turned_off_it_compiles_every_time_and_writes_nothing(tmp_path, monkeypatch, fake_nutpie):
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PERFCI_NO_CACHE", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _get()["compiled"] == 1 and _get()["compiled"] == 2
    assert not any(tmp_path.iterdir())


_WRITER = """
import sys
from pathlib import Path
from perfci.bayes import compile_cache
path, key, tag = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
for k in range(40):
    compile_cache._write(path, key, {"tag": tag, "k": k, "bulk": bytes(200_000)})
"""


def test_two_processes_writing_at_once_never_leave_a_torn_entry(tmp_path):
    path = compile_cache.entry_path(tmp_path, "toy", "flat", "f" * 64)
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path), "f" * 64, tag])
        for tag in ("a", "b")
    ]
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a torn entry would warn
        while any(w.poll() is None for w in writers):
            payload = compile_cache._read(path, "f" * 64)
            if payload is not None:
                seen.add(payload["tag"])
    assert [w.returncode for w in writers] == [0, 0]
    payload = compile_cache._read(path, "f" * 64)
    assert payload["k"] == 39 and payload["tag"] in {"a", "b"}
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary files
    assert seen  # entries were read while the two processes wrote (none torn: no warning)


def test_the_jittered_start_is_the_point_plus_a_seeded_uniform_jitter():
    start = JitteredStart((0.0, np.log(3.0)))
    x = start(12345)
    # numpy.random.default_rng(12345).uniform(-1, 1, 2), the stream the start documents
    np.testing.assert_array_equal(
        x, np.array(start.point) + np.random.default_rng(12345).uniform(-1, 1, 2)
    )
    assert np.all(np.abs(x - start.point) < 1) and not np.array_equal(x, start(12346))


def test_a_deferred_module_runs_once_on_first_use_not_on_import(tmp_path, monkeypatch):
    package = tmp_path / "deferred_probe"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import os\nRUNS = int(os.environ.get('PROBE_RUNS', '0')) + 1\n"
        "os.environ['PROBE_RUNS'] = str(RUNS)\nif os.environ.get('PROBE_FAIL'):\n"
        "    raise RuntimeError('probe failed')\nvalue = 42\n"
    )
    (package / "sub.py").write_text("name = 'sub'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "deferred_probe", raising=False)
    monkeypatch.delenv("PROBE_RUNS", raising=False)
    monkeypatch.setenv("PROBE_FAIL", "1")
    compile_cache._defer("deferred_probe")
    import deferred_probe  # an import statement reads __spec__ only: the code does not run

    assert type(deferred_probe) is compile_cache._DeferredModule and "PROBE_RUNS" not in os.environ
    with pytest.raises(RuntimeError, match="probe failed"):  # a failed run is not half-done
        deferred_probe.value  # noqa: B018
    assert type(deferred_probe) is compile_cache._DeferredModule
    monkeypatch.delenv("PROBE_FAIL")
    from deferred_probe import value  # the first use of a name runs the code

    assert value == 42 and deferred_probe.RUNS == 2 and type(deferred_probe) is type(os)
    import deferred_probe.sub  # a submodule and later uses do not run it again

    assert deferred_probe.sub.name == "sub" and os.environ["PROBE_RUNS"] == "2"
    compile_cache._defer("deferred_probe")  # imported already: left alone
    assert sys.modules["deferred_probe"] is deferred_probe
    compile_cache._defer("no_such_module_here")
    assert "no_such_module_here" not in sys.modules
    monkeypatch.delitem(sys.modules, "deferred_probe.sub", raising=False)


# ------------------------------------------------------------- with nutpie itself


# a new process with the cache folder of the test: counts its compiles, then fits
_PREAMBLE = """
import json, sys, warnings
import perfci as pc
from perfci.bayes import compile_cache
warnings.simplefilter("error", compile_cache.CompileCacheWarning)
warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
compiles = []
real = compile_cache._compile
compile_cache._compile = lambda build: compiles.append(1) or real(build)
"""

_LOADER = (
    _PREAMBLE
    + """from perfci.bayes import fitting
run, before = fitting.run_mcmc, {}
def timed(*args, **kwargs):
    # the type, not a name: reading a name would run the deferred code
    before["arviz"] = type(sys.modules.get("arviz")).__name__
    before["matplotlib"] = "matplotlib" in sys.modules
    return run(*args, **kwargs)
fitting.run_mcmc = timed
fit = pc.bayes.fit_proportion_counts([28, 25, 30, 22, 27, 29], [30, 30, 30, 26, 30, 30],
                                     sampler="nutpie", draws=200, tune=200, chains=2, rng=3)
print(json.dumps({
    "compiles": len(compiles),
    "mu": fit.posterior["posterior"]["mu"].values.tolist(),
    "pymc": "pymc" in sys.modules,
    "before_sampling": before,
    "arviz_after": type(sys.modules["arviz"]).__name__,
}))
"""
)


def _fresh_cache(tmp_path, monkeypatch, loader: str) -> list:
    """This test's cache folder and a fresh compiled-model loader; its compiles, counted."""
    from perfci.bayes import fitting

    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))
    # not the model this process may hold already: the one of this test's folder
    monkeypatch.setattr(fitting, loader, getattr(samplers, loader).__wrapped__)
    compiles: list = []
    real = compile_cache._compile
    monkeypatch.setattr(compile_cache, "_compile", lambda b: compiles.append(1) or real(b))
    return compiles


def _nutpie_uses_arviz_by_a_plain_import() -> bool:
    """Whether nutpie's modules name ArviZ only through ``import arviz``.

    The deferral saves ArviZ's start-up only then: a ``from arviz import ...`` in nutpie
    (a later version may have one) runs ArviZ's code on import, as it should.
    """
    import ast
    import importlib.util

    spec = importlib.util.find_spec("nutpie")
    folder = Path(spec.origin).parent
    for source in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("arviz"):
                return False
    return True


def _in_new_process(code: str, folder, *args: str) -> dict:
    """Run a loader in a new process with the cache `folder`; return what it printed."""
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PERFCI_CACHE_DIR": str(folder)},
    )
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.slow
def test_a_new_process_loads_the_compiled_model_and_samples_the_same_draws(tmp_path, monkeypatch):
    compiles = _fresh_cache(tmp_path, monkeypatch, "compiled_marginal")
    y, n = [28, 25, 30, 22, 27, 29], [30, 30, 30, 26, 30, 30]
    options = {"sampler": "nutpie", "draws": 200, "tune": 200, "chains": 2, "rng": 3}
    with warnings.catch_warnings():
        # 400 draws: the fit may be flagged; what matters here is that the draws agree
        warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
        first = pc.bayes.fit_proportion_counts(y, n, **options)
        assert len(compiles) == 1 and len(_entries(tmp_path)) == 1
        # in this process: loaded, not compiled, and the same draws
        again = pc.bayes.fit_proportion_counts(y, n, **options)
    assert len(compiles) == 1
    mu = first.posterior["posterior"]["mu"].values
    np.testing.assert_array_equal(again.posterior["posterior"]["mu"].values, mu)
    # in a new process: loaded without importing PyMC (nor compiling), the same draws
    loaded = _in_new_process(_LOADER, tmp_path)
    assert loaded["compiles"] == 0 and not loaded["pymc"]
    np.testing.assert_array_equal(np.array(loaded["mu"]), mu)
    assert loaded["arviz_after"] == "module"  # whoever imports ArviZ gets the real module
    if _nutpie_uses_arviz_by_a_plain_import():
        # ArviZ's code (and matplotlib with it) ran only when nutpie converted the draws
        assert loaded["before_sampling"] == {"arviz": "_DeferredModule", "matplotlib": False}


@pytest.mark.slow
def test_a_real_entry_with_damaged_code_is_caught_by_its_check(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFCI_CACHE_DIR", str(tmp_path))
    build = samplers.compiled_marginal.__wrapped__
    compiled = build("pareto")
    payload = compile_cache._freeze(compiled, compiled.initial_point_func)
    # the check compares what the loaded callbacks compute with the written record
    point, record = payload["probe"]
    assert record[0] == 0 and record[3] == 0 and np.isfinite(record[1][0])
    assert compile_cache._probe(compile_cache._thaw(payload), point) == record
    payload["probe"] = (point, (0, [record[1][0] + 1.0], *record[2:]))
    with pytest.raises(compile_cache._Unusable, match="do not compute what they computed"):
        compile_cache._thaw(payload)


_CONFUSION_LOADER = (
    _PREAMBLE
    + """fit = pc.bayes.fit_confusion_counts(json.loads(sys.argv[1]), draws=200, tune=200, chains=2,
                                    rng=3)
print(json.dumps({
    "compiles": len(compiles),
    "f1": fit.posterior["posterior"]["f1"].values.tolist(),
    "pymc": "pymc" in sys.modules,
}))
"""
)


@pytest.mark.slow
def test_the_hierarchical_confusion_model_is_compiled_once_for_any_persons(tmp_path, monkeypatch):
    compiles = _fresh_cache(tmp_path, monkeypatch, "compiled_confusion")
    four = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    six = [*four, [9, 0, 3, 40], [2, 2, 0, 9]]
    options = {"draws": 200, "tune": 200, "chains": 2, "rng": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pc.bayes.BayesianDiagnosticsWarning)
        first = pc.bayes.fit_confusion_counts(four, **options)
        other = pc.bayes.fit_confusion_counts(six, **options)  # other persons: the same entry
    assert len(compiles) == 1 and len(_entries(tmp_path)) == 1
    f1 = first.posterior["posterior"]["f1"].values
    assert not np.array_equal(other.posterior["posterior"]["f1"].values, f1)
    # a new process loads it (no PyMC, no compiling) and draws the same chains
    loaded = _in_new_process(_CONFUSION_LOADER, tmp_path, json.dumps(four))
    assert loaded["compiles"] == 0 and not loaded["pymc"]
    np.testing.assert_array_equal(np.array(loaded["f1"]), f1)
