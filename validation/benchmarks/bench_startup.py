"""Start-up: ``import perfci`` and one ``perfci interval`` call, in fresh processes.

1. ``python -X importtime -c "import perfci"``: the cumulative import time of the
   package (its names load on first use), median of 9 processes.
2. The wall time of ``perfci interval --successes 264 --trials 300`` (the paper's recall
   example, default method Agresti-Coull), against two floors: a process that only
   imports ``numpy`` (which every interval needs) and one that imports ``numpy`` and
   ``scipy.special`` (what the command imported before its normal quantile came from the
   standard library). Timed in rotation, the order changing every round (9 rounds after
   a warm-up of each); shown are the median times and the median of the per-round
   ratios (perfci / floor).

The processes run as an installed package runs, with bytecode cached: the warm-up writes
``__pycache__`` for perfci's sources if the environment has ``PYTHONDONTWRITEBYTECODE``
set (which would otherwise compile them at every start; see ``--no-bytecode-cache``).

``--busy N`` keeps N CPU-bound processes spinning while timing (a loaded machine, made
reproducibly); they are ended when the timing is done.

Run from the repository root::

    .venv/bin/python validation/benchmarks/bench_startup.py
    .venv/bin/python validation/benchmarks/bench_startup.py --busy 2
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

PYTHON = sys.executable
CLI = str(Path(PYTHON).with_name("perfci"))
INTERVAL = (
    "perfci interval --successes 264 --trials 300",
    [CLI, "interval", "--successes", "264", "--trials", "300"],
)
FLOORS = (
    ("python -c 'import numpy'", [PYTHON, "-c", "import numpy"]),
    ("python -c 'import numpy, scipy.special'", [PYTHON, "-c", "import numpy, scipy.special"]),
)
ROUNDS = 9
SPIN = "while True: pass"


def wall(argv, env):
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def import_time(env):
    probe = subprocess.run(
        [PYTHON, "-X", "importtime", "-c", "import perfci"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    last = [line for line in probe.stderr.splitlines() if line.endswith("| perfci")][-1]
    return int(last.split("|")[1]) / 1e6  # cumulative microseconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes to run meanwhile")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as the environment has it (perfci's sources "
        "are then compiled at every start unless their bytecode already exists)",
    )
    args = parser.parse_args()
    env = dict(os.environ)
    if not args.no_bytecode_cache:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    print(
        f"python {sys.version.split()[0]}; bytecode cache "
        f"{'as the environment has it' if args.no_bytecode_cache else 'written and used'}; "
        f"{args.busy} busy processes; 1-minute load average at the start: "
        f"{os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)"
    )
    spinners = [subprocess.Popen([PYTHON, "-c", SPIN]) for _ in range(args.busy)]
    try:
        imports = [import_time(env) for _ in range(ROUNDS)]
        sides = [INTERVAL, *FLOORS]
        for _, argv in sides:  # warm-up: file caches, bytecode
            wall(argv, env)
        times = {label: [] for label, _ in sides}
        for k in range(ROUNDS):
            shift = k % len(sides)
            for label, argv in sides[shift:] + sides[:shift]:
                times[label].append(wall(argv, env))
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    print(f"import perfci (python -X importtime, cumulative): median {median(imports):.4f} s")
    ours = times[INTERVAL[0]]
    for label, _ in sides:
        t = times[label]
        print(f"{label:<45} median {median(t):.3f} s (min {min(t):.3f}, max {max(t):.3f})")
    for label, _ in FLOORS:
        ratios = [o / f for o, f in zip(ours, times[label], strict=True)]
        print(
            f"ratio perfci / {label}: median {median(ratios):.2f}  "
            + " ".join(f"{r:.2f}" for r in ratios)
        )
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
