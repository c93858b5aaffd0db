"""The on-disk cache of compiled nutpie models, shared by every process of a user.

Compiling a model for nutpie (PyMC's graph through PyTensor and Numba to machine code:
the marginalized beta-binomial of :func:`perfci.bayes.fit_proportion_counts`, the hierarchical
Dirichlet-multinomial of :func:`perfci.bayes.fit_confusion_counts`) takes several seconds,
nearly all of it Numba compiling the two C callbacks nutpie calls: the log density with
its gradient, and the expansion of a point to the traced variables. Numba's own cache
cannot keep them (their closures hold names that are new in every process), so this
module keeps them itself, as Numba's cache keeps a function: the callbacks' object code
(``CodeLibrary.serialize_using_object_code``) and the Numba environments they refer to.
Loading an entry rebuilds the nutpie model from it without importing PyMC and without
compiling anything (the environments import the PyTensor modules whose functions they
belong to, as Numba's cache does).

Location
    ``$PERFCI_CACHE_DIR``, else ``$XDG_CACHE_HOME/perfci``, else ``~/.cache/perfci``;
    entries in its ``nutpie`` folder. ``PERFCI_NO_CACHE=1`` (any value but empty or
    ``0``) turns the cache off: every process compiles.
Key
    A SHA-256 of the model's name and prior parameters, the source of the module that
    builds it and of this module, the versions of perfci, PyMC, PyTensor, nutpie, Numba,
    llvmlite, NumPy and Python, and Numba's code generator (target, CPU name and
    features: the machine code is compiled for this CPU). Any change gives a new entry;
    old ones are left in place.
Writes
    To a temporary file in the same folder (named with the writer's pid: a killed
    writer's is removed by the next write), then ``os.replace``: a reader sees a whole
    entry or none. Two processes that miss at once both compile; the last rename wins,
    and both entries are equally good.
Failures
    An entry that cannot be read, holds another key, fails its checksum, cannot be
    rebuilt, or whose callbacks do not give, at a check point, the log density, gradient
    and expansion recorded when it was written is ignored with a
    :class:`CompileCacheWarning`, and the model is compiled and the entry written anew.
    A folder that cannot be written to gives a :class:`CompileCacheWarning`; the compiled
    model is used without caching.

Chains start where PyMC's default puts them, the model's support point plus a
U(-1, 1) jitter in the unconstrained space, drawn from ``numpy.random.default_rng(seed)``
with nutpie's seed of the chain (:class:`JitteredStart`), both for a compiled and for a
loaded model, so a seeded fit gives the same draws whether or not it came from the cache.

An entry is a pickle, as Numba's cache entries are: a cache folder is trusted as the
user's own files are.
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import importlib.util
import os
import pickle
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from contextlib import suppress
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

__all__ = [
    "CompileCacheWarning",
    "JitteredStart",
    "cache_dir",
    "compiled_model",
    "entry_path",
    "import_nutpie",
]

#: Version of the entry layout; a new layout gives new keys.
FORMAT = 1
#: The packages whose versions enter the key.
PACKAGES = ("perfci", "pymc", "pytensor", "nutpie", "numba", "llvmlite", "numpy")

_MAGIC = b"perfci nutpie compile cache\n"
_CALLBACKS = ("compiled_logp_func", "compiled_expand_func")
_DOUBLE_P = ctypes.POINTER(ctypes.c_double)
# nutpie's C callbacks: int64 logp(dim, x, gradient, logp, user_data) and
# int64 expand(dim, expanded, x, out, user_data); 0 means success.
_LOGP = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_uint64, _DOUBLE_P, _DOUBLE_P, _DOUBLE_P, ctypes.c_void_p
)
_EXPAND = ctypes.CFUNCTYPE(
    ctypes.c_int64, ctypes.c_uint64, ctypes.c_uint64, _DOUBLE_P, _DOUBLE_P, ctypes.c_void_p
)


class _DeferredModule(ModuleType):
    """A module whose code runs on the first access to a name it does not yet have.

    Unlike :class:`importlib.util.LazyLoader`, reading ``__spec__`` (which every
    ``import`` statement does) does not run it; any other name does, once.
    """

    def __getattr__(self, name: str) -> Any:
        with _DEFERRED_LOCK:
            if type(self) is _DeferredModule:
                object.__setattr__(self, "__class__", ModuleType)  # a plain module from now on
                try:
                    self.__spec__.loader.exec_module(self)  # type: ignore[union-attr]
                except BaseException:
                    object.__setattr__(self, "__class__", _DeferredModule)
                    raise
        return getattr(self, name)


_DEFERRED_LOCK = threading.RLock()


def import_nutpie() -> ModuleType:
    """Import nutpie with ArviZ's code deferred until nutpie first uses it (after sampling).

    ``import nutpie`` imports ArviZ, and ArviZ imports ``arviz_plots`` and with it
    ``matplotlib.pyplot``: over half a second of a process's start before the first
    draw, for a module nutpie only calls to convert the finished draws. When ArviZ is not
    yet imported, it is put in :data:`sys.modules` as the real ArviZ module whose code
    runs on the first access to one of its names (:class:`_DeferredModule`), so every
    ``import arviz`` gets the module it always gets.
    """
    _defer("arviz")
    import nutpie

    return nutpie


def _defer(name: str) -> None:
    """Put module `name` in :data:`sys.modules` as a :class:`_DeferredModule`.

    Nothing happens when it is imported already or cannot be found.
    """
    if name not in sys.modules:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            module.__class__ = _DeferredModule
            sys.modules[name] = module


class CompileCacheWarning(RuntimeWarning):
    """The nutpie compile cache could not be used; the model was compiled instead."""


class _Unusable(Exception):
    """Why an entry cannot be used (or a model cannot be cached), in words."""


def cache_dir(environ: Mapping[str, str] | None = None) -> Path | None:
    """Return the folder of perfci's caches, or None when caching is turned off.

    Parameters
    ----------
    environ : mapping, optional
        The environment variables to read; default ``os.environ``.

    Returns
    -------
    pathlib.Path or None
        ``$PERFCI_CACHE_DIR`` if set and not empty, else ``$XDG_CACHE_HOME/perfci`` if
        that is an absolute path (as the XDG specification requires), else
        ``~/.cache/perfci``; None if ``PERFCI_NO_CACHE`` is set to anything but an empty
        string or ``0``.

    Examples
    --------
    >>> from perfci.bayes.compile_cache import cache_dir
    >>> str(cache_dir({"PERFCI_CACHE_DIR": "/tmp/perfci-cache"}))
    '/tmp/perfci-cache'
    >>> str(cache_dir({"XDG_CACHE_HOME": "/var/cache/me"}))
    '/var/cache/me/perfci'
    >>> cache_dir({"PERFCI_CACHE_DIR": "/tmp/perfci-cache", "PERFCI_NO_CACHE": "1"}) is None
    True
    """
    env = os.environ if environ is None else environ
    if env.get("PERFCI_NO_CACHE", "") not in ("", "0"):
        return None
    if own := env.get("PERFCI_CACHE_DIR"):
        return Path(own).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "perfci"
    return Path.home() / ".cache" / "perfci"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def _module_source(module: str) -> bytes:
    """Return the source of a module of :mod:`perfci.models` without importing it (or PyMC)."""
    spec = importlib.util.find_spec("perfci.models")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("perfci.models")
    folder = Path(next(iter(spec.submodule_search_locations)))
    return (folder / f"{module}.py").read_bytes()


def _cache_key(model: str, parameters: Mapping[str, Any], source: bytes) -> str:
    from numba.core.registry import cpu_target

    parts = (
        ("format", FORMAT),
        ("model", model),
        ("parameters", sorted(parameters.items())),
        ("source", hashlib.sha256(source).hexdigest()),
        # how this module compiles and rebuilds: an edit of it is a new layout too
        ("cache", hashlib.sha256(Path(__file__).read_bytes()).hexdigest()),
        ("versions", [(p, _version(p)) for p in PACKAGES]),
        ("python", sys.version),
        ("codegen", cpu_target.target_context.codegen().magic_tuple()),
    )
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def entry_path(folder: Path, model: str, label: str, key: str) -> Path:
    """Return the file of an entry: ``<folder>/nutpie/<model>-<label>-<key[:16]>.pkl``."""
    return folder / "nutpie" / f"{model}-{label}-{key[:16]}.pkl"


# Warnings point at the first caller outside perfci.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _warn(message: str) -> None:
    warnings.warn(message, CompileCacheWarning, skip_file_prefixes=(_PACKAGE_DIR,))


# ------------------------------------------------------------------- entry files


def _read(path: Path, key: str) -> dict[str, Any] | None:
    """Return the payload of the entry at `path`, or None (missing, or warned unusable)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):  # no entry (or no folder) yet
        return None
    except OSError as exc:
        _warn(f"could not read the compile cache entry {path} ({exc}); compiling the model")
        return None
    try:
        magic, stored_key, digest, body = _split(data)
        if magic != _MAGIC:
            raise _Unusable("it is not a perfci compile cache entry")
        if stored_key != key.encode():
            raise _Unusable("it was written for another model or other library versions")
        if hashlib.sha256(body).hexdigest().encode() != digest:
            raise _Unusable("its checksum does not match: the file is damaged or incomplete")
        _defer("arviz")  # unpickling the entry imports nutpie
        payload = pickle.loads(body)
        if not isinstance(payload, dict):
            raise _Unusable("it does not hold a compiled model")
        return payload
    except Exception as exc:
        _ignored(path, exc)
        return None


