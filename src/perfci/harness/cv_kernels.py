r"""A cross-validated classifier on nested texts (kind ``cv_nested``): family ``cv``.

The population: persons whose texts have d features, :math:`x = \mu_y + \sqrt{\rho}\,
u_i + \sqrt{1 - \rho}\, \varepsilon`, with class means :math:`\mu_1 = -\mu_0 = (\delta /
2) e_1`, a person effect :math:`u_i \sim N(0, I_d)` shared by the person's texts (ICC
:math:`\rho`, ``icc``) and :math:`\varepsilon \sim N(0, I_d)`; each text is a reference
positive with probability ``prevalence``. The fitting procedure is the nearest-centroid
rule: from a training set, :math:`w = \hat m_1 - \hat m_0` (the class means of its texts)
and a text is coded positive when :math:`w \cdot x > w \cdot (\hat m_1 + \hat m_0) / 2`.
A rule's population recall is :math:`\Phi((w \cdot \mu_1 - c) / \lVert w \rVert)` and its
specificity :math:`\Phi((c - w \cdot \mu_0) / \lVert w \rVert)` (a new person's text has
variance 1 in every direction), so every model's population metric is exact, and so is
the estimand of each method:

- ``procedure``: the metric of the procedure's expected confusion matrix (the population
  cells of the rule fit on a training set, averaged over training sets; for recall the
  mean recall of the rules) at the training size the method names: the persons of K - 1
  folds (out-of-fold methods; the folds' sizes as the data's) or all persons (nested
  cross-validation), from :data:`TRUTH_TRAINING_SETS` independent training sets;
- ``fitted_model``: the rule fit on all of this data set's texts (a per-data-set truth).

The learner is fit from per-person sufficient statistics (class sums and counts), so
every fold's, pair's and repeat's model of every data set is one array operation; the
counts go to :func:`perfci.splits.cv_counts` and :func:`perfci.splits.nested_cv_counts`,
batched. Folds are folds of persons, drawn as :func:`perfci.splits.grouped_folds` draws
them (balanced in persons); the ordinary cross-validations of the nested scheme's bias
correction are the out-of-fold repeats.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import special

from .persons import cell_sizes
from .populations import person_parameters
from .schema import Scale, Suite

__all__ = ["TRUTH_TRAINING_SETS", "cv_cell", "cv_truth", "draw_cv"]

#: Training sets drawn for the procedure's truth (its Monte-Carlo error is ~1e-4).
TRUTH_TRAINING_SETS = 20_000
_CHUNK = 25


def _rule_cells(w: np.ndarray, c: np.ndarray, params: dict) -> np.ndarray:
    """Return the population cells ``(..., 4)`` of the rules ``w . x > c`` (w ``(..., d)``)."""
    half = params["separation"] / 2
    norm = np.sqrt((w * w).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = special.ndtr((w[..., 0] * half - c) / norm)
        specificity = special.ndtr((c + w[..., 0] * half) / norm)
    p = params["prevalence"]
    return np.stack(
        [p * recall, (1 - p) * (1 - specificity), p * (1 - recall), (1 - p) * specificity],
        axis=-1,
    )


def _rule_metric(w: np.ndarray, c: np.ndarray, params: dict, metric: str) -> np.ndarray:
    """Return the population metric of the rules ``w . x > c``."""
    from ..metrics import metric_values

    return np.asarray(metric_values(_rule_cells(w, c, params), metric), dtype=float)


def _rule(s1: np.ndarray, n1: np.ndarray, s0: np.ndarray, n0: np.ndarray):
    """Return the nearest-centroid rule of class sums ``(..., d)`` and counts ``(...)``."""
    # an empty class (only the unused diagonal of the pair models) gets a zero mean
    m1 = np.divide(s1, n1[..., None], out=np.zeros(s1.shape), where=n1[..., None] > 0)
    m0 = np.divide(s0, n0[..., None], out=np.zeros(s0.shape), where=n0[..., None] > 0)
    w = m1 - m0
    return w, (w * (m1 + m0)).sum(-1) / 2


def _person_sums(params: dict, sizes: np.ndarray, rng: np.random.Generator):
    """Class sums and counts of persons of these sizes, without their texts."""
    d, rho = int(params["features"]), params["icc"]
    n1 = rng.binomial(sizes, params["prevalence"])
    n0 = sizes - n1
    u = rng.standard_normal((*sizes.shape, d)) * np.sqrt(rho)
    mu = np.zeros(d)
    mu[0] = params["separation"] / 2
    noise = np.sqrt(1 - rho)
    s1 = n1[..., None] * (mu + u) + noise * np.sqrt(n1)[..., None] * rng.standard_normal(u.shape)
    s0 = n0[..., None] * (u - mu) + noise * np.sqrt(n0)[..., None] * rng.standard_normal(u.shape)
    return s1, n1, s0, n0


def _fold_sizes(persons: int, folds: int) -> np.ndarray:
    return persons // folds + (np.arange(folds) < persons % folds)


def cv_truth(params: dict, metric: str, rng: np.random.Generator) -> dict[str, float]:
    """Return the procedure's metric at the out-of-fold and at the full training size.

    The procedure's metric is that of its expected confusion matrix: the population cells
    of the rule fit on a random training set, averaged over training sets (for recall,
    specificity and accuracy the mean metric of the rules; for F1 or precision the metric
    of a text coded by the rule of a random training set, what pooled out-of-fold labels
    estimate).
    """
    from ..metrics import metric_values

    persons, k = int(params["persons"]), int(params["folds"])
    out = {}
    for name, sizes in (("oof", persons - _fold_sizes(persons, k)), ("full", [persons])):
        cells = np.zeros(4)
        for g in np.unique(sizes):
            shape = (TRUTH_TRAINING_SETS, int(g))
            n = cell_sizes(params, rng.standard_normal(shape), rng, informative=0.0)
            s1, n1, s0, n0 = (a.sum(1) for a in _person_sums(params, n, rng))
            w, c = _rule(s1, n1, s0, n0)
            cells += np.nanmean(_rule_cells(w, c, params), axis=0) * np.mean(sizes == g)
        out[name] = float(metric_values(cells, metric))
    return out


def _texts(params: dict, reps: int, rng: np.random.Generator):
    """Texts of a chunk: features ``(B, G, T, d)``, labels and presence ``(B, G, T)``."""
    persons, d, rho = int(params["persons"]), int(params["features"]), params["icc"]
    n = cell_sizes(params, rng.standard_normal((reps, persons)), rng, informative=0.0)
    texts = int(n.max())
    present = np.arange(texts) < n[..., None]
    y = (rng.random(present.shape) < params["prevalence"]) & present
    mu = params["separation"] / 2
    x = np.sqrt(1 - rho) * rng.standard_normal((*present.shape, d))
    x += np.sqrt(rho) * rng.standard_normal((reps, persons, 1, d))
    x[..., 0] += np.where(y, mu, -mu)
    x *= present[..., None]
    return x, y, present


def _cells(score: np.ndarray, y: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Per-person counts ``(..., 4)`` of the texts' scores (last axis texts)."""
    positive = score > 0
    return np.stack(
        [
            (y & positive).sum(-1),
            (~y & positive & present).sum(-1),
            (y & ~positive).sum(-1),
            (~y & ~positive & present).sum(-1),
        ],
        axis=-1,
    )


