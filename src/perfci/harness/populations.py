"""Populations the harness simulates from, and how samples are drawn from them.

The paper's finite population and its sampling designs (``nested_finite``), confusion
matrices of independent texts (``confusion``), and persons drawn from an infinite
population (``nested``, ``nested_confusion``, ``paired_nested``, ``subgroups_nested``,
``scored_nested``), with their truths. The persons' rates and sizes are
:mod:`~perfci.harness.persons`'; the crossed designs (``runs_nested``,
``annotators_nested``) are :mod:`~perfci.harness.crossed_populations`', whose public names
this module re-exports.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from .crossed_populations import (
    QUADRATURE_NODES,
    AnnotatorsSample,
    RunsSample,
    annotator_cells,
    annotator_intercepts,
    annotator_majority_cells,
    annotators_truth,
    draw_annotators,
    draw_runs,
    majority_cells,
    run_cells,
    run_intercepts,
    runs_truth,
)
from .kinds import POPULATION_SCHEMA
from .persons import beta_quantile, cell_sizes, person_sizes

if TYPE_CHECKING:
    from .schema import Suite

__all__ = [
    "QUADRATURE_NODES",
    "SAMPLINGS",
    "TRUTH_PERSONS",
    "TRUTH_SEED",
    "AnnotatorsSample",
    "RunsSample",
    "annotator_cells",
    "annotator_intercepts",
    "annotator_majority_cells",
    "annotators_truth",
    "beta_quantile",
    "confusion_probabilities",
    "draw_annotators",
    "draw_confusion",
    "draw_nested",
    "draw_paired",
    "draw_runs",
    "draw_scored",
    "majority_cells",
    "nested_population",
    "nested_sample",
    "paired_truth",
    "person_parameters",
    "person_sizes",
    "population_of",
    "population_truth",
    "run_cells",
    "run_intercepts",
    "runs_truth",
    "scored_truth",
]


# Texts per person in the paper's nested sampling designs: mean, SD (minimum 1).
SAMPLINGS = {"small": (3.0, 1.0), "moderate": (30.0, 5.0)}


@functools.cache
def nested_population(persons: int, texts: int, mean: float, sd: float, seed: int):
    """Build the paper's finite nested population: successes per person, and the truth.

    Person rates p_i ~ Beta with the given mean and SD; each of ``texts`` outcomes of
    person i is Bernoulli(p_i). Returns (successes per person, the text-weighted rate of
    the whole population: the mean of all persons x texts outcomes).
    """
    rng = np.random.default_rng(seed)
    k = mean * (1 - mean) / sd**2 - 1
    rates = rng.beta(mean * k, (1 - mean) * k, persons)
    successes = rng.binomial(texts, rates)
    return successes, successes.sum() / (persons * texts)


def population_of(suite: Suite, cell: dict):
    """Return the cell's finite population (an ``icc`` dim sets sd^2 = icc m (1 - m))."""
    pop = suite.population
    sd = pop.get("sd")
    if "icc" in cell:
        sd = float(np.sqrt(cell["icc"] * pop["mean"] * (1 - pop["mean"])))
    return nested_population(pop["persons"], pop["texts_per_person"], pop["mean"], sd, pop["seed"])


def nested_sample(suite: Suite, cell: dict, replications: int, rng: np.random.Generator):
    """Per-person successes and texts (R, m) of R samples of m persons.

    Design ``"srs"`` samples ``population.srs_texts`` texts at random from the whole
    population instead; persons are then those hit (texts = 0 for the others).
    """
    pop = suite.population
    totals, _ = population_of(suite, cell)
    if cell["sampling"] == "srs":
        per_person = rng.multivariate_hypergeometric(
            np.full(totals.size, pop["texts_per_person"]),
            pop.get("srs_texts", 1200),
            size=replications,
        )
        y = rng.hypergeometric(
            np.broadcast_to(totals, per_person.shape), pop["texts_per_person"] - totals, per_person
        )
        return y, per_person
    m = int(cell["persons"])
    # m persons without replacement: the m smallest of uniform keys
    keys = rng.random((replications, totals.size))
    chosen = np.argpartition(keys, m - 1, axis=1)[:, :m]
    mean, sd = SAMPLINGS[cell["sampling"]]
    texts = np.clip(
        np.rint(rng.normal(mean, sd, (replications, m))), 1, pop["texts_per_person"]
    ).astype(np.int64)
    good = totals[chosen]
    y = rng.hypergeometric(good, pop["texts_per_person"] - good, texts)
    return y, texts