def _split(data: bytes) -> tuple[bytes, bytes, bytes, bytes]:
    magic, rest = data[: len(_MAGIC)], data[len(_MAGIC) :]
    stored_key, digest, body = (rest.split(b"\n", 2) + [b"", b""])[:3]
    return magic, stored_key, digest, body


def _ignored(path: Path, exc: BaseException) -> None:
    reason = str(exc) if isinstance(exc, _Unusable) else f"{type(exc).__name__}: {exc}"
    _warn(
        f"ignoring the compile cache entry {path} ({reason}); compiling the model again "
        "and replacing the entry"
    )


def _write(path: Path, key: str, payload: dict[str, Any]) -> None:
    """Write an entry atomically (a temporary file, then a rename); warn if impossible."""
    from numba.core.serialize import dumps

    body = dumps(payload)  # cloudpickle, as Numba's own cache entries are written
    data = _MAGIC + key.encode() + b"\n" + hashlib.sha256(body).hexdigest().encode() + b"\n"
    from .._core.files import new_temporary, remove_stale_temporaries

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the temporaries carry their writer's pid: a killed writer's are removed here
        remove_stale_temporaries(path.parent)
        fd, temporary = new_temporary(path)
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data + body)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            with suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as exc:
        _warn(
            f"could not write the compile cache entry {path} ({exc}); the model was "
            "compiled and is used without caching (set PERFCI_CACHE_DIR to a writable "
            "folder, or PERFCI_NO_CACHE=1 to turn the cache off)"
        )


