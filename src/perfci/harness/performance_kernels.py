r"""Recall that depends on covariates (kind ``covariates_nested``): family ``performance``.

The population: persons, a share of them "experienced" (a person-level covariate), each
text "short" or not (a text-level covariate, probability ``text_share``); a reference
positive text is coded positive with probability

.. math:: \operatorname{logit}^{-1}(\beta_0 + \beta_e\, \mathrm{experienced} +
   \beta_s\, \mathrm{short} + u_i), \qquad u_i \sim N(0, \sigma^2),

(``intercept``, ``person_effect``, ``text_effect``, ``person_sd``). A sample holds
``sample_share`` experienced persons (a fixed number, as a sample drawn by stratum), the
corpus ``corpus_share`` of them: the sample's mix differs from the corpus's. The truths,
for new persons (by Gauss-Hermite quadrature over u):

- ``coefficient``: :math:`\beta_e`, on the logit scale;
- ``effect``: the difference in recall between experienced and other persons over the
  texts' mix of short ones;
- ``corpus``: the recall of the corpus's reference positives (its mix of experienced
  persons and short texts).

Methods: ``bayes`` (:func:`perfci.bayes.performance_model` with both covariates, one fit
per data set serving every target), ``unadjusted`` (the interval :func:`perfci.metric_ci`
recommends for the sample's nested recall, against the corpus's) and
``weighted`` (:func:`perfci.weighted_ci` of the design with the experienced persons as a
stratum weighted to the corpus's share, persons as clusters).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from numpy.polynomial.hermite_e import hermegauss
from scipy import special

from .persons import cell_sizes
from .populations import person_parameters
from .schema import Scale, Suite

__all__ = ["draw_performance", "performance_cell", "performance_truth"]

_NODES, _WEIGHTS = hermegauss(40)
_WEIGHTS = _WEIGHTS / np.sqrt(2 * np.pi)


def _new_person_rate(eta: float, sd: float) -> float:
    return float(np.sum(_WEIGHTS * special.expit(eta + sd * _NODES)))


def performance_truth(params: dict) -> dict[str, float]:
    """Return the coefficient, the effect and the corpus recall (module notes)."""
    b0, be, bs = params["intercept"], params["person_effect"], params["text_effect"]
    sd, short = params["person_sd"], params["text_share"]

    def recall(experienced: float) -> float:
        return short * _new_person_rate(b0 + be * experienced + bs, sd) + (
            1 - short
        ) * _new_person_rate(b0 + be * experienced, sd)

    corpus = params["corpus_share"]
    return {
        "coefficient": float(be),
        "effect": recall(1.0) - recall(0.0),
        "corpus": corpus * recall(1.0) + (1 - corpus) * recall(0.0),
    }


def draw_performance(params: dict, replications: int, rng: np.random.Generator) -> dict:
    """Texts of `replications` data sets: per-text arrays ``(R, texts)``, padded."""
    persons = int(params["persons"])
    experienced = np.zeros(persons, dtype=bool)
    experienced[: int(round(params["sample_share"] * persons))] = True
    shape = (replications, persons)
    n = cell_sizes(params, rng.standard_normal(shape), rng, informative=0.0)
    texts = int(n.max())
    present = np.arange(texts) < n[..., None]  # (R, G, T)
    truth = (rng.random(present.shape) < params["prevalence"]) & present
    short = rng.random(present.shape) < params["text_share"]
    u = params["person_sd"] * rng.standard_normal(shape)
    eta = (
        params["intercept"]
        + params["person_effect"] * experienced[None, :, None]
        + params["text_effect"] * short
        + u[..., None]
    )
    hit = rng.random(present.shape) < special.expit(eta)
    negative_right = rng.random(present.shape) < params["specificity"]
    pred = np.where(truth, hit, ~negative_right) & present
    person = np.broadcast_to(np.arange(persons)[None, :, None], present.shape)
    cell = np.where(truth, np.where(pred, 0, 2), np.where(pred, 1, 3))
    return {
        "present": present,
        "truth": truth,
        "pred": pred,
        "short": short,
        "experienced": np.broadcast_to(experienced[None, :, None], present.shape),
        "person": person,
        "cell": cell,
    }


def _bayes_ends(params: dict, data: dict, options: dict, seed) -> dict[str, np.ndarray]:
    """Fit the performance model to every data set; return each target's ends and flags."""
    from ..bayes import BayesianDiagnosticsWarning, performance_model

    reps = data["truth"].shape[0]
    ends = {t: np.full((reps, 2), np.nan) for t in ("coefficient", "effect", "corpus")}
    flagged = np.zeros(reps, dtype=bool)
    corpus, short = params["corpus_share"], params["text_share"]
    target = pd.DataFrame(
        {
            "experienced": [1, 1, 0, 0],
            "short": [1, 0, 1, 0],
            "weight": [corpus * short, corpus * (1 - short), (1 - corpus) * short,
                       (1 - corpus) * (1 - short)],
        }
    )  # fmt: skip
    seeds = np.random.default_rng(seed).integers(2**31 - 1, size=reps)
    for r in range(reps):  # one MCMC fit per data set
        keep = data["present"][r].ravel()
        covariates = pd.DataFrame(
            {
                "experienced": data["experienced"][r].ravel()[keep].astype(int),
                "short": data["short"][r].ravel()[keep].astype(int),
            }
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit = performance_model(
                data["truth"][r].ravel()[keep].astype(int),
                data["pred"][r].ravel()[keep].astype(int),
                "recall",
                groups=data["person"][r].ravel()[keep],
                covariates=covariates,
                draws=int(options["draws"]),
                tune=1000,
                chains=int(options["chains"]),
                rng=int(seeds[r]),
            )
        flagged[r] = fit.flagged or any(
            issubclass(w.category, BayesianDiagnosticsWarning) for w in caught
        )
        row = fit.coefficients().set_index("term").loc["experienced"]
        ends["coefficient"][r] = row["low"], row["high"]
        effect = fit.effects("experienced").iloc[0]
        ends["effect"][r] = effect["low"], effect["high"]
        post = fit.poststratify(target)
        ends["corpus"][r] = post.low, post.high
    return {**ends, "flagged": flagged}


def _frequentist_ends(
    params: dict, data: dict, method: str, scale: Scale, level: float, rng
) -> np.ndarray:
    """Return the unadjusted or design-weighted interval of the corpus recall, batched."""
    from ..sample_design import units_design, weighted_ci
    from .kernels import recommended_ends

    reps, persons = data["truth"].shape[:2]
    if method == "unadjusted":  # what perfci.metric_ci recommends, per data set
        onehot = data["cell"][..., None] == np.arange(4)
        counts = (onehot & data["present"][..., None]).sum(-2)  # (R, G, 4)
        return np.stack(recommended_ends("recall", counts, scale, level, rng), -1)
    flat = (reps, -1)
    present = data["present"].reshape(flat)
    stratum = data["experienced"].reshape(flat).astype(np.int64)
    share = params["sample_share"]
    corpus = params["corpus_share"]
    # each text stands for the corpus share of its stratum over the sample's
    weight = np.where(stratum == 1, corpus / share, (1 - corpus) / (1 - share))
    cell = np.where(present, data["cell"].reshape(flat), 3)
    weight = np.where(present, weight, 0.0)  # padding: a true negative of weight 0
    person = data["person"].reshape(flat)
    design = units_design(
        cell,
        weight,
        stratum,
        strata=np.array([0, 1]),
        unit=stratum * persons + person,
        person=person,
    )
    ci = weighted_ci(design, "recall", confidence_level=level)
    return np.stack([np.asarray(ci.low), np.asarray(ci.high)], -1)


def performance_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score each method's coverage of its target on data sets of covariate-driven recall."""
    params = person_parameters(suite, cell)
    truth = performance_truth(params)
    data_seed, fit_seed, method_seed = seed.spawn(3)
    data = draw_performance(params, scale.replications, np.random.default_rng(data_seed))
    bayes = [m for m in suite.methods if m.options["method"] == "bayes"]
    fitted = _bayes_ends(params, data, bayes[0].options, fit_seed) if bayes else None
    out = np.empty((len(suite.methods), 6))
    for i, m in enumerate(suite.methods):
        method, target = m.options["method"], m.options["target"]
        flags = 0.0
        if method == "bayes":
            assert fitted is not None
            ends = fitted[target]
            flags = float(fitted["flagged"].sum())
        else:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ends = _frequentist_ends(
                    params,
                    data,
                    method,
                    scale,
                    suite.confidence_level,
                    np.random.default_rng(method_seed),
                )
        value = truth[target]
        low, high = ends[:, 0], ends[:, 1]
        valid = np.isfinite(low) & np.isfinite(high)
        out[i] = (
            np.sum(valid & (low <= value) & (value <= high)),
            np.sum(valid & (high < value)),
            np.sum(valid & (low > value)),
            np.sum(((high - low) / 2)[valid]),
            np.sum(valid),
            flags,
        )
    return out