def confusion_probabilities(prevalence: float, precision: float, recall: float) -> np.ndarray:
    """Cell probabilities [tp, fp, fn, tn] of a population with these three rates."""
    tp = prevalence * recall
    fn = prevalence - tp
    fp = tp * (1 - precision) / precision
    tn = 1 - tp - fn - fp
    if tn < 0:
        raise ValueError(
            f"no population has prevalence {prevalence}, precision {precision} and recall "
            f"{recall}: the classifier's positives would exceed all texts."
        )
    return np.array([tp, fp, fn, tn])


# ---------------------------------------------------------------- infinite populations
#
# Kinds "nested" and "nested_confusion" draw fresh persons in every data set. A person
# has a latent normal z; their rate is the Beta quantile of Phi(z) (a Gaussian copula),
# so that their number of texts can depend on the same z ("informative" cluster size)
# while the rate keeps its Beta marginal with the chosen mean and ICC.

#: Persons simulated once to compute the truth where sizes are informative.
TRUTH_PERSONS = 2_000_000
#: Seed of that simulation (the same truth in every cell and run).
TRUTH_SEED = 20261201


def person_parameters(suite: Suite, cell: dict) -> dict:
    """Every parameter of a cell: the schema's defaults, the population's keys, the cell."""
    kind = suite.population["kind"]
    schema = POPULATION_SCHEMA[kind]
    params = {name: f.default for name, f in schema.keys.items()}
    params.update({k: v for k, v in suite.population.items() if k != "kind"})
    params.update(cell)
    if "icc_prevalence" in params and params["icc_prevalence"] is None:
        params["icc_prevalence"] = params["icc"]
    return params


def _nested_persons(params: dict, shape: tuple[int, ...], rng: np.random.Generator):
    """Rates and texts per person of persons of a ``nested`` population."""
    latent = rng.standard_normal(shape)
    return beta_quantile(latent, params["rate"], params["icc"]), cell_sizes(params, latent, rng)


def draw_nested(params: dict, shape: tuple[int, ...], rng: np.random.Generator):
    """Per-person successes and texts of persons of a ``nested`` population."""
    rates, n = _nested_persons(params, shape, rng)
    return rng.binomial(n, rates), n


def _class_means(params: dict) -> tuple[np.ndarray, np.ndarray]:
    """Mean class shares (K,) and mean confusion rows (K, K) of a confusion population."""
    k = int(params["classes"])
    shares = np.full(k, (1 - params["prevalence"]) / (k - 1))
    shares[0] = params["prevalence"]
    diagonal = np.full(k, params["specificity"])
    diagonal[0] = params["recall"]
    rows = np.repeat(((1 - diagonal) / (k - 1))[:, None], k, axis=1)
    np.fill_diagonal(rows, diagonal)
    return shares, rows


def _dirichlet(rng: np.random.Generator, means: np.ndarray, icc: float, shape) -> np.ndarray:
    """Shares with these means and ICC 1 / (concentration + 1) (constant for ICC 0)."""
    if icc == 0:
        return np.broadcast_to(means, (*shape, means.size)).copy()
    return rng.dirichlet(means * (1 / icc - 1), size=shape)


def _confusion_persons(params: dict, shape: tuple[int, ...], rng: np.random.Generator):
    """Persons of a confusion population: class shares (..., K), rows (..., K, K), sizes."""
    shares, rows = _class_means(params)
    k = shares.size
    latent = rng.standard_normal(shape)
    person_rows = np.empty((*shape, k, k))
    for c in range(k):  # classes, not data sets: at most three
        z = latent if c == 0 else rng.standard_normal(shape)
        diagonal = beta_quantile(z, rows[c, c], params["icc"])
        others = [d for d in range(k) if d != c]
        split = _dirichlet(rng, rows[c, others] / rows[c, others].sum(), params["icc"], shape)
        person_rows[..., c, c] = diagonal
        person_rows[..., c, others] = (1 - diagonal)[..., None] * split
    person_shares = _dirichlet(rng, shares, params["icc_prevalence"], shape)
    return person_shares, person_rows, cell_sizes(params, latent, rng)