# -------------------------------------------------------- nutpie models and entries


@dataclasses.dataclass(frozen=True)
class JitteredStart:
    """Where a chain starts: the support point plus U(-1, 1) jitter, unconstrained.

    PyMC's default start for nutpie (the ``support_point`` strategy with every free
    variable jittered), written out so that a model loaded from the cache, which has no
    PyMC graph, starts where a compiled one does.

    Parameters
    ----------
    point : tuple of float
        The model's support point in the unconstrained space.

    Examples
    --------
    >>> from perfci.bayes.compile_cache import JitteredStart
    >>> start = JitteredStart((0.0, 1.0))
    >>> bool((start(7) == start(7)).all()), bool((abs(start(7) - (0.0, 1.0)) < 1).all())
    (True, True)
    """

    point: tuple[float, ...]

    def __call__(self, seed: int) -> np.ndarray:
        """Return the start of the chain seeded by `seed`."""
        x = np.array(self.point, dtype=float)
        return x + np.random.default_rng(seed).uniform(-1.0, 1.0, x.size)


@dataclasses.dataclass(frozen=True)
class _SharedVariable:
    """What nutpie reads of a shared variable of a compiled model: its name and rank."""

    name: str
    ndim: int


@dataclasses.dataclass(frozen=True)
class _LoadedCallback:
    """A C callback loaded from an entry; holds its code library, which must stay alive."""

    library: Any
    address: int


