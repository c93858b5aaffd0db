"""Bayesian fits of the hierarchical beta-binomial: time per fit, perfci against pm.sample.

Six designs: 5, 20 and 50 persons, with about 3 texts per person (normal, SD 1, at least
1) or about 30 (SD 5, at least 1); person rates from a Beta with mean 0.9 and SD 0.1,
i.e. Beta(7.2, 0.8), the paper's population. Fixed seed. For each design:

1. **grid**: ``pc.bayes.grid_intervals`` on one batch of 1,000 data sets (persons on the
   last axis); the time per data set, best of three batches after one warm-up batch.
   Goal: under 5 ms per data set.
2. **nutpie with reuse**: ``pc.bayes.fit_proportion_counts(..., sampler="nutpie",
   draws=1000, tune=1000, chains=4)``. The compiled model is cached per prior (and refit
   with ``with_data``); the cache is cleared before each design so that the first call
   shows what a fresh process pays (compilation plus one fit). Then the mean time of 10
   refits on 10 new data sets of the design, with chains=4 and with chains=2 (the machine
   has 2 cores). Goal: under 100 ms per refit. The on-disk compile cache is turned off
   (``PERFCI_NO_CACHE=1``), so the first call compiles; ``bench_bayes_startup.py`` times the cache.
3. **pm.sample defaults**: what a user writing the model by hand pays. The model is built
   (``perfci.models.beta_binomial_marginal(y, n)``, and the full model with person rates,
   ``perfci.models.beta_binomial(y, n)``) and ``pymc.sample(progressbar=False,
   random_seed=...)`` is called with PyMC's defaults otherwise (in PyMC 6 that compiles a
   nutpie model on every call; the sampler, chains and tuning steps it chose are printed).
   Mean of three calls, each on a new data set; the time includes building the model.

Sanity check: on the 10 refit data sets, the largest |difference| between the ends of the
95% equal-tailed interval of mu from the grid and from nutpie (chains=4), also in units of
the nutpie end's Monte-Carlo standard error (``arviz_stats`` quantile MCSE); differences of
a few MCSE are expected. Fits flagged by perfci's diagnostics are counted. PyMC's log
lines and sampler warnings are silenced. The 1-minute load average is printed: other
processes on the machine slow the MCMC timings.

Run from the repository root: ``.venv/bin/python validation/benchmarks/bench_bayes.py``
"""

import logging
import os
import time
import warnings

# the first call of each design compiles, as a first process on a machine does
os.environ["PERFCI_NO_CACHE"] = "1"

import numpy as np
import nutpie
import pymc as pm
import pytensor
from arviz_stats.base import array_stats

import perfci as pc
from perfci.models import beta_binomial, beta_binomial_marginal

SEED = 20261130
PERSONS = (5, 20, 50)
TEXTS = ((3, 1), (30, 5))  # (mean, SD) of texts per person, rounded, at least 1
RATE_MEAN, RATE_SD = 0.9, 0.1
GRID_BATCH, GRID_REPEAT = 1000, 3
REFITS = 10
PM_CALLS = 3
DRAWS, TUNE, CHAINS = 1000, 1000, 4
LEVEL = 0.95
GRID_GOAL_MS, NUTPIE_GOAL_MS = 5.0, 100.0

# Beta(a, b) with the given mean and SD: a + b = mean (1 - mean) / SD^2 - 1.
_TOTAL = RATE_MEAN * (1 - RATE_MEAN) / RATE_SD**2 - 1
BETA_A, BETA_B = RATE_MEAN * _TOTAL, (1 - RATE_MEAN) * _TOTAL


def simulate(rng, persons, texts, size):
    """`size` data sets of `persons` persons: successes and trials, shape (size, persons)."""
    mean, sd = texts
    n = np.maximum(1, np.rint(rng.normal(mean, sd, (size, persons)))).astype(np.int64)
    y = rng.binomial(n, rng.beta(BETA_A, BETA_B, (size, persons)))
    return y, n


