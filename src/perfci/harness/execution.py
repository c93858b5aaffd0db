"""Running a suite: one kernel per population kind, cell seeds, scoring, Dask execution.

Every kernel simulates its cell's data sets once and scores each method on them by
calling the public function a user would call (:func:`perfci.proportion_ci`,
:func:`perfci.clustered_proportion_ci`, :func:`perfci.bootstrap_ci`,
:func:`perfci.bayes.grid_intervals`, :func:`perfci.bayes.fit`), batched over the data sets.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import xarray as xr

from ..analytic import proportion_ci
from ..bootstrap import bootstrap_ci
from .populations import _nested_sample, _population_of, confusion_probabilities
from .results import _assemble, _exact_dataset, _planning_dataset
from .schema import Scale, Suite, load_suite, suite_fingerprint
from .storage import _cell_path, _write_atomic, _write_dataset


def _cell_seed(suite: Suite, scale: str, cell: dict) -> np.random.SeedSequence:
    key = f"{suite.name}|{scale}|" + "|".join(f"{k}={cell[k]!r}" for k in sorted(cell))
    digest = hashlib.sha256(key.encode()).digest()
    return np.random.SeedSequence(
        suite.seed,
        spawn_key=tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)),
    )


def _score(low, high, truth, flagged=0) -> np.ndarray:
    """hits, misses low and high, half-width sum, n_valid, n_flagged of intervals."""
    low, high = np.asarray(low, float), np.asarray(high, float)
    valid = np.isfinite(low) & np.isfinite(high)  # an interval that could not be formed
    low, high = low[valid], high[valid]
    return np.array(
        [
            np.sum((low <= truth) & (truth <= high)),
            np.sum(high < truth),
            np.sum(low > truth),
            np.sum(high - low) / 2,
            low.size,
            flagged,
        ],
        dtype=float,
    )


def _bootstrap_ends(counts: np.ndarray, metric: str, options: dict, scale: Scale, level, rng):
    """Interval ends of :func:`perfci.bootstrap_ci` for a batch of data sets.

    Warnings (dropped resamples, BCa fallbacks) are expected in a coverage study; the
    ends are what is scored, and an interval that cannot be formed is NaN (not valid).
    """
    nested = counts.ndim == 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ci = bootstrap_ci(
            counts,
            metric,
            scheme=options.get("scheme", "iid"),
            interval=options["interval"],
            pseudo_count=options["pseudo_count"],
            n_resamples=scale.resamples,
            confidence_level=level,
            rng=rng,
            nested=nested,
        )
    return ci.low, ci.high


def _bernoulli_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    n, p = int(cell["n"]), float(cell["p"])
    level = suite.confidence_level
    out = np.empty((len(suite.methods), 6))
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    x = data_rng.binomial(n, p, size=scale.replications)  # the data every method sees
    counts = np.stack([x, n - x], axis=-1)
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        if m.family == "analytic":
            ci = proportion_ci(x, n, method=m.options["method"], confidence_level=level)
            low, high = ci.low, ci.high
        else:
            low, high = _bootstrap_ends(counts, "proportion", m.options, scale, level, rng)
        out[i] = _score(low, high, p)
    return out


def _nested_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    from ..bayes import grid_intervals
    from ..design import clustered_proportion_ci

    _, truth = _population_of(suite, cell)
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    y, n = _nested_sample(suite, cell, scale.replications, data_rng)
    x_total, n_total = y.sum(1), n.sum(1)
    per_person = np.stack([y, n - y], axis=-1)  # (replications, persons, 2)
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        o = m.options
        if m.family == "analytic":
            analytic = proportion_ci(x_total, n_total, method=o["method"], confidence_level=level)
            low, high = analytic.low, analytic.high
        elif m.family == "clustered":
            df = None if o["df_adjust"] == "none" else o["df_adjust"]
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                clustered = clustered_proportion_ci(
                    y,
                    n,
                    method=o["method"],
                    design=o["design"],
                    df_adjust=df,
                    confidence_level=level,
                )
            low, high = clustered.low, clustered.high
        elif m.family == "bootstrap":
            low, high = _bootstrap_ends(per_person, "proportion", o, scale, level, rng)
        elif o["sampler"] == "nutpie":
            low, high, flagged = _nutpie_intervals(
                y, n, o["estimand"], o["replications"], level, rng
            )
            out[i] = _score(low, high, truth, flagged)
            continue
        else:
            credible = grid_intervals(y, n, estimand=o["estimand"], level=level, rng=rng)
            low, high = credible.low, credible.high
        out[i] = _score(low, high, truth)
    return out


def _nutpie_intervals(y, n, estimand, replications, level, rng):
    """MCMC (nutpie) credible intervals for the first `replications` data sets of a cell.

    Every fit is one MCMC run (compiled once per worker process, refit with the data);
    flagged fits (failed diagnostics) are kept in the coverage and counted.
    """
    from ..bayes import BayesianDiagnosticsWarning, fit

    k = min(replications, y.shape[0])
    low, high = np.full(k, np.nan), np.full(k, np.nan)
    flagged = 0
    seeds = rng.integers(2**31 - 1, size=k)
    for r in range(k):  # one MCMC run per data set: no way around a loop here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", BayesianDiagnosticsWarning)
            result = fit(
                y[r], n[r], sampler="nutpie", draws=1000, tune=1000, chains=2, rng=int(seeds[r])
            )
        ci = result.interval(estimand, "eti", level)
        low[r], high[r] = ci.low, ci.high
        flagged += int(result.flagged)
    return low, high, flagged


def _confusion_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """F1 bootstrap intervals on confusion matrices of n texts (the paper's section 3.2)."""
    precision, recall = float(cell["precision"]), float(cell["recall"])
    truth = 2 * precision * recall / (precision + recall)
    probs = confusion_probabilities(suite.population["prevalence"], precision, recall)
    n = int(cell["n"])
    level = suite.confidence_level
    data_rng, *method_rngs = np.random.default_rng(seed).spawn(1 + len(suite.methods))
    counts = data_rng.multinomial(n, probs, size=scale.replications)  # every method's data
    out = np.empty((len(suite.methods), 6))
    for i, (m, rng) in enumerate(zip(suite.methods, method_rngs, strict=True)):
        low, high = _bootstrap_ends(counts, "f1", m.options, scale, level, rng)
        out[i] = _score(low, high, truth)
    return out


_KERNELS: dict[str, Callable] = {
    "bernoulli": _bernoulli_cell,
    "confusion": _confusion_cell,
    "nested_finite": _nested_cell,
}


def compute_cell(suite: Suite, scale_name: str, cell: dict) -> np.ndarray:
    """Score every method in one cell: (methods, 6) = hits, misses, half-widths, n, flags."""
    scale = suite.scales[scale_name]
    return _KERNELS[suite.population["kind"]](
        suite, scale, cell, _cell_seed(suite, scale_name, cell)
    )


def run_suite(
    suite: Suite | str,
    scale: str = "smoke",
    out: str | os.PathLike = "validation/results",
    *,
    workers: int = 1,
    scheduler: str | None = None,
    resume: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> xr.Dataset:
    """Run a suite and write ``OUT/SUITE.nc``; return the result dataset.

    Parameters
    ----------
    suite : Suite or str
        A suite or its name.
    scale : str, default "smoke"
        A scale of the suite (``"smoke"``: seconds; ``"full"``: the paper's).
    out : path, default "validation/results"
        Output folder.
    workers : int, default 1
        Dask workers of an embedded LocalCluster (1: run in this process).
    scheduler : str, optional
        Address of an existing Dask scheduler (instead of `workers`).
    resume : bool, default False
        Keep the cells a previous run finished (in ``OUT/SUITE.cells/``).
    progress : callable, optional
        Called with (cells done, cells in all) after each cell.

    Returns
    -------
    xarray.Dataset
        The result (see the module notes).

    Examples
    --------
    The exact scale of the paper's independent suite takes about a second:

    >>> import tempfile
    >>> from perfci import harness
    >>> with tempfile.TemporaryDirectory() as out:
    ...     ds = harness.run_suite("paper-independent", "exact", out)
    >>> round(float(ds.sel(n=20, p=0.95, ci_method="wald")["coverage"]), 3)
    0.639
    """
    suite = load_suite(suite) if isinstance(suite, str) else suite
    if scale not in suite.scales:
        raise ValueError(f"`scale` must be one of {sorted(suite.scales)}; got {scale!r}.")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if suite.scales[scale].exact:
        # Exact mode is one vectorized enumeration per method: nothing to persist per cell.
        if suite.population["kind"] == "nested_planning":
            dataset = _planning_dataset(suite, scale)
        else:
            dataset = _exact_dataset(suite, scale)
        if progress:
            progress(1, 1)
        _write_dataset(dataset, out / f"{suite.name}.nc")
        return dataset
    folder = out / f"{suite.name}.cells"
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "fingerprint.txt"
    fingerprint = suite_fingerprint(suite, scale)
    if resume and marker.exists() and marker.read_text() != fingerprint:
        raise ValueError(
            f"{folder} holds cells of another version of suite {suite.name!r} or another "
            "scale; run without `resume` to start again."
        )
    if not resume:
        for old in folder.glob("*.npy"):
            old.unlink()
    marker.write_text(fingerprint)
    for torn in folder.glob("*.tmp"):  # left by a run killed while writing
        torn.unlink()
    cells = suite.cells(scale)
    todo = [c for c in cells if not _cell_path(folder, c).exists()]
    done = len(cells) - len(todo)
    if progress:
        progress(done, len(cells))
    for cell, scores in _execute(suite, scale, todo, workers, scheduler):
        _write_atomic(_cell_path(folder, cell), scores)
        done += 1
        if progress:
            progress(done, len(cells))
    dataset = _assemble(suite, scale, cells, folder)
    _write_dataset(dataset, out / f"{suite.name}.nc")
    return dataset


def _execute(suite, scale, cells, workers, scheduler) -> Iterable[tuple[dict, np.ndarray]]:
    if not cells:
        return
    if scheduler is None and workers <= 1:
        for cell in cells:
            yield cell, compute_cell(suite, scale, cell)
        return
    from dask.distributed import Client, LocalCluster, as_completed

    cluster = None
    if scheduler is None:
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            scheduler_port=0,
        )
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = {
            client.submit(compute_cell, suite, scale, cell, pure=False): i
            for i, cell in enumerate(cells)
        }
        for future in as_completed(futures):
            yield cells[futures[future]], future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
