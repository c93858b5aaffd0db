"""The estimand sentences and relevant-text counts of perfci._core.estimands.

The sentences are pinned word for word: each is what one interval family says today
(metric_ci, auc_ci, annotator_agreement, runs_ci, annotator_ci), so that a family that
builds its sentence here says exactly what it said.
"""

import numpy as np
import pytest

from perfci._core.estimands import (
    RELEVANT_TEXTS,
    crossed_sentence,
    population_sentence,
    relevant_description,
    relevant_joint_cells,
    relevant_texts,
)
from perfci._core.joint import TO_A, TO_B
from perfci.metrics import BINARY_METRICS, METRICS, PROPORTION_METRICS, proportion_counts

PERSONS = "the population of persons that these 12 persons were sampled from"


def test_the_sentence_of_a_metric_and_of_the_auc():
    over = f"over {relevant_description('recall')}"
    assert population_sentence("recall", nested=True, persons=12, detail=over) == (
        f"the text-weighted recall (over texts the reference codes positive) in {PERSONS}, "
        "new persons included"
    )
    assert population_sentence("macro_f1", nested=False, detail="over all texts") == (
        "the macro_f1 (over all texts) in the population of texts this sample represents"
    )
    pairs = "pairs of a positive and a negative text, from any persons"
    assert population_sentence("ROC AUC", nested=True, persons=12, detail=pairs) == (
        f"the text-weighted ROC AUC ({pairs}) in {PERSONS}, new persons included"
    )
    assert population_sentence("ROC AUC", nested=False) == (
        "the ROC AUC in the population of texts this sample represents"
    )


def test_the_sentence_of_an_agreement_statistic():
    what = "Cohen's kappa of these annotators"
    assert population_sentence(what, nested=True, persons=12, form="statistic") == (
        f"{what} on the texts of {PERSONS} (text-weighted), new persons included"
    )
    assert population_sentence(what, nested=False, form="statistic") == (
        f"{what} on the population of texts this sample represents"
    )


@pytest.mark.parametrize("nested", [False, True])
def test_the_sentences_of_runs_and_annotators(nested):
    texts = (
        "the population of persons (new persons included) and their texts"
        if nested
        else "the population of texts"
    )
    said = {
        ("runs", "new_run"): f"the expected metric of a new run of the classifier on {texts}: "
        "the mean over the population of runs, of which 3 were seen",
        ("runs", "these_runs"): f"the mean over these 3 runs of each run's metric on {texts}",
        ("runs", "majority"): f"the metric of the majority vote of these 3 runs on {texts}",
        ("annotators", "new_annotator"): "the expected metric against a new annotator from the "
        f"population of annotators (of whom 3 were seen), on {texts}",
        ("annotators", "these_annotators"): "the mean over these 3 annotators of the metric "
        f"against each, on {texts}",
        ("annotators", "majority"): "the metric against the majority label of these 3 "
        f"annotators, on {texts}",
    }
    for (source, estimand), sentence in said.items():
        assert crossed_sentence(source, estimand, nested=nested, seen=3) == sentence


def test_relevant_texts_count_the_cells_each_metric_is_computed_from():
    rng = np.random.default_rng(0)
    cells = rng.integers(0, 9, (5, 3, 4))
    matrices = rng.integers(0, 9, (5, 3, 3))
    for metric in METRICS:
        if metric in BINARY_METRICS:
            want = cells[..., list(RELEVANT_TEXTS[metric][0])].sum(-1)
            np.testing.assert_array_equal(relevant_texts(cells, metric), want)
            # repeated runs: a proportion's denominator, every text for the other metrics
            only = relevant_texts(cells, metric, proportions_only=True)
            if metric in PROPORTION_METRICS:
                np.testing.assert_array_equal(only, proportion_counts(cells, metric)[1])
            else:
                np.testing.assert_array_equal(only, cells.sum(-1))
        else:
            np.testing.assert_array_equal(relevant_texts(matrices, metric), matrices.sum((1, 2)))
            assert relevant_description(metric) == "all texts"


@pytest.mark.parametrize("metric", BINARY_METRICS)
def test_a_joint_cell_is_relevant_when_it_is_for_either_classifier(metric):
    cells = list(RELEVANT_TEXTS[metric][0])
    for j, relevant in enumerate(relevant_joint_cells(metric)):
        assert relevant == bool(TO_A[j, cells].any() or TO_B[j, cells].any())
    # swapping A and B (cell 4t + 2a + b -> 4t + 2b + a) changes nothing
    swap = [4 * (j // 4) + 2 * (j % 2) + (j // 2) % 2 for j in range(8)]
    np.testing.assert_array_equal(relevant_joint_cells(metric)[swap], relevant_joint_cells(metric))