def timed(fn):
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def time_grid(y, n):
    """Best-of time of one batched grid call, per data set, after a warm-up call."""
    pc.bayes.grid_intervals(y, n, confidence_level=LEVEL)
    best = min(
        timed(lambda: pc.bayes.grid_intervals(y, n, confidence_level=LEVEL))[0]
        for _ in range(GRID_REPEAT)
    )
    return best / y.shape[0]


def nutpie_fit(y, n, chains, seed):
    return pc.bayes.fit_proportion_counts(
        y, n, sampler="nutpie", draws=DRAWS, tune=TUNE, chains=chains, rng=seed
    )


def time_nutpie(y, n):
    """First call from an empty cache, then refits on data sets 1..REFITS (4 and 2 chains)."""
    # as in a fresh process: compile on the first call
    pc.bayes.samplers.compiled_marginal.cache_clear()
    first, _ = timed(lambda: nutpie_fit(y[0], n[0], CHAINS, SEED))
    refit = {}
    fits = []
    for chains in (CHAINS, 2):
        times = []
        for d in range(1, REFITS + 1):
            t, f = timed(lambda d=d, c=chains: nutpie_fit(y[d], n[d], c, SEED + d))
            times.append(t)
            if chains == CHAINS:
                fits.append(f)
        refit[chains] = np.array(times)
    return first, refit, fits


def interval_ends(fits):
    """95% ETI ends of mu (2, fits) and the Monte-Carlo standard error of each end."""
    ends, mcse = [], []
    for f in fits:
        ci = f.interval("mu", "eti", LEVEL)
        mu = f.posterior["posterior"]["mu"].to_numpy()
        ends.append((ci.low, ci.high))
        mcse.append(
            [
                array_stats.mcse(mu, chain_axis=-2, draw_axis=-1, method="quantile", prob=q)
                for q in ((1 - LEVEL) / 2, (1 + LEVEL) / 2)
            ]
        )
    return np.array(ends).T, np.array(mcse).T


def time_pm_sample(build, y, n, info):
    """Mean time of PM_CALLS builds + ``pm.sample()`` defaults, on data sets 0..PM_CALLS-1."""
    times = []
    for d in range(PM_CALLS):

        def run(d=d):
            with build(y[d], n[d]):
                return pm.sample(progressbar=False, random_seed=SEED + d)

        t, trace = timed(run)
        times.append(t)
        attrs = trace["posterior"].attrs
        info.add(
            (
                build.__name__,
                attrs.get("inference_library", "?"),
                trace["posterior"].sizes["chain"],
                trace["posterior"].sizes["draw"],
                attrs.get("tuning_steps", "?"),
            )
        )
    return float(np.mean(times))