def _probe(compiled: Any, point: Any) -> tuple[Any, ...]:
    """Return both callbacks' status and outputs at `point` (a record of their behaviour)."""
    x = np.ascontiguousarray(point, dtype=float)
    gradient, logp = np.empty_like(x), np.empty(1)
    expanded = np.empty(compiled.n_expanded)
    user_data = compiled.user_data.ctypes.data
    status = _LOGP(compiled.compiled_logp_func.address)(
        x.size,
        x.ctypes.data_as(_DOUBLE_P),
        gradient.ctypes.data_as(_DOUBLE_P),
        logp.ctypes.data_as(_DOUBLE_P),
        user_data,
    )
    expand_status = _EXPAND(compiled.compiled_expand_func.address)(
        x.size,
        expanded.size,
        x.ctypes.data_as(_DOUBLE_P),
        expanded.ctypes.data_as(_DOUBLE_P),
        user_data,
    )
    return (int(status), logp.tolist(), gradient.tolist(), int(expand_status), expanded.tolist())


def _probe_point(start: JitteredStart) -> np.ndarray:
    # off the support point, so that every term of the density enters the check
    return np.array(start.point) + 0.25


def _environments(library: Any) -> list[Any]:
    """Return the Numba environments a code library refers to that can be saved.

    As Numba's cache does (``CompileResult._find_referenced_environments``): the others
    belong to functions generated at run time, with no module to restore them from.
    """
    from numba.core.environment import lookup_environment

    found = []
    for variable in library._final_module.global_variables:
        if variable.name.startswith("_ZN08NumbaEnv"):
            environment = lookup_environment(variable.name)
            if environment is not None and environment.can_cache():
                found.append(environment)
    return found


def _freeze(compiled: Any, start: JitteredStart) -> dict[str, Any]:
    """Return what rebuilds `compiled` in another process (no PyMC graph, no PyTensor function)."""
    callbacks = {}
    for field in _CALLBACKS:
        callback = getattr(compiled, field)
        library = callback._library
        if library.has_dynamic_globals:
            raise _Unusable("its callbacks refer to addresses of this process")
        callbacks[field] = (
            library.serialize_using_object_code(),
            callback.native_name,
            _environments(library),
        )
    point = _probe_point(start)
    return {
        "callbacks": callbacks,
        "shared": [
            (variable.name, key, int(variable.ndim), np.array(compiled.shared_data[key]))
            for variable, key in compiled.shared_var_keys.items()
        ],
        "n_dim": compiled.n_dim,
        "n_expanded": compiled.n_expanded,
        "shape_info": compiled.shape_info,
        "shapes": compiled.shapes,
        "coords": compiled.coords,
        "dims": compiled.dims,
        "reparameterized_names": compiled.reparameterized_names,
        "start": start.point,
        "probe": (point, _probe(compiled, point)),
    }


