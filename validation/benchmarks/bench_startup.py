"""Start-up: ``import perfci`` and one ``perfci interval`` call, in fresh processes.

1. ``python -X importtime -c "import perfci"``: the cumulative import time of the
   package (its names load on first use), median of 9 processes.
2. The wall time of ``perfci interval --successes 264 --trials 300`` (the paper's recall
   example), against the floor every interval pays, a process that only imports
   ``numpy`` and ``scipy.special`` (the special functions the intervals are computed
   with). Timed alternately, A B A B, 9 pairs after a warm-up of each; shown are the
   median times and the median of the pair ratios (perfci / floor, so 1.00 would be no
   cost beyond SciPy's import).

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_startup.py``
"""

import os
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

PYTHON = sys.executable
CLI = str(Path(PYTHON).with_name("perfci"))
INTERVAL = [CLI, "interval", "--successes", "264", "--trials", "300"]
FLOOR = [PYTHON, "-c", "import numpy, scipy.special"]
ROUNDS = 9


def wall(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def import_time():
    probe = subprocess.run(
        [PYTHON, "-X", "importtime", "-c", "import perfci"],
        check=True,
        capture_output=True,
        text=True,
    )
    last = [line for line in probe.stderr.splitlines() if line.endswith("| perfci")][-1]
    return int(last.split("|")[1]) / 1e6  # cumulative microseconds


def main():
    imports = [import_time() for _ in range(ROUNDS)]
    print(f"import perfci (python -X importtime, cumulative): median {median(imports):.4f} s")
    wall(INTERVAL), wall(FLOOR)  # warm-up: file caches
    ours, floor = [], []
    for k in range(ROUNDS):
        pair = (INTERVAL, FLOOR) if k % 2 == 0 else (FLOOR, INTERVAL)
        times = {id(argv): wall(argv) for argv in pair}
        ours.append(times[id(INTERVAL)])
        floor.append(times[id(FLOOR)])
    ratios = [o / f for o, f in zip(ours, floor, strict=True)]
    print(
        f"perfci interval --successes 264 --trials 300: median {median(ours):.3f} s "
        f"(min {min(ours):.3f}, max {max(ours):.3f})"
    )
    print(
        f"python -c 'import numpy, scipy.special':     median {median(floor):.3f} s "
        f"(min {min(floor):.3f}, max {max(floor):.3f})"
    )
    print(
        f"ratio perfci / floor: median {median(ratios):.2f}  "
        + " ".join(f"{r:.2f}" for r in ratios)
    )
    print(f"1-minute load average at the end: {os.getloadavg()[0]:.2f} (2 CPUs)")


if __name__ == "__main__":
    main()
