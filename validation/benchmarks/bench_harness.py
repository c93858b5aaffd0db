"""The validation harness's cells: batched public calls against loops of single calls.

The harness scores every method of a cell by calling the public function on all the
cell's data sets at once. Its peer here is the plain per-data-set loop of the same public
function, data set k with the generator the batch rule gives it
(``perfci.batch_generators(seed, K)[k]``), so both sides return the same numbers,
draw for draw, and the script checks that they do. The two sides are timed alternately
in one process (A B A B ..., the first side switching every round, after a warm-up of
each; ``_alternate.alternate``), and the median time of each side and the median of the
pair ratios (loop time / batched time) are printed with every pair ratio.

One representative cell of each suite at scale ``full``:

1. paper-f1, n = 200 texts (the mean size of the suite's grid is 188), precision 0.8,
   recall 0.7: 1,000 confusion matrices, ``bootstrap_ci(counts, "f1", ...)`` with 2,000
   resamples, the percentile bootstrap and pseudo count 1.
2. paper-nested, 28 persons (the middle of 5 to 50), the "moderate" design (about 30
   texts per person): the percentile bootstraps of the suite (iid, cluster and
   hierarchical, pseudo count 0 and 1) on the cell's 1,000 data sets with 1,000
   resamples; and the grid posterior's two rows, ``bayes.shared_grid_intervals(y, n,
   ["mu", "population", "sampled_persons"])`` against a loop of ``bayes.grid_intervals``
   per data set and estimand, on the cell's first 200 data sets (the loop takes about
   15 ms a data set).

With ``--cells`` the script times instead the harness's own ``compute_cell`` on cells
spread over both suites' grids (process CPU time, one call each after a warm-up cell),
with only functions that exist in earlier versions too, so that it can be run on
another checkout to compare versions (not side by side: different processes, at
different times).

With ``--malloc`` it times the paper-f1 cells of ``--cells`` in child processes under
two settings of glibc's allocator, alternately (5 pairs): the environment Dask gives its
workers by default (``MALLOC_TRIM_THRESHOLD_=65536``) and the one the harness gives its
LocalCluster's workers (``perfci.harness.execution.WORKER_MALLOC``); it prints each
child's user and system CPU time and minor page faults over the cells.

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_harness.py``
(add ``--cells`` for the per-cell times, ``--malloc`` for the allocator settings).
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

# one BLAS thread, as in the harness's Dask workers (set before NumPy loads BLAS)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _alternate import alternate  # noqa: E402

import perfci as pc  # noqa: E402
from perfci.harness.execution import compute_cell  # noqa: E402
from perfci.harness.populations import confusion_probabilities, nested_sample  # noqa: E402
from perfci.harness.schema import load_suite  # noqa: E402

SEED = 20261130
ROUNDS = 7
GRID_SETS = 200
# paper-f1 cells spread over sizes and rates; paper-nested cells over both designs
F1_CELLS = [
    {"n": n, "precision": p, "recall": r}
    for n, p, r in [
        (30, 0.5, 0.5),
        (45, 0.9, 0.6),
        (100, 0.7, 0.8),
        (200, 0.8, 0.7),
        (300, 0.6, 0.95),
        (500, 0.95, 0.95),
    ]
]
NESTED_CELLS = [
    {"sampling": s, "persons": m} for s in ("small", "moderate") for m in (5, 17, 28, 39, 50)
]


def load() -> str:
    return f"1-minute load average {os.getloadavg()[0]:.2f}"


def children(k: int) -> list[np.random.Generator]:
    # the batch rule: data set k of a batched call draws from batch_generators(seed, K)[k]
    return list(pc.batch_generators(SEED, k))


def report(name: str, timing, check: str) -> None:
    ratios = ", ".join(f"{r:.1f}" for r in timing.ratios)
    print(
        f"  {name}: batched {timing.ours * 1e3:.0f} ms, loop {timing.peer * 1e3:.0f} ms "
        f"(medians); pair ratios {ratios}; median {timing.ratio:.1f}x; {check}"
    )


def same(batched, singles, fields=("low", "high")) -> str:
    for field in fields:
        got = np.asarray(getattr(batched, field), float)
        want = np.array([getattr(s, field) for s in singles], float)
        if not np.array_equal(got, want, equal_nan=True):
            raise AssertionError(f"the batched {field} differs from the loop's")
    return "same intervals, bit for bit"


def f1_cell() -> None:
    cell = {"n": 200, "precision": 0.8, "recall": 0.7}
    probs = confusion_probabilities(0.1, cell["precision"], cell["recall"])
    counts = np.random.default_rng(1).multinomial(cell["n"], probs, size=1000)
    kwargs = dict(pseudo_count=1, n_resamples=2000)

    def batched():
        return pc.bootstrap_ci(counts, "f1", rng=SEED, nested=False, **kwargs)

    def loop():
        return [
            pc.bootstrap_ci(c, "f1", rng=g, **kwargs)
            for c, g in zip(counts, children(len(counts)), strict=True)
        ]

    check = same(batched(), loop())
    print(f"1. paper-f1 cell {cell}: 1,000 data sets, 2,000 resamples, pseudo count 1")
    report("bootstrap_ci F1", alternate(batched, loop, ROUNDS), check)


def nested_cell() -> None:
    suite = load_suite("paper-nested")
    cell = {"sampling": "moderate", "persons": 28}
    y, n = nested_sample(suite, cell, 1000, np.random.default_rng(1))
    counts = np.stack([y, n - y], axis=-1)
    print(f"2. paper-nested cell {cell}: 1,000 data sets, 1,000 resamples")
    for scheme in pc.SCHEMES:
        for lam in (0, 1):
            kwargs = dict(scheme=scheme, pseudo_count=lam, n_resamples=1000, nested=True)

            def batched(kwargs=kwargs):
                return pc.bootstrap_ci(counts, "proportion", rng=SEED, **kwargs)

            def loop(kwargs=kwargs):
                return [
                    pc.bootstrap_ci(c, "proportion", rng=g, **kwargs)
                    for c, g in zip(counts, children(len(counts)), strict=True)
                ]

            check = same(batched(), loop())
            name = f"bootstrap_ci {scheme}, pseudo count {lam}"
            report(name, alternate(batched, loop, ROUNDS), check)
    ys, ns = y[:GRID_SETS], n[:GRID_SETS]
    estimands = ["mu", "population", "sampled_persons"]

    def shared():
        return pc.bayes.shared_grid_intervals(ys, ns, estimands, rng=SEED)

    def grid_loop():
        # each estimand's loop with fresh generators: the shared call draws once for all
        return {
            e: [
                pc.bayes.grid_intervals(a, b, estimand=e, rng=g)
                for a, b, g in zip(ys, ns, children(GRID_SETS), strict=True)
            ]
            for e in estimands
        }

    both, singles = shared(), grid_loop()
    check = ", ".join(f"{e}: {same(both[e], singles[e])}" for e in estimands)
    print(f"   the grid rows on the first {GRID_SETS} data sets")
    report("shared_grid_intervals", alternate(shared, grid_loop, 5), check)
    # where the grid rows' time goes, on all 1,000 data sets: the posterior (the mu row
    # alone) and the drawn rows' Beta draws of every person's rate
    spent = {}
    for estimand in estimands:
        start = time.process_time()
        pc.bayes.grid_intervals(y, n, estimand=estimand, rng=SEED)
        spent[estimand] = time.process_time() - start
    variates = pc.bayes.fitting.GRID_DRAWS * int((n > 0).sum())
    extra = spent["population"] - spent["mu"]
    print(
        f"   all 1,000 data sets: grid_intervals mu {spent['mu']:.2f} s CPU, population "
        f"{spent['population']:.2f} s ({variates:.2e} Beta variates of person rates: "
        f"{extra / variates * 1e9:.0f} ns each beyond the posterior)"
    )


def cells() -> None:
    print(f"perfci {pc.__version__} at {Path(pc.__file__).parent}")
    for name, grid in (("paper-f1", F1_CELLS), ("paper-nested", NESTED_CELLS)):
        suite = load_suite(name)
        compute_cell(suite, "full", grid[0])  # warm-up: imports, compiled kernels
        total = 0.0
        for cell in grid:
            start = time.process_time()
            compute_cell(suite, "full", cell)
            spent = time.process_time() - start
            total += spent
            print(f"  {name} {cell}: {spent:.2f} s CPU")
        cells_in_suite = len(suite.cells("full"))
        mean = total / len(grid)
        print(
            f"  {name}: mean {mean:.2f} s CPU a cell; x {cells_in_suite} cells = "
            f"{mean * cells_in_suite / 60:.1f} CPU-minutes ({mean * cells_in_suite / 120:.1f} "
            "minutes on 2 cores without any other load)"
        )


def f1_child() -> None:
    """Time the paper-f1 cells of --cells in this process: CPU times and page faults."""
    import resource

    suite = load_suite("paper-f1")
    compute_cell(suite, "full", F1_CELLS[0])  # warm-up
    before = resource.getrusage(resource.RUSAGE_SELF)
    for cell in F1_CELLS:
        compute_cell(suite, "full", cell)
    after = resource.getrusage(resource.RUSAGE_SELF)
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
    print(f"{user:.3f} {system:.3f} {after.ru_minflt - before.ru_minflt}")


def malloc() -> None:
    import subprocess

    from perfci.harness.execution import WORKER_MALLOC

    harness = {key.rsplit(".", 1)[1]: value for key, value in WORKER_MALLOC.items()}
    settings = {"dask default": {"MALLOC_TRIM_THRESHOLD_": "65536"}, "harness": harness}
    print(f"paper-f1 cells of --cells in child processes; harness settings {harness}")
    runs: dict[str, list[tuple[float, float, int]]] = {name: [] for name in settings}
    for k in range(5):
        order = list(settings) if k % 2 == 0 else list(settings)[::-1]
        for name in order:
            env = {**os.environ, **settings[name]}
            done = subprocess.run(
                [sys.executable, __file__, "--f1-child"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            user, system, faults = done.stdout.split()[-3:]
            runs[name].append((float(user), float(system), int(faults)))
    for name, values in runs.items():
        user = sorted(v[0] for v in values)[2]
        system = sorted(v[1] for v in values)[2]
        faults = sorted(v[2] for v in values)[2]
        print(
            f"  {name}: user {user:.2f} s, system {system:.2f} s, {faults} minor page faults "
            f"(medians of 5) for {len(F1_CELLS)} cells"
        )
    ratios = sorted(
        (a[0] + a[1]) / (b[0] + b[1])
        for a, b in zip(runs["dask default"], runs["harness"], strict=True)
    )
    pairs = ", ".join(f"{r:.2f}" for r in ratios)
    print(f"  CPU time ratio dask default / harness, pairs {pairs}; median {ratios[2]:.2f}")


def main() -> None:
    warnings.simplefilter("ignore")  # dropped resamples and fallbacks are expected here
    if "--f1-child" in sys.argv[1:]:
        f1_child()
        return
    print(f"numpy {np.__version__}, perfci {pc.__version__}; {os.cpu_count()} CPUs; {load()}")
    start = time.perf_counter()
    if "--cells" in sys.argv[1:]:
        cells()
    elif "--malloc" in sys.argv[1:]:
        malloc()
    else:
        f1_cell()
        nested_cell()
    print(f"total run time {time.perf_counter() - start:.0f} s; {load()} at end")


if __name__ == "__main__":
    main()
