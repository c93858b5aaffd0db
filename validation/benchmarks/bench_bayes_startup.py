"""Bayesian start-up: a first and a second ``perfci bayes --sampler nutpie`` process.

``perfci bayes texts.csv --truth human --pred model --group person --metric recall
--sampler nutpie --seed 1`` on the example data (39 persons, 251 relevant texts), each
run in a fresh process, timed from just before the process is started:

- **time to first draw**: until perfci hands the model to nutpie (``nutpie.sample``; the
  process runs the command through a wrapper that prints the time when
  ``perfci.bayes.fitting.run_mcmc`` is entered), and
- **wall**: the whole command.

Sides, timed in rotation (the order changing every round, 5 rounds):

- **cached**: a compile cache folder that a first process has filled (the second and
  later processes on a machine);
- **uncached**: ``PERFCI_NO_CACHE=1``, so the process compiles the model, as every
  process did before the cache (the peer);
- **default**: the command without ``--sampler`` (``auto``: the exact grid), wall only.

Before the rounds, one process with an empty cache folder compiles and writes the entry
(**first**). The cached and uncached processes must print the same table (the same
draws): the script checks it. Ratios are per round, uncached / cached, and their median.

Bytecode is written and used as for an installed package. ``--busy N`` keeps N CPU-bound
processes spinning meanwhile (a loaded machine, reproducibly).

Run from the repository root::

    .venv/bin/python validation/benchmarks/bench_bayes_startup.py
    .venv/bin/python validation/benchmarks/bench_bayes_startup.py --busy 2
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from statistics import median

import perfci as pc

PYTHON = sys.executable
ROUNDS = 5
SPIN = "while True: pass"
WRAPPER = """
import os, sys, time
start = float(os.environ["BENCH_START"])
import perfci.bayes.fitting as fitting
run = fitting.run_mcmc
def timed(*args, **kwargs):
    print(f"FIRST_DRAW {time.time() - start:.4f}", file=sys.stderr, flush=True)
    return run(*args, **kwargs)
fitting.run_mcmc = timed
from perfci.cli import main
sys.exit(main(sys.argv[1:]))
"""


def run(argv, env):
    """Return (time to first draw or None, wall time, stdout) of one command process."""
    env = {**env, "BENCH_START": repr(time.time())}
    start = time.perf_counter()
    out = subprocess.run(
        [PYTHON, "-c", WRAPPER, *argv], env=env, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    first = [line for line in out.stderr.splitlines() if line.startswith("FIRST_DRAW")]
    return (float(first[0].split()[1]) if first else None), wall, out.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes to run meanwhile")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="perfci-bench-"))
    csv = work / "texts.csv"
    pc.load_example().to_csv(csv, index=False)
    command = ["bayes", str(csv), "--truth", "human", "--pred", "model", "--group", "person"]
    command += ["--metric", "recall", "--seed", "1"]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env.pop("PERFCI_NO_CACHE", None)
    cached_env = {**env, "PERFCI_CACHE_DIR": str(work / "cache")}
    sides = {
        "cached": ([*command, "--sampler", "nutpie"], cached_env),
        "uncached": ([*command, "--sampler", "nutpie"], {**env, "PERFCI_NO_CACHE": "1"}),
        "default": (command, cached_env),
    }
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("nutpie", "pymc", "numba"))
    print(
        f"python {sys.version.split()[0]}, {versions}; {args.busy} busy processes; "
        f"1-minute load average at the start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)"
    )
    spinners = [subprocess.Popen([PYTHON, "-c", SPIN]) for _ in range(args.busy)]
    try:
        first = run(*sides["cached"])  # an empty cache folder: compiles and writes
        times = {name: [] for name in sides}
        outputs = {name: set() for name in sides}
        names = list(sides)
        for k in range(ROUNDS):
            for name in names[k % 3 :] + names[: k % 3]:
                draw, wall, out = run(*sides[name])
                times[name].append((draw, wall))
                outputs[name].add(out)
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
        shutil.rmtree(work, ignore_errors=True)  # the example file and the cache folder
    same = outputs["cached"] == outputs["uncached"] == {first[2]}
    print(f"cached and uncached processes print the same table: {same}")
    print(f"{'process':<42} {'first draw s':>12} {'wall s':>8}")
    print(f"{'first (empty cache: compiles, writes)':<42} {first[0]:>12.2f} {first[1]:>8.2f}")
    for name, label in (
        ("cached", "cached (median of 5)"),
        ("uncached", "uncached, PERFCI_NO_CACHE=1 (median of 5)"),
        ("default", "default sampler auto = grid (median of 5)"),
    ):
        draws = [d for d, _ in times[name] if d is not None]
        shown = f"{median(draws):>12.2f}" if draws else f"{'-':>12}"
        print(f"{label:<42} {shown} {median(w for _, w in times[name]):>8.2f}")
    for index, what in ((0, "first draw"), (1, "wall")):
        ratios = [
            u[index] / c[index] for u, c in zip(times["uncached"], times["cached"], strict=True)
        ]
        print(
            f"ratio uncached / cached, {what}: median {median(ratios):.2f}  "
            + " ".join(f"{r:.2f}" for r in ratios)
        )
    print(f"cached, first draw per round: {' '.join(f'{d:.2f}' for d, _ in times['cached'])}")
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f}")
    if not same:
        raise SystemExit("the cached and uncached processes printed different tables")


if __name__ == "__main__":
    main()
