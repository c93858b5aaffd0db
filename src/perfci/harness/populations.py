"""Populations the harness simulates from, and how samples are drawn from them."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .schema import Suite


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


def _population_of(suite: Suite, cell: dict):
    """Return the cell's finite population (an ``icc`` dim sets sd^2 = icc m (1 - m))."""
    pop = suite.population
    sd = pop.get("sd")
    if "icc" in cell:
        sd = float(np.sqrt(cell["icc"] * pop["mean"] * (1 - pop["mean"])))
    return nested_population(pop["persons"], pop["texts_per_person"], pop["mean"], sd, pop["seed"])


def _nested_sample(suite: Suite, cell: dict, replications: int, rng: np.random.Generator):
    """Per-person successes and texts (R, m) of R samples of m persons.

    Design ``"srs"`` samples ``population.srs_texts`` texts at random from the whole
    population instead; persons are then those hit (texts = 0 for the others).
    """
    pop = suite.population
    totals, _ = _population_of(suite, cell)
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