def _random_folds(reps: int, repeats: int, persons: int, k: int, rng) -> np.ndarray:
    order = np.argsort(rng.random((reps, repeats, persons)), axis=-1)
    folds = np.empty_like(order)
    np.put_along_axis(folds, order, np.arange(persons) % k, axis=-1)
    return folds


def draw_cv(params: dict, reps: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One chunk of data sets: every method's counts and the fitted model's truth."""
    persons, k = int(params["persons"]), int(params["folds"])
    x, y, present = _texts(params, reps, rng)
    s1 = np.einsum("bgtd,bgt->bgd", x, y)
    s0 = np.einsum("bgtd,bgt->bgd", x, present & ~y)
    n1, n0 = y.sum(-1), (present & ~y).sum(-1)
    w, c = _rule(s1.sum(1), n1.sum(1), s0.sum(1), n0.sum(1))
    out: dict[str, np.ndarray] = {"fitted_w": w, "fitted_c": c}
    # out-of-fold: repeats x folds models, each text scored by its person's fold's model
    folds = _random_folds(reps, int(params["repeats"]), persons, k, rng)
    onehot = (folds[..., None] == np.arange(k)).astype(float)  # (B, R, G, K)
    fold_s1 = np.einsum("brgk,bgd->brkd", onehot, s1)
    fold_s0 = np.einsum("brgk,bgd->brkd", onehot, s0)
    fold_n1 = np.einsum("brgk,bg->brk", onehot, n1)
    fold_n0 = np.einsum("brgk,bg->brk", onehot, n0)
    total = (s1.sum(1)[:, None, None], n1.sum(1)[:, None, None])
    totals0 = (s0.sum(1)[:, None, None], n0.sum(1)[:, None, None])
    wk, ck = _rule(
        total[0] - fold_s1, total[1] - fold_n1, totals0[0] - fold_s0, totals0[1] - fold_n0
    )
    w_person = np.einsum("brgk,brkd->brgd", onehot, wk)
    c_person = np.einsum("brgk,brk->brg", onehot, ck)
    score = np.einsum("bgtd,brgd->brgt", x, w_person) - c_person[..., None]
    out["oof_counts"] = _cells(score, y[:, None], present[:, None])  # (B, R, G, 4)
    out["oof_folds"] = folds
    # nested: models fit without each pair of folds, scoring both
    nested = int(params["nested_repeats"])
    folds_n = _random_folds(reps, nested, persons, k, rng)
    onehot = (folds_n[..., None] == np.arange(k)).astype(float)
    f_s1 = np.einsum("brgk,bgd->brkd", onehot, s1)
    f_s0 = np.einsum("brgk,bgd->brkd", onehot, s0)
    f_n1 = np.einsum("brgk,bg->brk", onehot, n1)
    f_n0 = np.einsum("brgk,bg->brk", onehot, n0)
    pair = lambda a: a[..., :, None, :] + a[..., None, :, :]  # noqa: E731
    pair_n = lambda a: a[..., :, None] + a[..., None, :]  # noqa: E731
    wp, cp = _rule(
        total[0][..., None, :] - pair(f_s1),
        total[1][..., None] - pair_n(f_n1),
        totals0[0][..., None, :] - pair(f_s0),
        totals0[1][..., None] - pair_n(f_n0),
    )  # (B, Rn, K, K, d): the model fit without folds i and j
    # each person is scored by the K models fit without its fold and fold j
    w_pj = np.einsum("brgk,brkjd->brgjd", onehot, wp)
    c_pj = np.einsum("brgk,brkj->brgj", onehot, cp)
    score = np.einsum("bgtd,brgjd->brgjt", x, w_pj) - c_pj[..., None]
    cells = _cells(score, y[:, None, :, None], present[:, None, :, None])  # (B, Rn, G, K, 4)
    own = onehot.astype(bool)  # the diagonal: the person's own fold is not a second fold
    cells = np.where(own[..., None], 0, cells)
    out["pair_counts"] = np.einsum("brgi,brgjc->brijc", onehot, cells)
    return out


def cv_cell(suite: Suite, scale: Scale, cell: dict, seed) -> np.ndarray:
    """Score each method's coverage of its estimand on cross-validated data sets."""
    from ..splits import cv_counts, nested_cv_counts

    params = person_parameters(suite, cell)
    metric = params["metric"]
    data_seed, truth_seed = seed.spawn(2)
    truth = cv_truth(params, metric, np.random.default_rng(truth_seed))
    rng = np.random.default_rng(data_seed)
    parts = [
        draw_cv(params, min(_CHUNK, scale.replications - start), rng)
        for start in range(0, scale.replications, _CHUNK)
    ]
    data = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    fitted_truth = _rule_metric(data["fitted_w"], data["fitted_c"], params, metric)
    out = np.empty((len(suite.methods), 6))
    for i, m in enumerate(suite.methods):
        method, target = m.options["method"], m.options["target"]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if method == "nested_cv":
                found = nested_cv_counts(
                    data["pair_counts"],
                    data["oof_counts"],
                    metric,
                    confidence_level=suite.confidence_level,
                )
            else:
                found = cv_counts(
                    data["oof_counts"],
                    data["oof_folds"],
                    metric,
                    method=method,
                    confidence_level=suite.confidence_level,
                )
        if target == "fitted_model":
            value = fitted_truth
        else:
            value = np.full(fitted_truth.shape, truth["full" if method == "nested_cv" else "oof"])
        low, high = np.asarray(found.low), np.asarray(found.high)
        valid = np.isfinite(low) & np.isfinite(high) & np.isfinite(value)
        out[i] = (
            np.sum(valid & (low <= value) & (value <= high)),
            np.sum(valid & (high < value)),
            np.sum(valid & (low > value)),
            np.sum(((high - low) / 2)[valid]),
            np.sum(valid),
            0.0,
        )
    return out
