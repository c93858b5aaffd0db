"""Coverage of the ROC AUC intervals of perfci.auc_ci: independent and nested texts.

Run from the repository root: ``python validation/auc_study.py [REPLICATIONS]``
(default 2000; about ten minutes on one core). It writes ``validation/AUC_STUDY.md``.

Scores are binormal: a text's score is ``b_person + delta * y + e`` with ``e ~ N(0, 1)``
and a person effect ``b ~ N(0, sigma_b^2)`` shared by the person's texts (0 for
independent texts); ``delta`` is set so that the population AUC, the chance that a random
positive text of the population scores above a random negative one, is
``Phi(delta / sqrt(2 (sigma_b^2 + 1)))`` = the target. With persons, each has a share of
positives drawn from a Beta with mean 0.3 and ICC 0.1, and 20 texts (or a lognormal
number with mean 20 and a CV of 1, at least 1). Every interval is computed from the
estimate and standard error :func:`perfci.auc_ci` returns, so the study scores the
library's own variance; the quantiles compared are z, t on I - 1 and t on G* - 1 df
(G* = (sum n_i)^2 / sum n_i^2), on the AUC and on the logit scale. Data sets without 2
positives and 2 negatives are skipped (perfci refuses them); the Monte-Carlo standard
error of a coverage near 0.95 from 2000 replications is 0.005.
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import special, stats

import perfci as pc

REPLICATIONS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
SEED = 20261201
OUT = Path(__file__).resolve().parent / "AUC_STUDY.md"


def covers(estimate, se, q, truth, logit):
    if not logit:
        return estimate - q * se <= truth <= estimate + q * se
    if not 0 < estimate < 1:
        return False  # no logit interval (perfci returns NaN)
    centre, spread = special.logit(estimate), q * se / (estimate * (1 - estimate))
    return special.expit(centre - spread) <= truth <= special.expit(centre + spread)


def independent(auc, n, rng):
    delta = stats.norm.ppf(auc) * np.sqrt(2)
    z = stats.norm.ppf(0.975)
    hits = {"delong": [], "delong_logit": []}
    for _ in range(REPLICATIONS):
        y = (rng.random(n) < 0.3).astype(int)
        if y.sum() < 2 or (1 - y).sum() < 2:
            continue
        s = delta * y + rng.normal(size=n)
        ci = pc.auc_ci(y, s, method="delong")
        hits["delong"].append(covers(ci.estimate, ci.se, z, auc, False))
        hits["delong_logit"].append(covers(ci.estimate, ci.se, z, auc, True))
    return {k: np.mean(v) for k, v in hits.items()}, len(hits["delong"])


def nested(auc, sigma_b, size_cv, persons, rng):
    delta = stats.norm.ppf(auc) * np.sqrt(2 * (sigma_b**2 + 1))
    z = stats.norm.ppf(0.975)
    keys = ("unclustered z", "z", "t I-1", "t G*-1", "logit z", "logit t I-1", "logit t G*-1")
    hits = {k: [] for k in keys}
    kappa = 1 / 0.1 - 1
    for _ in range(REPLICATIONS):
        if size_cv == 0:
            sizes = np.full(persons, 20)
        else:
            s2 = np.log(1 + size_cv**2)
            draw = rng.lognormal(np.log(20) - s2 / 2, np.sqrt(s2), persons)
            sizes = np.maximum(1, np.round(draw)).astype(int)
        person = np.repeat(np.arange(persons), sizes)
        share = rng.beta(0.3 * kappa, 0.7 * kappa, persons)[person]
        y = (rng.random(person.size) < share).astype(int)
        if y.sum() < 2 or (1 - y).sum() < 2:
            continue
        s = rng.normal(0, sigma_b, persons)[person] + delta * y + rng.normal(size=person.size)
        plain = pc.auc_ci(y, s, method="delong")
        ci = pc.auc_ci(y, s, groups=person, method="delong")
        g_star = sizes.sum() ** 2 / (sizes**2).sum()
        t_i = stats.t.ppf(0.975, persons - 1)
        t_g = stats.t.ppf(0.975, max(g_star - 1, 1))
        hits["unclustered z"].append(covers(plain.estimate, plain.se, z, auc, False))
        for label, q in (("z", z), ("t I-1", t_i), ("t G*-1", t_g)):
            hits[label].append(covers(ci.estimate, ci.se, q, auc, False))
            hits[f"logit {label}"].append(covers(ci.estimate, ci.se, q, auc, True))
    return {k: np.mean(v) for k, v in hits.items()}, len(hits["z"])


def main():
    # perfectly separated samples give the zero-width interval [1, 1] (counted as a miss)
    warnings.simplefilter("ignore", pc.DegenerateIntervalWarning)
    root = np.random.SeedSequence(SEED)
    streams = iter(root.spawn(1000))
    lines = [
        "# Coverage of the ROC AUC intervals",
        "",
        f"Made by `validation/auc_study.py` ({REPLICATIONS} replications per cell, seed "
        f"{SEED}); see its docstring for the design. Nominal level 0.95; the Monte-Carlo "
        "standard error of each coverage is about 0.005.",
        "",
        "## Independent texts (30% positives)",
        "",
        "| AUC | texts | DeLong | DeLong, logit scale |",
        "| --- | --- | --- | --- |",
    ]
    start = time.time()
    for auc in (0.7, 0.9, 0.95, 0.98):
        for n in (20, 40, 80, 200, 500):
            out, _ = independent(auc, n, np.random.default_rng(next(streams)))
            lines.append(f"| {auc} | {n} | {out['delong']:.3f} | {out['delong_logit']:.3f} |")
            print(lines[-1], f"({time.time() - start:.0f} s)", flush=True)
    lines += [
        "",
        "## Texts nested in persons (Obuchowski's clustered variance)",
        "",
        "sigma_b: SD of the person effect on the score (the noise has SD 1); size CV: of the "
        "texts per person (mean 20). `unclustered z` is DeLong's interval ignoring the "
        "persons; the other columns use the clustered standard error with the quantile "
        "named (`logit`: on the logit scale). perfci uses t on G* - 1.",
        "",
        "| AUC | sigma_b | size CV | persons | unclustered z | z | t I-1 | t G*-1 "
        "| logit z | logit t I-1 | logit t G*-1 |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for auc in (0.8, 0.95):
        for sigma_b in (0.0, 0.5, 1.0):
            for size_cv in (0.0, 1.0):
                for persons in (5, 10, 20, 40, 80):
                    rng = np.random.default_rng(next(streams))
                    out, _ = nested(auc, sigma_b, size_cv, persons, rng)
                    cells = " | ".join(f"{v:.3f}" for v in out.values())
                    lines.append(f"| {auc} | {sigma_b} | {size_cv} | {persons} | {cells} |")
                    print(lines[-1], f"({time.time() - start:.0f} s)", flush=True)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