def _thaw(payload: dict[str, Any]) -> Any:
    """Rebuild a nutpie model from an entry's payload; check it against its record."""
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    import_nutpie()
    from nutpie.compile_pymc import CompiledPyMCModel, make_user_data

    context = cpu_target.target_context
    loaded = {}
    with global_compiler_lock:
        # Numba's runtime and registries, as Numba's cache prepares them before a load
        context.refresh()
        codegen = context.codegen()
        for field in _CALLBACKS:
            serialized, name, environments = payload["callbacks"][field]
            library = codegen.unserialize_library(serialized)
            for environment in environments:
                codegen.set_env(environment.env_name, environment)
            address = library.get_pointer_to_function(name)
            if not address:
                raise _Unusable(f"its code does not define the callback {name}")
            loaded[field] = _LoadedCallback(library, address)
    shared_var_keys, shared_data = {}, {}
    for name, key, ndim, value in payload["shared"]:
        shared_var_keys[_SharedVariable(name, ndim)] = key
        shared_data[key] = np.array(value, order="C", copy=True)
        shared_data[key].flags.writeable = False
    compiled = CompiledPyMCModel(
        dims=payload["dims"],
        reparameterized_names=payload["reparameterized_names"],
        initial_point_func=JitteredStart(tuple(payload["start"])),
        shared_data=shared_data,
        shared_var_keys=shared_var_keys,
        user_data=make_user_data(shared_var_keys, shared_data),
        n_expanded=payload["n_expanded"],
        shape_info=payload["shape_info"],
        logp_func=None,
        expand_func=None,
        _n_dim=payload["n_dim"],
        _shapes=payload["shapes"],
        _coords=payload["coords"],
        **loaded,
    )
    point, record = payload["probe"]
    if _probe(compiled, point) != record:
        raise _Unusable("its callbacks do not compute what they computed when it was written")
    return compiled


def _compile(build: Callable[[], Any]) -> tuple[Any, JitteredStart]:
    """Compile the PyMC model `build()` returns; start chains at :class:`JitteredStart`."""
    nutpie = import_nutpie()
    compiled = nutpie.compile_pymc_model(build(), jitter_rvs=set())
    # without jitter, PyMC's start is the support point whatever the seed
    start = JitteredStart(tuple(float(v) for v in compiled.initial_point_func(0)))
    return dataclasses.replace(compiled, initial_point_func=start), start


def compiled_model(
    model: str, parameters: Mapping[str, Any], build: Callable[[], Any], *, source: str
) -> Any:
    """Return the nutpie model of `build()`, from the cache or compiled (and then cached).

    Parameters
    ----------
    model : str
        The model's name (part of the key and of the file name).
    parameters : mapping
        What else the compiled model depends on, e.g. the prior and its parameters (part
        of the key); ``parameters["prior"]``, if given, is part of the file name.
    build : callable
        Returns the :class:`pymc.Model` to compile (called only on a miss).
    source : str
        The module of :mod:`perfci.models` that builds the model; its source is part of
        the key, so editing the model invalidates its entries.

    Returns
    -------
    nutpie.compile_pymc.CompiledPyMCModel
        Refit to data with ``with_data``; chains start at :class:`JitteredStart`.

    Warns
    -----
    CompileCacheWarning
        When an entry is ignored (unreadable, stale, damaged, or failing its check) or
        cannot be written; the model is compiled then.
    """
    folder = cache_dir()
    if folder is None:
        return _compile(build)[0]
    key = _cache_key(model, parameters, _module_source(source))
    path = entry_path(folder, model, str(parameters.get("prior", "model")), key)
    payload = _read(path, key)
    if payload is not None:
        try:
            return _thaw(payload)
        except Exception as exc:
            _ignored(path, exc)
    compiled, start = _compile(build)
    try:
        frozen = _freeze(compiled, start)
    except _Unusable as exc:
        _warn(f"the compiled {model} model cannot be cached ({exc}); it is used uncached")
        return compiled
    _write(path, key, frozen)
    return compiled
