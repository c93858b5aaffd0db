"""Many classifiers on the same nested texts (kind ``many_nested``): family ``many``.

The population: persons with a share of reference positives (a Beta with ICC
``icc_prevalence``) and K classifiers; classifier k's recall for a person is a Beta
quantile (mean ``recall + k * recall_step``, ICC ``icc``) of a latent the K classifiers
share, so that a person hard for one is hard for all, and its specificity likewise (mean
``specificity``). On a text, classifier k is right when
``sqrt(agreement) e + sqrt(1 - agreement) e_k`` falls below the normal quantile of its
rate for the person (``e`` the text's difficulty, shared by the K classifiers): given the
person its rate is exactly that, and the K classifiers' errors on a text are dependent.
Sizes are unrelated to the rates, so each classifier's population metric is the metric of
its mean confusion matrix (:func:`many_truth`).

Each data set's per-person joint counts (:func:`perfci.many.joint_many`'s layout) go to
:func:`perfci.many.many_intervals` batched, and a data set is scored as covered when
every interval of its family covers its truth at once (family-wise coverage); the
half-width is the mean over the family. Targets: ``baseline`` (the K - 1 differences from
classifier 0), ``pairs`` (all pairs), ``ranks`` (:func:`perfci.many.rank_sets` against
the true ranks; half-width: half the mean rank set's length) and ``metrics`` (the K
metrics, the interval that holds for a classifier chosen on the same texts).
"""

from __future__ import annotations

import warnings

import numpy as np

from .persons import beta_quantile, cell_sizes
from .populations import person_parameters
from .schema import Scale, Suite

__all__ = ["draw_many", "many_cell", "many_truth"]


def _rates(params: dict, k: int) -> tuple[np.ndarray, float]:
    recall = np.clip(params["recall"] + np.arange(k) * params["recall_step"], 0.01, 0.99)
    return recall, float(params["specificity"])


def many_truth(params: dict, metric: str) -> np.ndarray:
    """Return each classifier's population metric, ``(K,)``."""
    from ..metrics import metric_values

    k = int(params["classifiers"])
    recall, specificity = _rates(params, k)
    p = params["prevalence"]
    cells = np.stack(
        [p * recall, np.full(k, (1 - p) * (1 - specificity)), p * (1 - recall),
         np.full(k, (1 - p) * specificity)],
        axis=-1,
    )  # fmt: skip
    return np.asarray(metric_values(cells, metric), dtype=float)


#: Replications drawn at once: the texts x classifiers latents of a chunk stay small.
_CHUNK = 100


def draw_many(params: dict, replications: int, rng: np.random.Generator) -> np.ndarray:
    """Per-person joint counts ``(replications, persons, 2 ** (K + 1))`` of K classifiers."""
    parts = [
        _draw_many(params, min(_CHUNK, replications - start), rng)
        for start in range(0, replications, _CHUNK)
    ]
    return np.concatenate(parts, axis=0)


def _draw_many(params: dict, replications: int, rng: np.random.Generator) -> np.ndarray:
    from scipy import special

    k = int(params["classifiers"])
    persons = int(params["persons"])
    shape = (replications, persons)
    sensitivity, specificity_latent = rng.standard_normal(shape), rng.standard_normal(shape)
    prevalence = beta_quantile(
        rng.standard_normal(shape), params["prevalence"], params["icc_prevalence"]
    )
    n = cell_sizes(params, sensitivity, rng, informative=0.0)
    recall, specificity = _rates(params, k)
    # each classifier's rate for each person, from the latent the K share
    p_recall = np.stack([beta_quantile(sensitivity, r, params["icc"]) for r in recall], -1)
    p_spec = beta_quantile(specificity_latent, specificity, params["icc"])[..., None]
    texts = int(n.max())
    present = np.arange(texts) < n[..., None]  # (reps, persons, texts)
    truth = rng.random(present.shape) < prevalence[..., None]
    rho = params["agreement"]
    latent = np.sqrt(rho) * rng.standard_normal(present.shape)[..., None] + np.sqrt(
        1 - rho
    ) * rng.standard_normal((*present.shape, k))
    rate = np.where(truth[..., None], p_recall[:, :, None, :], p_spec[:, :, None, :])
    right = latent < special.ndtri(np.clip(rate, 1e-12, 1 - 1e-12))
    positive = np.where(truth[..., None], right, ~right)
    bits = np.concatenate([truth[..., None], positive], axis=-1).astype(np.int64)
    code = bits @ (1 << np.arange(k, -1, -1))
    size = 1 << (k + 1)
    flat = (np.arange(replications * persons).reshape(shape)[..., None] * size + code)[present]
    counts = np.bincount(flat, minlength=replications * persons * size)
    return counts.reshape(replications, persons, size)


def _family(target: str, k: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    from ..many import difference_contrasts

    if target == "baseline":
        pairs = [(j, 0) for j in range(1, k)]
    elif target in ("pairs", "ranks"):
        pairs = [(a, b) for a in range(k) for b in range(a + 1, k)]
    else:
        return np.eye(k), []
    return difference_contrasts(pairs, k), pairs


def many_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score each method's family-wise coverage on data sets of K classifiers."""
    from ..many import many_intervals, rank_sets

    params = person_parameters(suite, cell)
    metric, k = params["metric"], int(params["classifiers"])
    truth = many_truth(params, metric)
    true_rank = 1 + (truth[None, :] > truth[:, None]).sum(1)  # ties share the best rank
    data_rng = np.random.default_rng(seed)
    joint = draw_many(params, scale.replications, data_rng)
    out = np.empty((len(suite.methods), 6))
    for i, m in enumerate(suite.methods):
        target = m.options["target"]
        contrasts, pairs = _family(target, k)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = many_intervals(
                joint,
                k,
                metric,
                contrasts,
                nested=True,
                confidence_level=suite.confidence_level,
                adjust=m.options["adjust"],
            )
        if target == "ranks":
            low, high = rank_sets(found["low"], found["high"], pairs, k)
            target_value = np.broadcast_to(true_rank, low.shape).astype(float)
            low, high = low.astype(float), high.astype(float)
            valid = np.ones(low.shape[0], dtype=bool)
        else:
            low, high = found["low"], found["high"]
            target_value = np.broadcast_to(contrasts @ truth, low.shape)
            valid = np.isfinite(low).all(-1) & np.isfinite(high).all(-1)
        covered = ((low <= target_value) & (target_value <= high)).all(-1)
        below = (high < target_value).any(-1)
        above = (low > target_value).any(-1)
        half = ((high - low) / 2).mean(-1)
        out[i] = [
            np.sum(covered & valid),
            np.sum(below & valid),
            np.sum(above & valid),
            np.sum(half[valid]),
            np.sum(valid),
            0.0,
        ]
    return out
