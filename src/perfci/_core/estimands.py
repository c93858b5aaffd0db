"""What an interval is about: the texts a metric is computed from, and its population.

Every interval says which quantity of which population it bounds (its estimand), and
counts the texts the metric is computed from (its relevant n). Both are decided here
once, for every layer: :data:`RELEVANT_TEXTS` (which cells of ``[tp, fp, fn, tn]`` a
metric is computed from), :func:`relevant_texts` (how many there are, per row of cells or
per k x k matrix), :func:`relevant_joint_cells` (the same for two classifiers' joint
cells), and the sentences that name an interval's population: :func:`population_sentence`
for an interval about texts (or persons), :func:`crossed_sentence` for one about repeated
runs or annotators. NumPy only.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from . import registry
from .joint import TO_A, TO_B

__all__ = [
    "RELEVANT_TEXTS",
    "crossed_sentence",
    "population_sentence",
    "relevant_description",
    "relevant_joint_cells",
    "relevant_texts",
]

_TP, _FP, _FN, _TN = range(4)  # the cells' order on the last axis of every count array

#: The texts each metric is computed from: (cells, description). For proportion metrics
#: the count of these texts is the relevant n; for the others it says which texts carry
#: the information (and sets the mean texts per person used to choose a bootstrap scheme).
RELEVANT_TEXTS: dict[str, tuple[tuple[int, ...], str]] = {
    "accuracy": ((_TP, _FP, _FN, _TN), "all texts"),
    "recall": ((_TP, _FN), "texts the reference codes positive"),
    "precision": ((_TP, _FP), "texts the classifier codes positive"),
    "specificity": ((_TN, _FP), "texts the reference codes negative"),
    "npv": ((_TN, _FN), "texts the classifier codes negative"),
    "f1": ((_TP, _FP, _FN), "texts either rater codes positive"),
    "ppa": ((_TP, _FP, _FN), "texts either rater codes positive"),
    "pna": ((_TN, _FP, _FN), "texts either rater codes negative"),
    "kappa": ((_TP, _FP, _FN, _TN), "all texts"),
    "balanced_accuracy": ((_TP, _FP, _FN, _TN), "all texts"),
    "mcc": ((_TP, _FP, _FN, _TN), "all texts"),
}

# The population phrases of the sentences below.
_TEXTS = "the population of texts this sample represents"
_CROSSED_TEXTS = "the population of texts"
_CROSSED_PERSONS = "the population of persons (new persons included) and their texts"


def _averaged(metric: str) -> bool:
    """Whether `metric` averages over classes (``macro_*``, ``micro_*``)."""
    return metric in registry.METRIC and metric not in registry.BINARY_METRIC


def relevant_texts(cells: Any, metric: str, *, proportions_only: bool = False) -> np.ndarray:
    """Return the relevant texts of `metric` in counts, per row of cells or per matrix.

    Parameters
    ----------
    cells : numpy.ndarray
        Cells ``(..., 4)`` ``[tp, fp, fn, tn]`` for a binary metric; k x k matrices
        ``(..., k, k)`` for an average over classes, whose relevant texts are all texts.
    metric : str
        A metric name (:data:`perfci.METRICS`).
    proportions_only : bool, default False
        Count only a proportion metric's relevant texts (its denominator) and every text
        for the other binary metrics: the relevant n of repeated runs.

    Returns
    -------
    numpy.ndarray
        The count per row of cells (per matrix), in the cells' dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.estimands import relevant_texts
    >>> cells = np.array([[40, 6, 9, 345], [3, 1, 0, 20]])
    >>> relevant_texts(cells, "recall"), relevant_texts(cells, "f1")
    (array([49,  3]), array([55,  4]))
    >>> relevant_texts(cells, "f1", proportions_only=True)
    array([400,  24])
    """
    if _averaged(metric):
        return cells.sum(axis=(-2, -1))
    if proportions_only and metric not in registry.PROPORTION_METRIC:
        return cells.sum(-1)
    return cells[..., list(RELEVANT_TEXTS[metric][0])].sum(-1)


def relevant_description(metric: str) -> str:
    """Return the texts `metric` is computed from, in words (all texts for an average)."""
    return "all texts" if _averaged(metric) else RELEVANT_TEXTS[metric][1]


def relevant_joint_cells(metric: str) -> np.ndarray:
    """Which of the eight joint cells are relevant texts: relevant for either classifier.

    For precision a text is relevant if either calls it positive, so that swapping A and
    B cannot change what counts (joint cells as in :mod:`perfci._core.joint`).
    """
    cells = list(RELEVANT_TEXTS[metric][0])
    return (TO_A[:, cells].sum(1) + TO_B[:, cells].sum(1)) > 0


def population_sentence(
    quantity: str,
    *,
    nested: bool,
    persons: int | None = None,
    detail: str | None = None,
    form: Literal["rate", "statistic"] = "rate",
) -> str:
    """Say which population an interval of `quantity` is about (its estimand).

    Parameters
    ----------
    quantity : str
        What is estimated, e.g. ``"recall"`` or ``"Cohen's kappa of these annotators"``.
    nested : bool
        Whether the texts are nested in persons sampled from a population of persons (the
        interval is about that population, new persons included), else the texts are a
        sample of a population of texts.
    persons : int, optional
        The persons seen (nested texts).
    detail : str, optional
        Said in parentheses after `quantity` (``form="rate"``), e.g. which texts.
    form : {"rate", "statistic"}, default "rate"
        ``"rate"``: "the [text-weighted] quantity (detail) in the population of ...";
        ``"statistic"``: "quantity on [the texts of] the population of ... [(text-weighted)]".

    Returns
    -------
    str

    Examples
    --------
    >>> from perfci._core.estimands import population_sentence
    >>> population_sentence("recall", nested=True, persons=39, detail="over texts the "
    ...                     "reference codes positive")  # doctest: +NORMALIZE_WHITESPACE
    'the text-weighted recall (over texts the reference codes positive) in the population
    of persons that these 39 persons were sampled from, new persons included'
    >>> population_sentence("ROC AUC", nested=False)
    'the ROC AUC in the population of texts this sample represents'
    """
    of_persons = f"the population of persons that these {persons} persons were sampled from"
    if form == "statistic":
        if nested:
            return f"{quantity} on the texts of {of_persons} (text-weighted), new persons included"
        return f"{quantity} on {_TEXTS}"
    said = f"{quantity} ({detail})" if detail else quantity
    if nested:
        return f"the text-weighted {said} in {of_persons}, new persons included"
    return f"the {said} in {_TEXTS}"


def crossed_sentence(
    source: Literal["runs", "annotators"], estimand: str, *, nested: bool, seen: int
) -> str:
    """Say what an interval of repeated runs or of several annotators is about.

    Parameters
    ----------
    source : {"runs", "annotators"}
        The crossed source of variation.
    estimand : str
        ``"new_run"``, ``"these_runs"`` or ``"majority"`` (runs); ``"new_annotator"``,
        ``"these_annotators"`` or ``"majority"`` (annotators).
    nested : bool
        Whether the texts are nested in persons.
    seen : int
        The runs (annotators) seen.

    Returns
    -------
    str

    Examples
    --------
    >>> from perfci._core.estimands import crossed_sentence
    >>> crossed_sentence("runs", "these_runs", nested=False, seen=5)
    "the mean over these 5 runs of each run's metric on the population of texts"
    """
    texts = _CROSSED_PERSONS if nested else _CROSSED_TEXTS
    if source == "runs":
        if estimand == "new_run":
            return (
                f"the expected metric of a new run of the classifier on {texts}: the mean over "
                f"the population of runs, of which {seen} were seen"
            )
        if estimand == "these_runs":
            return f"the mean over these {seen} runs of each run's metric on {texts}"
        return f"the metric of the majority vote of these {seen} runs on {texts}"
    if estimand == "new_annotator":
        return (
            f"the expected metric against a new annotator from the population of annotators "
            f"(of whom {seen} were seen), on {texts}"
        )
    if estimand == "these_annotators":
        return f"the mean over these {seen} annotators of the metric against each, on {texts}"
    return f"the metric against the majority label of these {seen} annotators, on {texts}"