def main():
    start = time.perf_counter()
    load = os.getloadavg()[0]
    logging.getLogger("pymc").setLevel(logging.ERROR)
    print(
        f"numpy {np.__version__}, pymc {pm.__version__}, pytensor {pytensor.__version__}, "
        f"nutpie {nutpie.__version__}; person rates Beta({BETA_A:.1f}, {BETA_B:.1f}); "
        f"seed {SEED}"
    )
    print(
        f"grid: batch of {GRID_BATCH:,} data sets, best of {GRID_REPEAT}; nutpie: draws={DRAWS}, "
        f"tune={TUNE}, mean of {REFITS} refits; pm.sample: mean of {PM_CALLS} calls"
    )
    rows, info = [], set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for persons in PERSONS:
            for texts in TEXTS:
                rng = np.random.default_rng([SEED, persons, texts[0]])
                y, n = simulate(rng, persons, texts, REFITS + 1)
                gy, gn = simulate(rng, persons, texts, GRID_BATCH)
                grid_s = time_grid(gy, gn)
                first, refit, fits = time_nutpie(y, n)
                marginal = time_pm_sample(beta_binomial_marginal, y, n, info)
                full = time_pm_sample(beta_binomial, y, n, info)
                grid_ci = pc.bayes.grid_intervals(y[1:], n[1:], confidence_level=LEVEL)
                ends, mcse = interval_ends(fits)
                gap = np.abs(ends - np.array([grid_ci.low, grid_ci.high]))
                diff = (gap.max(), (gap / mcse).max())
                flagged = (sum(f.flagged for f in fits), os.getloadavg()[0])
                rows.append((persons, texts, grid_s, first, refit, marginal, full, diff, flagged))

    print("\npm.sample defaults chose (model, sampler, chains, draws, tuning steps):")
    for item in sorted(info, key=str):
        print("  " + ", ".join(str(x) for x in item))

    print(
        f"\nGoals: grid < {GRID_GOAL_MS:g} ms per data set; nutpie < {NUTPIE_GOAL_MS:g} ms "
        "per refit (4 chains; else 2 chains)"
    )
    print(
        f"{'persons':>7}{'texts/p':>8}{'grid ms':>9}{'1st call':>9}{'refit ms':>9}"
        f"{'refit ms':>9}{'pm.sample':>10}{'pm.sample':>10}  {'grid':<8}nutpie"
    )
    print(
        f"{'':>7}{'':>8}{'/set':>9}{'s':>9}{'4 chains':>9}{'2 chains':>9}"
        f"{'marg. s':>10}{'full s':>10}"
    )
    for persons, texts, grid_s, first, refit, marginal, full, _, _ in rows:
        r4, r2 = refit[CHAINS].mean() * 1e3, refit[2].mean() * 1e3
        grid_ok = "met" if grid_s * 1e3 < GRID_GOAL_MS else "NOT met"
        if r4 < NUTPIE_GOAL_MS:
            nut_ok = "met"
        elif r2 < NUTPIE_GOAL_MS:
            nut_ok = "NOT met with 4 chains, met with 2"
        else:
            nut_ok = "NOT met (2 chains too)"
        print(
            f"{persons:>7}{'~' + str(texts[0]):>8}{grid_s * 1e3:>9.3f}{first:>9.2f}{r4:>9.1f}"
            f"{r2:>9.1f}{marginal:>10.2f}{full:>10.2f}  {grid_ok:<8}{nut_ok}"
        )

    print("\npm.sample defaults / nutpie with reuse (mean refit, 4 and 2 chains)")
    print(
        f"{'persons':>7}{'texts/p':>8}{'marginal':>10}{'':>8}{'full':>8}{'':>8}"
        f"  refit ms, 4 chains: median [min, max]"
    )
    print(f"{'':>7}{'':>8}{'/4 ch':>10}{'/2 ch':>8}{'/4 ch':>8}{'/2 ch':>8}")
    for persons, texts, _, _, refit, marginal, full, _, _ in rows:
        r = refit[CHAINS] * 1e3
        m4, m2 = refit[CHAINS].mean(), refit[2].mean()
        print(
            f"{persons:>7}{'~' + str(texts[0]):>8}{marginal / m4:>9.0f}x{marginal / m2:>7.0f}x"
            f"{full / m4:>7.0f}x{full / m2:>7.0f}x  {np.median(r):.1f} [{r.min():.1f}, "
            f"{r.max():.1f}]"
        )

    print(
        f"\nSanity, on the {REFITS} refit data sets: grid against nutpie (4 chains), 95% ETI "
        "ends of mu"
    )
    print(
        f"{'persons':>7}{'texts/p':>8}{'max |diff|':>12}{'max |diff|/MCSE':>17}{'flagged':>9}"
        "  load average after the design"
    )
    for persons, texts, *_, (diff, z), (flagged, load_after) in rows:
        print(
            f"{persons:>7}{'~' + str(texts[0]):>8}{diff:>12.4f}{z:>17.2f}"
            f"{f'{flagged}/{REFITS}':>9}  {load_after:.2f}"
        )
    print(
        f"\ntotal run time {time.perf_counter() - start:.0f} s; 1-minute load average "
        f"{load:.2f} at start, {os.getloadavg()[0]:.2f} at end ({os.cpu_count()} CPUs)"
    )


if __name__ == "__main__":
    main()