def draw_confusion(params: dict, shape: tuple[int, ...], rng: np.random.Generator):
    """Per-person confusion matrices (..., K, K) [true, predicted] of persons.

    A person's class shares are Dirichlet (ICC ``icc_prevalence``); for each true class
    their row of predicted shares has a Beta diagonal with the ICC ``icc`` (through the
    latent z for the first class, which the size may depend on) and the rest of the row
    Dirichlet-split over the other classes.
    """
    person_shares, person_rows, n = _confusion_persons(params, shape, rng)
    per_class = rng.multinomial(n, person_shares)
    return rng.multinomial(per_class, person_rows)


@functools.cache
def _truth_cached(kind: str, items: tuple) -> np.ndarray:
    """Return the population's text-weighted rate, or its pooled confusion matrix."""
    params = dict(items)
    informative = params["informative"] != 0 and params["size_cv"] != 0
    if kind == "nested":
        if not informative:
            return np.asarray(params["rate"])
    else:
        if not informative:
            shares, rows = _class_means(params)
            return shares[:, None] * rows
    # E[n p] / E[n] by simulating many persons (chunks bound the memory); with rates
    # rather than outcomes: the expectation of the outcomes given the persons
    rng = np.random.default_rng(TRUTH_SEED)
    chunk = 200_000
    weighted, texts = 0.0, 0.0
    for _ in range(TRUTH_PERSONS // chunk):  # chunks of one fixed simulation
        if kind == "nested":
            rates, n = _nested_persons(params, (chunk,), rng)
            weighted = weighted + np.sum(n * rates)
        else:
            person_shares, person_rows, n = _confusion_persons(params, (chunk,), rng)
            weighted = weighted + np.einsum("i,ic,icd->cd", n, person_shares, person_rows)
        texts += n.sum()
    return np.asarray(weighted / texts)


def population_truth(kind: str, params: dict) -> np.ndarray:
    """Truth of a cell of an infinite population: a rate, or a pooled confusion matrix."""
    keys = (
        ("rate", "icc", "texts_per_person", "size_cv", "min_texts", "informative")
        if kind == "nested"
        else (
            "prevalence",
            "icc_prevalence",
            "recall",
            "specificity",
            "classes",
            "icc",
            "texts_per_person",
            "size_cv",
            "min_texts",
            "informative",
        )
    )
    return _truth_cached(kind, tuple((k, params[k]) for k in keys))


def draw_paired(params: dict, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Per-person joint counts (..., 8) of two classifiers A and B on the same texts.

    Cell j = 4 t + 2 a + b for reference t and labels a, b (1 = positive), the layout of
    :func:`perfci.compare`. A person's recall (and specificity) under A and under B are
    Beta quantiles of one shared latent, so the persons that are hard for A are hard for
    B; on each text the two are correct together with probability
    ``agreement min(pA, pB) + (1 - agreement) pA pB``.
    """
    sensitivity, specificity = rng.standard_normal(shape), rng.standard_normal(shape)
    prevalence = beta_quantile(
        rng.standard_normal(shape), params["prevalence"], params["icc_prevalence"]
    )
    n = cell_sizes(params, sensitivity, rng, informative=0.0)  # unrelated to the rates
    positives = rng.binomial(n, prevalence)
    out = np.zeros((*shape, 8), dtype=np.int64)
    rho = params["agreement"]
    # reference positive: correct is a = 1; reference negative: correct is a = 0
    for latent, texts, key, cells in (
        (sensitivity, positives, "recall", (7, 6, 5, 4)),
        (specificity, n - positives, "specificity", (0, 1, 2, 3)),
    ):
        p_a = beta_quantile(latent, params[f"{key}_a"], params["icc"])
        p_b = beta_quantile(latent, params[f"{key}_b"], params["icc"])
        both = rho * np.minimum(p_a, p_b) + (1 - rho) * p_a * p_b
        probs = np.stack([both, p_a - both, p_b - both, 1 - p_a - p_b + both], axis=-1)
        out[..., list(cells)] = rng.multinomial(texts, np.clip(probs, 0, 1))
    return out


def paired_truth(params: dict, metric: str) -> float:
    """Return the population difference metric(A) - metric(B) of a paired population.

    Sizes are unrelated to the persons' rates, so the text-weighted pooled confusion
    matrix of each classifier is its mean matrix.
    """
    from ..metrics import metric_values

    prevalence = params["prevalence"]
    values = []
    for side in ("a", "b"):
        recall, specificity = params[f"recall_{side}"], params[f"specificity_{side}"]
        cells = np.array(
            [
                prevalence * recall,
                (1 - prevalence) * (1 - specificity),
                prevalence * (1 - recall),
                (1 - prevalence) * specificity,
            ]
        )
        values.append(float(metric_values(cells, metric)))
    return values[0] - values[1]


def _score_cuts(params: dict) -> tuple[float, np.ndarray]:
    """Shift of the positives' scores and the cut points of a ``scored_nested`` population.

    Within a class the score is N(0, 1) for negatives and N(delta, 1) for positives
    (marginally over persons), delta = sqrt(2) Phi^-1(auc); the levels are the score
    rounded to ``score_levels`` bins, equally spaced over delta / 2 +- 2.5.
    """
    from scipy import special

    delta = float(np.sqrt(2) * special.ndtri(params["auc"]))
    levels = int(params["score_levels"])
    return delta, delta / 2 + np.linspace(-2.5, 2.5, levels - 1)


def _binned(mean: np.ndarray, sd: float, cuts: np.ndarray) -> np.ndarray:
    """Probabilities (..., L) of a N(mean, sd^2) score falling in each level."""
    from scipy import special

    cdf = special.ndtr((cuts - mean[..., None]) / sd) if sd > 0 else 1.0 * (cuts >= mean[..., None])
    edges = np.concatenate(
        [np.zeros((*cdf.shape[:-1], 1)), cdf, np.ones((*cdf.shape[:-1], 1))], axis=-1
    )
    return np.clip(np.diff(edges, axis=-1), 0.0, 1.0)


def draw_scored(params: dict, shape: tuple[int, ...], rng: np.random.Generator):
    """Per-person positives and negatives at each score level, each ``(*shape, L)``.

    Person i has a share of positives from a Beta(prevalence, ``icc_prevalence``) and a
    score shift b_i ~ N(0, ``score_icc``) that moves the scores of all their texts; a
    text's score is b_i + delta y + e, e ~ N(0, 1 - score_icc), rounded to its level.
    The sizes are unrelated to the shares and shifts.
    """
    delta, cuts = _score_cuts(params)
    tau2 = float(params["score_icc"])
    shift = np.sqrt(tau2) * rng.standard_normal(shape)
    prevalence = beta_quantile(
        rng.standard_normal(shape), params["prevalence"], params["icc_prevalence"]
    )
    n = cell_sizes({**params, "informative": 0.0}, shift, rng)
    positives = rng.binomial(n, prevalence)
    within = float(np.sqrt(1 - tau2))
    pos = rng.multinomial(positives, _binned(shift + delta, within, cuts))
    neg = rng.multinomial(n - positives, _binned(shift, within, cuts))
    return pos, neg


def scored_truth(params: dict) -> float:
    """Return the population's ROC AUC of the rounded score, ties counting half.

    In an infinite population a random positive and a random negative text come from
    different persons, so their scores are independent N(delta, 1) and N(0, 1) (the
    person shift is normal, independent of the shares and sizes, and of unit total
    variance): the AUC is sum_l P(X in l) (P(Y below l) + P(Y in l) / 2).
    """
    delta, cuts = _score_cuts(params)
    x = _binned(np.asarray(delta), 1.0, cuts)
    y = _binned(np.asarray(0.0), 1.0, cuts)
    below = np.concatenate([[0.0], np.cumsum(y)[:-1]])
    return float(np.sum(x * (below + 0.5 * y)))
