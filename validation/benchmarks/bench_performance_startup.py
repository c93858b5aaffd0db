"""Performance-model start-up: a second fit of one model structure in a new process.

``perfci.bayes.performance_model(human, model, "recall", groups=person,
covariates=texts[["site"]], rng=1)`` on the example data, each in a fresh process, timed
from just before the process is started:

- **time to first draw**: until the model is handed to nutpie (the process wraps
  ``perfci.bayes.performance.run_mcmc`` and prints the time it is entered): the import,
  the labels and covariates, and the compiled model (loaded from the compile cache, or
  compiled);
- **wall**: the whole process.

Sides, alternated (the order changing every round, 5 rounds): **cached** (a compile cache
folder that a first process filled) and **uncached** (``PERFCI_NO_CACHE=1``: the process
compiles the model, the peer). Both must give the same coefficients (the same draws): the
script checks it. Ratios are per round, uncached / cached, and their median.

Run from the repository root::

    .venv/bin/python validation/benchmarks/bench_performance_startup.py
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

PYTHON = sys.executable
ROUNDS = 5
SCRIPT = """
import os, sys, time
start = float(os.environ["BENCH_START"])
import perfci.bayes.performance as performance
run = performance.run_mcmc
def timed(*args, **kwargs):
    print(f"FIRST_DRAW {time.time() - start:.4f}", file=sys.stderr, flush=True)
    return run(*args, **kwargs)
performance.run_mcmc = timed
import perfci as pc
texts = pc.load_example()
fit = pc.bayes.performance_model(texts["human"], texts["model"], "recall",
                                 groups=texts["person"], covariates=texts[["site"]], rng=1)
print(fit.coefficients()[["term", "mean"]].round(6).to_string())
"""


def run(env):
    """Return (time to first draw, wall time, stdout) of one process."""
    env = {**env, "BENCH_START": repr(time.time())}
    start = time.perf_counter()
    out = subprocess.run([PYTHON, "-c", SCRIPT], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode:
        raise SystemExit(out.stderr)
    first = [line for line in out.stderr.splitlines() if line.startswith("FIRST_DRAW")]
    return float(first[0].split()[1]), wall, out.stdout


def main():
    work = Path(tempfile.mkdtemp(prefix="perfci-bench-"))
    base = {**os.environ, "PERFCI_CACHE_DIR": str(work / "cache")}
    base.pop("PERFCI_NO_CACHE", None)
    try:
        first, wall, reference = run(base)
        print(f"first process (compiles, writes the entry): first draw {first:.2f} s, "
              f"wall {wall:.2f} s")  # fmt: skip
        times = {"cached": [], "uncached": []}
        ratios = []
        for r in range(ROUNDS):
            order = ("cached", "uncached") if r % 2 == 0 else ("uncached", "cached")
            got = {}
            for side in order:
                env = base if side == "cached" else {**base, "PERFCI_NO_CACHE": "1"}
                t_first, t_wall, out = run(env)
                if out != reference:
                    raise SystemExit(f"{side} gave other draws:\n{out}\n{reference}")
                got[side] = (t_first, t_wall)
                times[side].append((t_first, t_wall))
            ratios.append(got["uncached"][0] / got["cached"][0])
        for side, rows in times.items():
            firsts, walls = [f for f, _ in rows], [w for _, w in rows]
            span = f"{min(firsts):.2f}-{max(firsts):.2f}"
            print(f"{side:9s} first draw median {median(firsts):.2f} s (range {span}), "
                  f"wall median {median(walls):.2f} s")  # fmt: skip
        ratio = median(ratios)
        print(f"time to first draw, uncached / cached: median of the pair ratios {ratio:.1f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
