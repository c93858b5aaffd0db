"""A finite corpus, and the stratified validation samples researchers draw from it.

Kind ``stratified_corpus``: a corpus of ``persons`` persons with about
``texts_per_person`` texts each (a rounded lognormal, CV ``size_cv``), a share
``prevalence`` of reference positives (persons' shares Beta with ICC ``icc``), and a
classifier with ``recall`` and ``specificity`` shifted per person on the logit scale (SD
``person_sd``). The corpus is fixed: drawn once from ``corpus_seed`` for its parameters,
the same in every cell and run. Its metrics are the truth (a finite population).

A validation sample is stratified by the classifier's prediction: ``sampled`` texts, a
share ``positive_share`` of them drawn at random without replacement from the corpus's
predicted positives and the rest from its predicted negatives (each capped at its
stratum). Each sampled text's weight is its stratum's corpus texts over its sampled
texts, :math:`N_h / n_h`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy import special

from .persons import beta_quantile, person_sizes

__all__ = ["Corpus", "StratifiedSamples", "corpus_of", "draw_stratified"]

# Random keys held at once while drawing samples without replacement (memory: 8 bytes
# each): the replications of a block share one draw of keys per stratum text.
_KEY_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class Corpus:
    """A finite corpus of texts nested in persons, labelled by a reference and a classifier.

    Attributes
    ----------
    person, truth, pred : numpy.ndarray, shape (texts,)
        Each text's person, reference label (1 positive) and classifier label.
    persons : int
        Persons in the corpus.
    """

    person: np.ndarray
    truth: np.ndarray
    pred: np.ndarray
    persons: int

    @property
    def cells(self) -> np.ndarray:
        """The corpus's confusion matrix ``[tp, fp, fn, tn]``."""
        return np.bincount(_cell(self.truth, self.pred), minlength=4).astype(float)

    @property
    def stratum_sizes(self) -> np.ndarray:
        """Corpus texts the classifier calls positive, and negative: ``[N_1, N_0]``."""
        positives = int(self.pred.sum())
        return np.array([positives, self.pred.size - positives], dtype=float)


def _cell(truth: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Each text's cell: 0 tp, 1 fp, 2 fn, 3 tn."""
    return np.where(truth == 1, np.where(pred == 1, 0, 2), np.where(pred == 1, 1, 3))


@functools.cache
def _corpus_cached(items: tuple) -> Corpus:
    params = dict(items)
    rng = np.random.default_rng(int(params["corpus_seed"]))
    persons = int(params["persons"])
    latent = rng.standard_normal(persons)
    sizes = person_sizes(rng, latent, params["texts_per_person"], params["size_cv"], 1, 0.0)
    share = beta_quantile(latent, params["prevalence"], params["icc"])
    person = np.repeat(np.arange(persons), sizes)
    truth = (rng.random(person.size) < share[person]).astype(np.int8)
    shift = params["person_sd"] * rng.standard_normal(persons)
    recall = special.expit(special.logit(params["recall"]) + shift)
    specificity = special.expit(special.logit(params["specificity"]) + shift)
    called = np.where(truth == 1, recall[person], 1 - specificity[person])
    pred = (rng.random(person.size) < called).astype(np.int8)
    return Corpus(person=person, truth=truth, pred=pred, persons=persons)


def corpus_of(params: dict) -> Corpus:
    """Return the corpus of a cell's parameters (built once per set of parameters).

    Only the corpus's own parameters (not the sample design's) decide it.
    """
    keys = (
        "corpus_seed",
        "persons",
        "texts_per_person",
        "size_cv",
        "prevalence",
        "icc",
        "recall",
        "specificity",
        "person_sd",
    )
    return _corpus_cached(tuple((k, params[k]) for k in keys))


@dataclass(frozen=True)
class StratifiedSamples:
    """Replications of a stratified-by-prediction sample, text by text.

    Attributes
    ----------
    cell, stratum, person : numpy.ndarray of int, shape (replications, sampled)
        Each sampled text's cell (0 tp, 1 fp, 2 fn, 3 tn), stratum (0: predicted
        positive, 1: predicted negative) and person.
    weight : numpy.ndarray, shape (replications, sampled)
        :math:`N_h / n_h`.
    stratum_sizes : numpy.ndarray, shape (2,)
        :math:`N_h`.
    """

    cell: np.ndarray
    stratum: np.ndarray
    person: np.ndarray
    weight: np.ndarray
    stratum_sizes: np.ndarray


def _without_replacement(
    population: int, size: int, replications: int, rng: np.random.Generator
) -> np.ndarray:
    """`size` distinct indices of `population`, per replication: the smallest random keys."""
    if size >= population:
        return np.broadcast_to(np.arange(population), (replications, population)).copy()
    out = np.empty((replications, size), dtype=np.int64)
    step = max(1, _KEY_ELEMENTS // max(population, 1))
    for start in range(0, replications, step):  # blocks bound the keys' memory
        keys = rng.random((min(step, replications - start), population))
        out[start : start + keys.shape[0]] = np.argpartition(keys, size - 1, axis=-1)[:, :size]
    return out


def draw_stratified(
    corpus: Corpus, sampled: int, positive_share: float, replications: int, rng
) -> StratifiedSamples:
    """Draw `replications` stratified-by-prediction samples of `sampled` texts."""
    strata = [np.flatnonzero(corpus.pred == 1), np.flatnonzero(corpus.pred == 0)]
    wanted = [int(round(sampled * positive_share)), 0]
    wanted[1] = sampled - wanted[0]
    sizes = np.array([s.size for s in strata], dtype=float)
    taken = [min(w, s.size) for w, s in zip(wanted, strata, strict=True)]
    chosen = np.concatenate(
        [
            texts[_without_replacement(texts.size, n, replications, stream)]
            for texts, n, stream in zip(strata, taken, rng.spawn(2), strict=True)
        ],
        axis=-1,
    )
    stratum = np.repeat([0, 1], taken)[None].repeat(replications, 0)
    return StratifiedSamples(
        cell=_cell(corpus.truth[chosen], corpus.pred[chosen]),
        stratum=stratum,
        person=corpus.person[chosen],
        weight=(sizes / np.array(taken, dtype=float))[stratum],
        stratum_sizes=sizes,
    )
