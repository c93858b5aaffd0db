"""The catalogue: every public function and every option against bad input, generated.

Each public entry point is declared once below with a valid call and the *kind* of each of
its arguments (a count, a level, a positive integer, a name from the registry, ...). Every
kind lists the inputs a careful and a careless user give: the wrong type (a string for a
number, a list where one value is meant, a boolean for an integer, None where a value is
required), out of range (negative, zero, above 1 for a level, NaN, infinity), the wrong
shape (lengths that do not match, a 0-d array, a wrong number of cells) and emptiness (no
values, no texts, no persons). The cases are the product of the two.

Every case must end, in well under 10 seconds, in one of three ways, and the kind says
which:

- a ``ValueError`` whose message names the argument in backticks (never a ``TypeError``,
  an ``IndexError`` or a NumPy message from deep inside);
- a result (a value the argument accepts, e.g. a list of levels where levels broadcast),
  checked where there is something to check;
- NaN with an :class:`~perfci.UndefinedMetricWarning` saying why, for a quantity the
  data do not define (the ICC of one person).

Warnings are errors in this suite, so a stray NumPy ``RuntimeWarning`` fails a case too.
Names a function does not know are :mod:`tests.test_registry`'s; the hand-written list of
the cases that once went wrong is :mod:`tests.test_bad_input`'s.
"""

from __future__ import annotations

import inspect
import re
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pytest

import perfci as pc
from perfci._core import registry
from perfci.stratified_planning import expected_stratified_half_width
from perfci.subgroups import compare_groups_counts

#: A case must end well under the 10 s a user waits for an answer.
SECONDS = 5.0

RAISES, OK, NAN = "raises", "result", "nan"

rng0 = np.random.default_rng(20261130)
Y = rng0.integers(0, 2, size=40).tolist()  # reference labels, 0/1
P = [y if rng0.random() < 0.8 else 1 - y for y in Y]  # classifier A
Q = [y if rng0.random() < 0.7 else 1 - y for y in Y]  # classifier B
G = [f"p{i // 4}" for i in range(40)]  # 10 persons of 4 texts
S = [round(0.4 * y + 0.6 * rng0.random(), 2) for y in Y]  # a score of each text
T = [round(0.3 * y + 0.7 * rng0.random(), 2) for y in Y]  # a second score
RUNS = [[p, p if rng0.random() < 0.9 else 1 - p, p] for p in P]  # three runs of A
_rng_codes = np.random.default_rng(7)
CODERS = [[y, y if _rng_codes.random() < 0.9 else 1 - y] for y in Y]  # two annotators
CODERS[0][1] = None  # the second did not code the first text
BY = ["a" if i < 20 else "b" for i in range(40)]  # two subgroups, the persons nested in them
SUCCESSES, TRIALS = [3, 2, 4, 5], [5, 5, 6, 6]
# three annotators' codes of the 40 texts, the third coding every other text
CODES = [[y, p, q if i % 2 else None] for i, (y, p, q) in enumerate(zip(Y, P, Q, strict=True))]
PAIR = [row[:2] for row in CODES]  # two annotators who coded every text
STRATA = [[24, 6, 0, 0], [0, 0, 3, 27]]  # coded predicted positives and negatives
SIZES = {0: 400, 1: 100}  # corpus texts of each stratum of prediction P
MACHINE = [1 - q if i % 5 == 0 else q for i, q in enumerate(Q)]  # a machine coder's labels
FOLDS = [(i // 4) % 5 for i in range(40)]  # folds of the 10 persons, two each


class MeanCut:
    """A fitting procedure with scikit-learn's interface: positive above the training mean."""

    def __init__(self, short: bool = False):
        self.short = short

    def fit(self, x, y):
        self.cut = float(np.mean(x))
        return self

    def predict(self, x):
        out = (np.asarray(x)[:, 0] > self.cut).astype(int)
        return out[:-1] if self.short else out


@dataclass(frozen=True)
class Case:
    """One bad (or borderline) value of an argument and how its call must end."""

    label: str
    value: Any
    expect: str = RAISES
    #: Arguments the message may name instead (e.g. `trials` for a `successes` case).
    names: tuple[str, ...] = ()
    #: Other arguments changed together with this one (shape cases).
    also: dict[str, Any] = field(default_factory=dict)
    #: For results: a check of the result.
    check: Callable[[Any], bool] | None = None


# ----------------------------------------------------------------------------- kinds
# Each kind maps an argument to the cases every argument of that kind gets.

NOT_A_NUMBER = [
    Case("a string", "0.5"),
    Case("True", True),
    Case("None", None),
    Case("an object", object()),
]
NOT_FINITE = [Case("NaN", np.nan), Case("infinity", np.inf), Case("-infinity", -np.inf)]


def counts_kind(broadcasts: bool = True) -> list[Case]:
    """A non-negative number of successes that broadcasts (``x``)."""
    return [
        *NOT_A_NUMBER,
        *NOT_FINITE,
        Case("negative", -1),
        Case("a list of strings", ["1", "2"]),
        Case("a fraction", 2.5, OK),  # effective counts are real
        Case("a list", [1, 2], OK if broadcasts else RAISES),
    ]


def positive_kind(integer: bool = False) -> list[Case]:
    """A positive size that broadcasts (``n``, ``n_texts``)."""
    return [
        *NOT_A_NUMBER,
        *NOT_FINITE,
        Case("zero", 0),
        Case("negative", -5),
        Case("a list", [100, 200], OK),
        Case("a list with a zero", [100, 0]),
        *([Case("a fraction", 10.5)] if integer else []),
    ]


def probability_kind() -> list[Case]:
    """A proportion in [0, 1] that broadcasts (``p``, ``icc``)."""
    return [
        *NOT_A_NUMBER,
        *NOT_FINITE,
        Case("negative", -0.1),
        Case("above 1", 1.5),
        Case("0", 0.0, OK),
        Case("1", 1.0, OK),
        Case("a list", [0.1, 0.2], OK),
    ]


def level_kind(broadcasts: bool = False) -> list[Case]:
    """A confidence (or credible) level, one number strictly inside (0, 1)."""
    return [
        *NOT_A_NUMBER,
        *NOT_FINITE,
        Case("negative", -0.5),
        Case("zero", 0),
        Case("one", 1),
        Case("above 1", 1.5),
        Case("a percentage", 95),
        Case("a list", [0.9, 0.95], OK if broadcasts else RAISES),
        Case("an empty list", [], OK if broadcasts else RAISES),
        Case("a numpy float", np.float64(0.9), OK),
    ]


def positive_int_kind(optional: bool = False, extra: tuple[Case, ...] = ()) -> list[Case]:
    """A positive integer (``n_resamples``, ``draws``, ``batch``)."""
    return [
        Case("a string", "100"),
        Case("True", True),
        Case("a list", [100]),
        Case("zero", 0),
        Case("negative", -1),
        Case("a fraction", 1.5),
        Case("a whole float", 100.0),
        *NOT_FINITE,
        Case("None", None, OK if optional else RAISES),
        Case("a numpy integer", np.int64(7), OK),
        *extra,
    ]


def resamples_kind(extra: tuple[Case, ...] = (), *, floor: bool = True) -> list[Case]:
    """Bootstrap resamples: a positive integer, at least 40 for a 95% interval.

    ``floor=False`` for the functions that do not yet refuse fewer resamples than each tail
    of the interval needs (their numpy integer is at the floor, which every function takes).
    """
    cases = [
        Case("a numpy integer at the 95% floor", np.int64(40), OK)
        if c.label == "a numpy integer"
        else c
        for c in positive_int_kind(extra=extra)
    ]
    if floor:
        cases += [Case("one resample", 1), Case("one below the 95% floor", 39)]
    return cases


def pseudo_count_kind(recommended: bool = False) -> list[Case]:
    """A non-negative whole number (``pseudo_count``)."""
    return [
        Case("a string", "1"),
        Case("True", True),
        Case("None", None),
        Case("a list", [1]),
        Case("negative", -1),
        Case("a fraction", 1.5),
        *NOT_FINITE,
        Case("more texts than any sample", 10**16),
        Case("zero", 0, OK),
        Case("a numpy integer", np.int64(2), OK),
        *([Case("'recommended'", "recommended", OK)] if recommended else []),
    ]


def rng_kind() -> list[Case]:
    """A random generator, a seed or None."""
    return [
        Case("a string", "abc"),
        Case("a float", 1.5),
        Case("a negative seed", -1),
        Case("True", True),
        Case("an object", object()),
        Case("a legacy RandomState", np.random.RandomState(1)),
        Case("a list with a negative seed", [1, -2]),
        Case("a Generator", np.random.default_rng(5), OK),
        Case("a SeedSequence", np.random.SeedSequence(5), OK),
        Case("None", None, OK),
    ]


CHOICES_SEEN: list[registry.Choices] = []


def choice_kind(choices: registry.Choices, *, none_ok: bool | None = None) -> list[Case | None]:
    """A name from the registry, given with the wrong type (unknown names: test_registry)."""
    CHOICES_SEEN.append(choices)
    allow_none = choices.allow_none if none_ok is None else none_ok
    first = choices.names[0]
    return [
        Case("None", None, OK if allow_none else RAISES),
        Case("a number", 3),
        Case("a list of a valid name", [first]),
        Case("an empty string", ""),
        Case("a valid name in capitals", first.upper()) if first != first.upper() else None,
        Case("a valid name with a space", f" {first}"),
    ]


def label_kind() -> list[Case]:
    """One label (``positive``)."""
    return [
        Case("a list", [1]),
        Case("a set", {1}),
        Case("a dict", {1: 1}),
        Case("an array", np.array([1, 0])),
        Case("NaN", np.nan),
        Case("a label not among the labels", 7),
        Case("None (the default)", None, OK),
    ]


def bool_kind(optional: bool = False) -> list[Case]:
    """True or False (or None, where None means "decide")."""
    return [
        Case("a string", "yes"),
        Case("an integer", 1),
        Case("a list", [True]),
        Case("None", None, OK if optional else RAISES),
    ]


def per_person_kind(argument: str, undefined: str) -> list[Case]:
    """Per-person successes or trials; `undefined` says how no or one person ends."""
    other = "trials" if argument == "successes" else "successes"
    both = ("successes", "trials")

    def pair(label: str, y: Any, n: Any, expect: str = RAISES) -> Case:
        value, rest = (y, n) if argument == "successes" else (n, y)
        return Case(label, value, expect, names=both, also={other: rest})

    mine = SUCCESSES if argument == "successes" else TRIALS
    return [
        *NOT_A_NUMBER,
        Case("NaN inside", [np.nan, *mine[1:]]),
        Case("strings", [str(v) for v in mine]),
        Case("lengths that differ", mine[:2], names=both),
        pair("negative", [-1, 2, 4, 5], [5, 5, 6, 6]),
        pair("a negative number of texts", [0, 2, 4, 5], [-5, 5, 6, 6]),
        pair("a fraction", [2.5, 2, 4, 5], [5, 5, 6, 6]),
        pair("a fractional number of texts", [3, 2, 4, 5], [5.5, 5, 6, 6]),
        pair("0-d", 3, 5),
        pair("successes above trials", [6, 2, 4, 5], [5, 5, 6, 6]),
        pair("no persons", [], [], undefined),
        pair("one person", [3], [5], undefined),
        pair("persons without texts", [0, 0], [0, 0], undefined),
        pair("one person among persons without texts", [3, 0], [5, 0], undefined),
    ]


def population_sizes_kind() -> list[Case]:
    """Each person's size in the population (``population_sizes``), like ``TRIALS``."""
    return [
        *(c for c in NOT_A_NUMBER if c.label != "None"),
        Case("None", None, OK),
        Case("NaN inside", [np.nan, 5, 6, 6]),
        Case("infinity inside", [np.inf, 5, 6, 6]),
        Case("strings", ["5", "5", "6", "6"]),
        Case("one size too few", [5, 5, 6]),
        Case("zero for a person with texts", [0, 5, 6, 6]),
        Case("negative", [-5, 5, 6, 6]),
        Case("fractions (proportional sizes)", [0.5, 0.5, 0.6, 0.6], OK),
    ]


def population_persons_kind() -> list[Case]:
    """Persons in the population (``population_persons``): at least the sampled ones."""
    return [
        Case("a string", "10"),
        Case("True", True),
        Case("an object", object()),
        Case("None", None, OK),
        Case("NaN", np.nan),
        Case("infinity", np.inf, OK),
        Case("fewer than the sampled persons", 3),
        Case("the sampled persons", 4, OK),
        Case("a list of two for one data set", [10, 20]),
    ]


def cells_kind(cells: int, zeros: str = NAN) -> list[Case]:
    """Counts with `cells` cells on the last axis."""
    good = list(range(1, cells + 1))
    return [
        *NOT_A_NUMBER,
        Case("NaN inside", [np.nan, *good[1:]]),
        Case("infinity inside", [np.inf, *good[1:]]),
        Case("negative", [-1, *good[1:]]),
        Case("booleans", [True] * cells),
        Case("strings", [str(v) for v in good]),
        Case("0-d", 5),
        Case("empty", []),
        Case("one cell too few", good[:-1]),
        Case("one cell too many", [*good, 1]),
        Case("ragged", [good, good[:-1]]),
        Case("all zero", [0] * cells, zeros),
    ]


def confusion_prior_kind() -> list[Case | None]:
    """A prior of the cells: a registered name or a Dirichlet concentration >= 0.05."""
    return [
        *(c for c in choice_kind(registry.CONFUSION_PRIOR) if c is None or c.label != "a number"),
        Case("True", True),
        *NOT_FINITE,
        Case("zero", 0),
        Case("negative", -1),
        Case("below the smallest concentration", 0.01),
        Case("a list", [0.5]),
        Case("a half", 0.5, OK),
        Case("a whole number", 3, OK),
    ]


#: Per-person [tp, fp, fn, tn] of four persons, and the joint counts of two classifiers.
NESTED_CELLS = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
NESTED_JOINT = [
    [4, 1, 0, 2, 1, 0, 1, 6],
    [5, 0, 1, 1, 0, 1, 2, 3],
    [3, 1, 1, 0, 2, 0, 1, 7],
    [6, 0, 0, 1, 1, 1, 0, 4],
]


def nested_cells_kind() -> list[Case]:
    """Per-person cells (``(*batch, persons, 4)``)."""
    return [
        *NOT_A_NUMBER,
        Case("NaN inside", [[np.nan, 1, 0, 20], *NESTED_CELLS[1:]]),
        Case("negative", [[-5, 1, 0, 20], *NESTED_CELLS[1:]]),
        Case("a fraction", [[5.5, 1, 0, 20], *NESTED_CELLS[1:]]),
        Case("strings", [[str(v) for v in row] for row in NESTED_CELLS]),
        Case("one matrix, not per person", NESTED_CELLS[0]),
        Case("three cells", [row[:3] for row in NESTED_CELLS]),
        Case("a batch", [NESTED_CELLS, NESTED_CELLS], OK),
        Case("padded with persons without texts", [*NESTED_CELLS, [0, 0, 0, 0]], OK),
        Case("no texts", [[0, 0, 0, 0]] * 2, NAN),
    ]


def labels_kind(name: str) -> list[Case]:
    """Labels, one per text."""
    return [
        Case("None", None),
        Case("a scalar", 1),
        Case("empty", []),
        Case("one label too few", (Y if name == "y_true" else P)[:-1], names=("y_true", "y_pred")),
        Case("NaN inside", [np.nan, *(Y if name == "y_true" else P)[1:]]),
        Case("None inside", [None, *(Y if name == "y_true" else P)[1:]]),
        Case("a dict", {1: 0}),
    ]


def groups_kind() -> list[Case]:
    """Person ids, one per text."""
    return [
        Case("a scalar", "a"),
        Case("one id too few", G[:-1]),
        Case("None inside", [None, *G[1:]]),
        Case("one person", ["a"] * len(Y)),
        Case("one text per person", [f"p{i}" for i in range(len(Y))], OK),
    ]


def metrics_list_kind() -> list[Case]:
    """A list of metric names (``report(metrics=)``)."""
    return [
        Case("a string", "recall"),
        Case("an empty list", []),
        Case("a number", 3),
        Case("a list with an unknown name", ["recall", "auc"]),
        Case("a list with None", ["recall", None]),
        Case("a tuple", ("recall",), OK),
    ]


def real_scalar_kind(
    low: float, high: float | None, *, closed: bool = False, none: str = RAISES
) -> list[Case]:
    """One real number in (low, high) (``metric_value``, ``half_width``, ``prevalence``)."""
    return [
        *(c for c in NOT_A_NUMBER if c.label != "None"),
        Case("None", None, none),
        *NOT_FINITE,
        Case("a list", [low + 0.25]),
        Case("below the range", low - 0.1),
        Case("the lower bound", low, OK if closed else RAISES),
        *([Case("above the range", high + 0.1)] if high is not None else []),
    ]


def design_kinds() -> dict[str, list[Case | None]]:
    """The design of a weighted, stratified sample (``weights``, ``strata``, ``stratum_sizes``)."""
    return {
        "weights": [
            Case("a string", "abc"),
            Case("a scalar", 2.0),
            Case("one weight too few", [1.0] * (len(Y) - 1)),
            Case("a negative weight", [-1.0, *[1.0] * (len(Y) - 1)]),
            Case("a zero weight", [0.0, *[1.0] * (len(Y) - 1)]),
            Case("NaN inside", [np.nan, *[1.0] * (len(Y) - 1)]),
            Case("strings", ["1"] * len(Y)),
            Case("equal weights", [3.0] * len(Y), OK, also={"stratum_sizes": None}),
            Case("weights off the stratum sizes", [3.0] * len(Y), names=("stratum_sizes",)),
            Case("None (the stratum sizes over the sampled texts)", None, OK),
        ],
        "strata": [
            Case("a scalar", "a"),
            Case("one stratum too few", P[:-1]),
            Case("None inside", [None, *P[1:]]),
            Case("a stratum with no size", ["x", *P[1:]], names=("stratum_sizes",)),
            Case("one stratum", [0] * len(Y), OK, also={"stratum_sizes": 400}),
        ],
        "stratum_sizes": [
            Case("a string", "abc"),
            Case("a negative size", {0: -1, 1: 100}),
            Case("NaN", {0: np.nan, 1: 100}),
            Case("a stratum missing", {0: 400}),
            Case("fewer than sampled", {0: 5, 1: 100}),
            Case("one number for two strata", 400),
            Case("a list of the wrong length", [400, 100, 7]),
            Case("None (no finite population correction)", None, OK),
        ],
    }


def also(cases: list[Case | None], **changes: Any) -> list[Case | None]:
    """The same cases, each with other arguments changed too (e.g. what makes it apply)."""
    return [
        None
        if c is None
        else Case(c.label, c.value, c.expect, c.names, {**changes, **c.also}, c.check)
        for c in cases
    ]


def shape_kind() -> list[Case]:
    """Grid cells (``shape``, ``grid_shape``): two integers of at least 2."""
    return [
        Case("a string", "ab"),
        Case("one number", 50),
        Case("three numbers", (10, 10, 10)),
        Case("floats", (50.0, 20.0)),
        Case("booleans", (True, True)),
        Case("too few cells", (1, 20)),
        Case("more cells than memory holds", (10**6, 10**6)),
        Case("None", None),
    ]


def scores_kind(name: str) -> list[Case]:
    """Scores, one finite number per text."""
    mine = S if name != "score_b" else T
    return [
        Case("None", None),
        Case("a scalar", 0.5),
        Case("a string", "0.5"),
        Case("strings", [str(v) for v in mine]),
        Case("booleans", [v > 0.5 for v in mine]),
        Case("empty", []),
        Case("one score too few", mine[:-1]),
        Case("NaN inside", [np.nan, *mine[1:]]),
        Case("infinity inside", [np.inf, *mine[1:]]),
        Case("a 2-D array", [mine]),
        Case("integers", [int(10 * v) for v in mine], OK),
    ]


def auc_labels_kind() -> list[Case]:
    """Reference labels of an AUC: both classes needed."""
    return [
        Case("None", None),
        Case("a scalar", 1),
        Case("empty", []),
        Case("one label too few", Y[:-1], names=("y_score", "score_a", "score_b")),
        Case("NaN inside", [np.nan, *Y[1:]]),
        Case("None inside", [None, *Y[1:]]),
        Case("a dict", {1: 0}),
        Case("one class only", [1] * len(Y)),
        Case("scores", S),
        Case("three classes without positive", [2, *Y[1:]], names=("positive",)),
    ]


def auc_bootstrap_kinds(floor: bool = True) -> dict[str, list[Case | None]]:
    """The bootstrap options of auc_ci and compare_auc, with method='bootstrap'."""
    boot = {"method": "bootstrap", "n_resamples": 200}
    return {
        "scheme": also(choice_kind(registry.BOOTSTRAP_SCHEME, none_ok=True), **boot),
        "interval": also(choice_kind(registry.BOOTSTRAP_INTERVAL), **boot),
        "n_resamples": also(resamples_kind(floor=floor), method="bootstrap"),
        "rng": also(rng_kind(), **boot),
        "batch": also(positive_int_kind(optional=True), **boot),
    }


def codes_kind(name: str) -> list[Case]:
    """A table of codes, one row per text and one column per annotator, missing allowed."""
    return [
        Case("None", None),
        Case("a scalar", 1),
        Case("a string", "ab"),
        Case("a dict", {1: 0}),
        Case("empty", []),
        Case("one-dimensional", Y),
        Case("one annotator", [[y] for y in Y]),
        Case("ragged rows", [[1, 0], [1]]),
        Case("every code missing", [[None, np.nan]] * 3),
        Case("numbers beside text", [[1, "a"], [0, "b"]]),
        Case("infinity inside", [[np.inf, 1], [1, 0]]),
        Case("scores", [[v, w] for v, w in zip(S, T, strict=True)]),
        Case("no text coded twice", [[1, None], [None, 0]]),
        Case("one code only", [[1, 1]] * 40, NAN),
        Case("a DataFrame with pd.NA", pd.DataFrame(CODES, dtype="Int64"), OK),
    ]


def categories_kind() -> list[Case]:
    """The possible codes, in order (``categories``)."""
    return [
        Case("a string", "01"),
        Case("a scalar", 1),
        Case("a 2-D list", [[0, 1]]),
        Case("a code missing", [0]),
        Case("a code twice", [0, 1, 0]),
        Case("None inside", [0, None, 1]),
        Case("None (the default)", None, OK),
        Case("a code nobody used", [0, 1, 2], OK),
    ]


def agreement_extra() -> list[tuple[str, dict[str, Any], str, tuple[str, ...]]]:
    """Cases of several arguments at once of annotator_agreement and agreement_report."""
    return [
        (
            "a scheme with the asymptotic method",
            {"method": "asymptotic", "scheme": "iid"},
            RAISES,
            ("scheme",),
        ),
        ("a cluster scheme without groups", {"scheme": "cluster"}, RAISES, ("scheme",)),
        (
            "one person with the hierarchical scheme",
            {"scheme": "hierarchical", "groups": ["a"] * len(Y)},
            RAISES,
            ("groups",),
        ),
    ]


def auc_extra(score: str) -> list[tuple[str, dict[str, Any], str, tuple[str, ...]]]:
    """Cases of several arguments at once shared by auc_ci and compare_auc."""
    return [
        (
            "a scheme with the DeLong method",
            {"method": "delong", "scheme": "iid"},
            RAISES,
            ("scheme",),
        ),
        (
            "bootstrap resamples with DeLong",
            {"method": "delong", "n_resamples": 500},
            RAISES,
            ("n_resamples",),
        ),
        (
            "a cluster scheme without groups",
            {"method": "bootstrap", "scheme": "cluster"},
            RAISES,
            ("scheme",),
        ),
        (
            "one person with the hierarchical scheme",
            {"method": "bootstrap", "scheme": "hierarchical", "groups": ["a"] * len(Y)},
            RAISES,
            ("groups",),
        ),
        (
            "one positive for DeLong",
            {"y_true": [1] + [0] * (len(Y) - 1), "method": "delong"},
            RAISES,
            ("y_true",),
        ),
        ("three classes with positive", {"y_true": [2, *Y[1:]], "positive": 1}, OK, ()),
    ]


#: The corpus of a sample stratified by prediction: stratum sizes and shares.
STRATIFIED_CORPUS = {
    "predicted_positive": 200,
    "predicted_negative": 50000,
    "ppv": 0.8,
    "false_omission_rate": 0.05,
}


def stratum_size_kind(size: int) -> list[Case]:
    """A stratum's corpus texts (``predicted_positive``, ``predicted_negative``)."""
    return [
        *(c for c in positive_int_kind() if c.label != "a numpy integer"),
        Case("one text", 1),
        Case("more texts than any corpus", 10**16),
        Case("a numpy integer", np.int64(size), OK),
    ]


def share_kind() -> list[Case]:
    """A share of a stratum's texts (``ppv``, ``false_omission_rate``), in (0, 1)."""
    return [
        *real_scalar_kind(0.0, 1.0),
        Case("1", 1.0),
        Case("None with a pilot", None, OK, also={"pilot": STRATA}),
    ]


def stratified_corpus_kinds(design: bool = False) -> dict[str, list[Case | None]]:
    """The corpus arguments of the stratified planners, and a pilot (`design`: n1, n0 given)."""
    precision = {"metric": "precision", **({"n0": 0} if design else {})}
    return {
        "predicted_positive": stratum_size_kind(200),
        "predicted_negative": [
            *stratum_size_kind(50000),
            Case("one text for precision", 1, OK, also=precision),
        ],
        "ppv": share_kind(),
        "false_omission_rate": [
            *share_kind(),
            Case("None for precision", None, OK, also=precision),
        ],
        "pilot": [
            *(c for c in NOT_A_NUMBER if c.label != "None"),
            Case("None", None, OK),
            Case("one stratum's cells", STRATA[0]),
            Case("three strata", [*STRATA, [1, 1, 1, 1]]),
            Case("NaN inside", [[np.nan, 6, 0, 0], STRATA[1]]),
            Case("negative", [[-1, 6, 0, 0], STRATA[1]]),
            Case("a fraction", [[2.5, 6, 0, 0], STRATA[1]]),
            Case("a negative prediction among the positives", [[24, 6, 1, 0], STRATA[1]]),
            Case("the strata swapped", [STRATA[1], STRATA[0]]),
            Case("a pilot", STRATA, OK, also={"ppv": None, "false_omission_rate": None}),
        ],
    }


def coded_texts_kind(size: int) -> list[Case]:
    """Texts coded from a stratum of `size` corpus texts (``n1``, ``n0``)."""
    return [
        Case("a string", "20"),
        Case("True", True),
        Case("None", None),
        Case("a list", [20]),
        Case("a fraction", 20.5),
        Case("a whole float", 20.0),
        Case("negative", -1),
        Case("one text", 1),
        Case("zero", 0),
        Case("more than the stratum", size + 1),
        Case("a numpy integer", np.int64(20), OK),
        Case("the whole stratum", size, OK),
    ]


# -------------------------------------------------------------------------- entries


@dataclass(frozen=True)
class Entry:
    """A public function, a valid call, and the kind of every argument."""

    name: str
    function: Callable[..., Any]
    base: dict[str, Any]
    positional: tuple[str, ...]
    kinds: dict[str, list[Case | None]]
    #: Further cases changing several arguments at once: (label, changes, expect, names).
    extra: list[tuple[str, dict[str, Any], str, tuple[str, ...]]] = field(default_factory=list)

    def call(self, changes: dict[str, Any]) -> Any:
        values = {**self.base, **changes}
        args = [values.pop(n) for n in self.positional]
        return self.function(*args, **values)


def _compare_groups_ends(*args, **kwargs):
    """The interval ends of :func:`perfci.compare_groups`' rows (NaN where undefined)."""
    return pc.compare_groups(*args, **kwargs)[["low", "high"]].to_numpy(float)


def _agreement_ends(*args, **kwargs):
    """The estimate and interval ends of :func:`perfci.annotator_agreement`."""
    result = pc.annotator_agreement(*args, **kwargs)
    return np.array([result.estimate, result.low, result.high], dtype=float)


def _agreement_report_ends(*args, **kwargs):
    """The interval ends of :func:`perfci.agreement_report`'s rows."""
    return pc.agreement_report(*args, **kwargs)[["low", "high"]].to_numpy(float)


def _group_difference_ends(*args, **kwargs):
    """The interval ends of :func:`perfci.subgroups.compare_groups_counts`."""
    result = compare_groups_counts(*args, **kwargs)
    return np.array([result.low, result.high], dtype=float)


def _grid_fit():
    return pc.bayes.fit_proportion_counts(
        SUCCESSES, TRIALS, sampler="grid", draws=50, chains=2, rng=1
    )


def _stratified_ends(*args, **kwargs):
    """The estimate and interval ends of :func:`perfci.bayes.stratified_posterior`."""
    post = pc.bayes.stratified_posterior(*args, **kwargs)
    return np.array([post.estimate, post.low, post.high], dtype=float)


def _posterior_interval(**kwargs):
    return pc.bayes.confusion_posterior([40, 6, 9, 345]).interval(**kwargs)


def _nested_ends(*args, **kwargs):
    """The interval ends of :func:`perfci.bayes.nested_metric_intervals` (NaN: undefined)."""
    result = pc.bayes.nested_metric_intervals(*args, **kwargs)
    return np.array([result.low, result.high], dtype=float)


def _fit_interval(**kwargs):
    return FIT.interval(**kwargs)


FIT = _grid_fit()

PER_PERSON = {a: per_person_kind(a, RAISES) for a in ("successes", "trials")}
PER_PERSON_NAN = {a: per_person_kind(a, NAN) for a in ("successes", "trials")}

ENTRIES = [
    Entry(
        "proportion_ci",
        pc.proportion_ci,
        {"x": 3, "n": 10},
        ("x", "n"),
        {
            "x": counts_kind(),
            "n": [*positive_kind(), Case("below x", 2, names=("x", "n"))],
            "method": choice_kind(registry.ANALYTIC_METHOD),
            "confidence_level": level_kind(broadcasts=True),
        },
        [
            ("shapes that do not broadcast", {"x": [1, 2], "n": [3, 4, 5]}, RAISES, ("x",)),
            ("empty arrays: no data sets", {"x": [], "n": []}, OK, ()),
        ],
    ),
    Entry(
        "clustered_proportion_ci",
        pc.clustered_proportion_ci,
        {"successes": SUCCESSES, "trials": TRIALS},
        ("successes", "trials"),
        {
            **PER_PERSON,
            "method": choice_kind(registry.ANALYTIC_METHOD),
            "design": choice_kind(registry.DESIGN),
            "df_adjust": choice_kind(registry.DF_ADJUST),
            "confidence_level": level_kind(),
        },
        [
            (
                "one person without a df adjustment",
                {"successes": [3], "trials": [5], "df_adjust": None},
                RAISES,
                ("trials",),
            ),
            (
                "a batch with a data set of one person",
                {"successes": [[3, 2], [3, 0]], "trials": [[5, 5], [5, 0]]},
                RAISES,
                ("trials",),
            ),
        ],
    ),
    Entry(
        "icc",
        pc.icc,
        {"successes": SUCCESSES, "trials": TRIALS},
        ("successes", "trials"),
        PER_PERSON_NAN,
    ),
    Entry(
        "design_effect",
        pc.design_effect,
        {"successes": SUCCESSES, "trials": TRIALS},
        ("successes", "trials"),
        {**PER_PERSON_NAN, "design": choice_kind(registry.DESIGN)},
        [
            (
                "no persons, cluster-robust",
                {"successes": [], "trials": [], "design": "cluster_robust"},
                NAN,
                (),
            ),
            (
                "one person, cluster-robust",
                {"successes": [3], "trials": [5], "design": "cluster_robust"},
                NAN,
                (),
            ),
        ],
    ),
    Entry(
        "effective_sample_size (icc)",
        pc.effective_sample_size,
        {"n_texts": 400, "icc": 0.1, "mean_cluster_size": 10},
        ("n_texts",),
        {
            "n_texts": positive_kind(),
            "icc": [*probability_kind(), Case("None", None, names=("design_effect", "icc"))],
            "mean_cluster_size": [
                *NOT_A_NUMBER[:2],
                *NOT_FINITE,
                Case("below 1", 0.5),
                Case("zero", 0),
                Case("a list", [5, 10], OK),
            ],
            "n_clusters": [
                *NOT_A_NUMBER[:2],
                *NOT_FINITE,
                Case("zero", 0),
                Case("negative", -5),
                Case("one (df = 0)", 1, names=("df_adjust",), also={"mean_cluster_size": None}),
                Case("more than the texts", 500, also={"mean_cluster_size": None}),
            ],
            "df_adjust": choice_kind(registry.DF_ADJUST),
            "confidence_level": level_kind(broadcasts=True),
        },
        [
            (
                "shapes that do not broadcast",
                {"n_texts": [100, 200], "icc": [0.1, 0.2, 0.3]},
                RAISES,
                ("n_texts", "icc"),
            ),
            ("neither icc nor design_effect", {"icc": None}, RAISES, ("design_effect",)),
            (
                "icc without a cluster size",
                {"mean_cluster_size": None},
                RAISES,
                ("design_effect", "mean_cluster_size"),
            ),
            ("both icc and design_effect", {"design_effect": 2.0}, RAISES, ("design_effect",)),
        ],
    ),
    Entry(
        "effective_sample_size (design_effect)",
        pc.effective_sample_size,
        {"n_texts": 400, "design_effect": 2.0, "n_clusters": 40},
        ("n_texts",),
        {
            "design_effect": [
                *NOT_A_NUMBER[:2],
                *NOT_FINITE,
                Case("zero", 0),
                Case("negative", -1),
                Case("a list", [1.5, 2.0], OK),
            ],
            "n_clusters": [
                Case("None, with a df adjustment", None, names=("n_clusters",)),
                Case("one", 1, names=("df_adjust",)),
                Case("a fraction", 40.5, OK),
            ],
        },
    ),
    *(
        Entry(
            function.__name__,
            function,
            {"method": "wilson", "n": 10, "p": 0.5},
            ("method", "n", "p"),
            {
                "method": [
                    *choice_kind(registry.EXACT_METHOD),
                    Case("a pseudo-count pattern without a number", "pseudo_percentile_"),
                    Case("a negative pseudo count", "pseudo_percentile_-1"),
                    Case("a pseudo count beyond any sample", f"pseudo_percentile_{10**16}"),
                    Case("a pseudo-count pattern", "pseudo_percentile_2", OK),
                ],
                "n": [*positive_kind(integer=True), Case("an empty list", [], OK)],
                "p": probability_kind(),
                "confidence_level": level_kind(broadcasts=True),
            },
            [
                ("shapes that do not broadcast", {"n": [10, 20], "p": [0.1] * 3}, RAISES, ("n",)),
                (
                    "a size whose enumeration does not fit in memory",
                    {"n": 10**12},
                    RAISES,
                    ("n",),
                ),
            ],
        )
        for function in (pc.exact_coverage, pc.expected_half_width, pc.operating_characteristics)
    ),
    Entry(
        "bootstrap_ci",
        pc.bootstrap_ci,
        {"counts": [40, 6, 9, 45], "metric": "f1", "n_resamples": 200, "rng": 1},
        ("counts", "metric"),
        {
            "counts": cells_kind(4, zeros=RAISES),
            "metric": [
                *choice_kind(registry.BOOTSTRAP_METRIC),
                Case("a two-cell metric", "proportion", names=("counts",)),
            ],
            "scheme": choice_kind(registry.BOOTSTRAP_SCHEME),
            "interval": choice_kind(registry.BOOTSTRAP_INTERVAL),
            "pseudo_count": pseudo_count_kind(),
            "n_resamples": resamples_kind(
                extra=(
                    Case("'exact' for f1", "exact"),
                    Case("more than memory holds", 10**12),
                    Case("40 at 99%", 40, also={"confidence_level": 0.99}),
                    Case("199 at 99%", 199, also={"confidence_level": 0.99}),
                    Case("200 at 99%", 200, OK, also={"confidence_level": 0.99}),
                    Case("39 for BCa", 39, also={"interval": "bca"}),
                )
            ),
            "confidence_level": level_kind(),
            "rng": rng_kind(),
            "batch": positive_int_kind(optional=True),
            "nested": bool_kind(optional=True),
            "draws": choice_kind(registry.BOOTSTRAP_DRAWS),
        },
        [
            (
                "a cluster bootstrap of one person",
                {"counts": [[40, 6, 9, 45]], "scheme": "cluster"},
                RAISES,
                ("counts",),
            ),
            (
                "a hierarchical bootstrap of one person",
                {"counts": [[40, 6, 9, 45]], "scheme": "hierarchical"},
                RAISES,
                ("counts",),
            ),
            (
                "a cluster bootstrap of one person and a pseudo-person",
                {"counts": [[40, 6, 9, 45]], "scheme": "cluster", "pseudo_count": 1},
                RAISES,
                ("counts",),
            ),
            (
                "BCa of one person",
                {"counts": [[40, 6, 9, 45]], "scheme": "cluster", "interval": "bca"},
                RAISES,
                ("counts",),
            ),
            (
                "one person among persons without texts",
                {"counts": [[40, 6, 9, 45], [0, 0, 0, 0]], "scheme": "cluster"},
                RAISES,
                ("counts",),
            ),
            (
                "no persons",
                {"counts": np.zeros((0, 4)), "scheme": "cluster"},
                RAISES,
                ("counts",),
            ),
            (
                "leading axes that do not say what they are",
                {"counts": [[40, 6, 9, 45], [3, 1, 2, 4]]},
                RAISES,
                ("nested",),
            ),
            (
                "a cluster scheme with nested=False",
                {"counts": [[40, 6, 9, 45], [3, 1, 2, 4]], "scheme": "cluster", "nested": False},
                RAISES,
                ("scheme",),
            ),
            (
                "a fraction inside",
                {"counts": [40.5, 6, 9, 45]},
                RAISES,
                ("counts",),
            ),
            (
                "more texts than binomial draws hold",
                {"counts": [1e20, 6, 9, 45]},
                RAISES,
                ("counts",),
            ),
            (
                "a 1 x 1 matrix for a macro average",
                {"counts": [[5]], "metric": "macro_f1"},
                RAISES,
                ("counts",),
            ),
            (
                "a matrix that is not square",
                {"counts": [[5, 1, 2], [1, 5, 2]], "metric": "macro_f1"},
                RAISES,
                ("counts",),
            ),
            (
                "a metric undefined in every resample",
                {"counts": [0, 5, 0, 5], "metric": "recall"},
                RAISES,
                ("metric",),
            ),
            (
                "a batch of no data sets",
                {"counts": np.zeros((0, 2, 4)), "scheme": "cluster"},
                OK,
                (),
            ),
        ],
    ),
    Entry(
        "compute_metric",
        pc.compute_metric,
        {"counts": [40, 6, 9, 45], "metric": "f1"},
        ("counts", "metric"),
        {"counts": cells_kind(4), "metric": choice_kind(registry.METRIC)},
        [
            ("a macro average of one matrix row", {"metric": "macro_f1"}, RAISES, ("counts",)),
            (
                "a macro average of no classes",
                {"counts": np.zeros((0, 4)), "metric": "macro_f1"},
                RAISES,
                ("counts",),
            ),
            ("no data sets", {"counts": np.zeros((0, 4))}, OK, ()),
        ],
    ),
    Entry(
        "proportion_counts",
        pc.proportion_counts,
        {"counts": [40, 6, 9, 45], "metric": "recall"},
        ("counts", "metric"),
        {"counts": cells_kind(4, zeros=OK), "metric": choice_kind(registry.PROPORTION_METRIC)},
        [("a metric that is not a proportion", {"metric": "f1"}, RAISES, ("metric",))],
    ),
    Entry(
        "metric_ci",
        pc.metric_ci,
        {"y_true": Y, "y_pred": P, "metric": "f1", "n_resamples": 200, "rng": 1},
        ("y_true", "y_pred", "metric"),
        {
            "y_true": labels_kind("y_true"),
            "y_pred": labels_kind("y_pred"),
            "metric": choice_kind(registry.ANY_METRIC),
            "groups": groups_kind(),
            "method": choice_kind(registry.METRIC_CI_METHOD),
            "positive": label_kind(),
            "confidence_level": level_kind(),
            "design": also(
                choice_kind(registry.DESIGN, none_ok=True),
                metric="recall",
                groups=G,
                n_resamples="recommended",
            ),
            "df_adjust": also(
                choice_kind(registry.DF_ADJUST),
                metric="recall",
                groups=G,
                n_resamples="recommended",
            ),
            "scheme": choice_kind(registry.BOOTSTRAP_SCHEME, none_ok=True),
            "interval": choice_kind(registry.BOOTSTRAP_INTERVAL),
            "pseudo_count": pseudo_count_kind(recommended=True),
            "n_resamples": resamples_kind(extra=(Case("'exact' for f1", "exact"),)),
            "rng": rng_kind(),
            "estimand": [
                Case("an estimand of repeated runs with one run", "new_run"),
                Case("None (the default)", None, OK),
            ],
        },
        [
            (
                "pseudo_count=-1 for a proportion metric",
                {"metric": "recall", "n_resamples": "recommended", "pseudo_count": -1},
                RAISES,
                ("pseudo_count",),
            ),
            (
                "a bad rng for an analytic interval",
                {"metric": "recall", "n_resamples": "recommended", "rng": "abc"},
                RAISES,
                ("rng",),
            ),
            (
                "a design for the bootstrap",
                {"design": "icc", "groups": G},
                RAISES,
                ("design",),
            ),
            (
                "an analytic method for f1",
                {"method": "wilson"},
                RAISES,
                ("method",),
            ),
            (
                "a cluster scheme without groups",
                {"scheme": "cluster"},
                RAISES,
                ("scheme",),
            ),
            (
                "one person with a cluster scheme",
                {"groups": ["a"] * len(Y), "scheme": "cluster"},
                RAISES,
                ("groups",),
            ),
            (
                "a metric undefined for the data",
                {"y_true": [0] * len(Y), "metric": "recall", "n_resamples": "recommended"},
                NAN,
                (),
            ),
        ],
    ),
    Entry(
        "metric_ci weighted",
        pc.metric_ci,
        {"y_true": Y, "y_pred": P, "metric": "recall", "strata": P, "stratum_sizes": SIZES},
        ("y_true", "y_pred", "metric"),
        {
            **design_kinds(),
            "method": choice_kind(registry.WEIGHTED_METHOD),
        },
        [
            (
                "a bootstrap option",
                {"n_resamples": 200},
                RAISES,
                ("n_resamples",),
            ),
            (
                "a metric without a design-based interval",
                {"metric": "roc_auc"},
                RAISES,
                ("metric",),
            ),
            (
                "a lonely stratum",
                {"strata": ["x", *P[1:]], "stratum_sizes": None},
                RAISES,
                ("strata",),
            ),
        ],
    ),
    Entry(
        "compare_many",
        pc.compare_many,
        {"y_true": Y, "preds": {"a": P, "b": Q, "c": MACHINE}, "metric": "recall"},
        ("y_true", "preds", "metric"),
        {
            "y_true": labels_kind("y_true"),
            "preds": [
                Case("None", None),
                Case("a scalar", 1),
                Case("one classifier", {"a": P}),
                Case("a 1-D list", P),
                Case("a column too short", {"a": P, "b": Q[:-1]}, names=("preds", "y_true")),
                Case("NaN inside", {"a": [np.nan, *P[1:]], "b": Q}, names=("preds",)),
                Case("a 2-D array", np.column_stack([P, Q, MACHINE]), OK),
                Case("a DataFrame", pd.DataFrame({"a": P, "b": Q}), OK),
            ],
            "metric": choice_kind(registry.BINARY_METRIC),
            "groups": groups_kind(),
            "baseline": [
                Case("an unknown classifier", "z"),
                Case("a list", ["a"]),
                Case("a known classifier", "a", OK),
            ],
            "confidence_level": level_kind(),
            "rng": also(rng_kind(), preds={"a": P, "b": Q}),  # two draw a bootstrap
            "adjust": choice_kind(registry.MANY_ADJUST),
            "positive": label_kind(),
        },
    ),
    Entry(
        "rank_ci",
        pc.rank_ci,
        {"y_true": Y, "preds": {"a": P, "b": Q, "c": MACHINE}, "metric": "recall"},
        ("y_true", "preds", "metric"),
        {
            "y_true": labels_kind("y_true"),
            "preds": [Case("one classifier", {"a": P}), Case("a scalar", 1)],
            "metric": choice_kind(registry.BINARY_METRIC),
            "groups": groups_kind(),
            "confidence_level": level_kind(),
            "positive": label_kind(),
        },
    ),
    Entry(
        "cv_ci",
        pc.cv_ci,
        {"y_true": Y, "y_pred": P, "metric": "recall", "folds": FOLDS, "groups": G},
        ("y_true", "y_pred", "metric"),
        {
            "y_true": labels_kind("y_true"),
            "y_pred": [
                Case("None", None),
                Case("a scalar", 1),
                Case("one label too few", P[:-1]),
                Case("NaN inside", [np.nan, *P[1:]]),
                Case("3-D", np.zeros((40, 2, 2))),
                Case("two repeats", np.column_stack([P, Q]), OK),
            ],
            "metric": choice_kind(registry.BINARY_METRIC),
            "folds": [
                Case("None", None),
                Case("one fold too few", FOLDS[:-1]),
                Case("None inside", [None, *FOLDS[1:]]),
                Case("one fold", [0] * len(Y)),
                Case("folds of texts", [i % 5 for i in range(len(Y))]),
                Case("three columns for one", np.column_stack([FOLDS] * 3)),
                Case("fold names", [f"f{f}" for f in FOLDS], OK),
            ],
            "groups": [
                Case("a scalar", "a"),
                Case("one id too few", G[:-1]),
                Case("None inside", [None, *G[1:]]),
                Case("one person in every fold", ["a"] * len(Y), names=("folds",)),
                Case("None: texts as units", None, OK),
            ],
            "method": choice_kind(registry.CV_METHOD),
            "confidence_level": level_kind(),
            "positive": label_kind(),
        },
    ),
    Entry(
        "grouped_folds",
        pc.grouped_folds,
        {"n_folds": 3, "groups": G},
        ("n_folds",),
        {
            "n_folds": positive_int_kind(extra=(Case("more than the persons", 11),)),
            "groups": [Case("a scalar", "a"), Case("None inside", [None, *G[1:]])],
            "n_texts": [
                Case("a string", "40", also={"groups": None}),
                Case("one", 1, also={"groups": None}),
                Case("forty", 40, OK, also={"groups": None}),
            ],
            "repeats": positive_int_kind(),
            "rng": rng_kind(),
        },
        [("neither groups nor n_texts", {"groups": None}, RAISES, ("groups", "n_texts"))],
    ),
    Entry(
        "nested_cv_ci",
        pc.nested_cv_ci,
        {
            "estimator": MeanCut(),
            "X": np.asarray(S, dtype=float)[:, None],
            "y_true": Y,
            "metric": "accuracy",
            "groups": G,
            "n_folds": 3,
            "repeats": 2,
        },
        ("estimator", "X", "y_true", "metric"),
        {
            "estimator": [
                Case("None", None),
                Case("no predict", type("OnlyFit", (), {"fit": lambda self, x, y: self})()),
                Case("a wrong-length prediction", MeanCut(short=True)),
            ],
            "X": [Case("one row too few", np.asarray(S[:-1], dtype=float)[:, None])],
            "y_true": labels_kind("y_true"),
            "metric": choice_kind(registry.BINARY_METRIC),
            "groups": [Case("one id too few", G[:-1]), Case("None inside", [None, *G[1:]])],
            "n_folds": positive_int_kind(extra=(Case("two", 2), Case("more than persons", 11))),
            "repeats": positive_int_kind(),
            "bias_repeats": [
                Case("negative", -1),
                Case("a fraction", 0.5),
                Case("zero", 0, OK),
                Case("None", None, OK),
            ],
            "confidence_level": level_kind(),
            "positive": label_kind(),
            "rng": rng_kind(),
        },
    ),
    Entry(
        "report weighted",
        pc.report,
        {"y_true": Y, "y_pred": P, "metrics": ["recall"], "strata": P, "stratum_sizes": SIZES},
        ("y_true", "y_pred"),
        design_kinds(),
        [
            ("a score", {"score": S}, RAISES, ("score",)),
            ("bayes", {"bayes": True}, RAISES, ("bayes",)),
            ("subgroups as domains", {"by": BY}, OK, ()),
        ],
    ),
    Entry(
        "compare weighted",
        pc.compare,
        {
            "y_true": Y,
            "pred_a": P,
            "pred_b": Q,
            "metric": "recall",
            "strata": P,
            "stratum_sizes": SIZES,
        },
        ("y_true", "pred_a", "pred_b", "metric"),
        design_kinds(),
        [
            ("a bootstrap option", {"n_resamples": 200}, RAISES, ("n_resamples",)),
            ("a method", {"method": "bootstrap"}, RAISES, ("method",)),
            ("runs", {"pred_a": RUNS}, RAISES, ("weights", "strata", "stratum_sizes")),
        ],
    ),
    Entry(
        "compare_groups weighted",
        _compare_groups_ends,
        {
            "y_true": Y,
            "y_pred": P,
            "metric": "recall",
            "by": BY,
            "strata": P,
            "stratum_sizes": SIZES,
        },
        ("y_true", "y_pred", "metric", "by"),
        design_kinds(),
        [
            ("a band", {"simultaneous": "bonferroni"}, RAISES, ("simultaneous",)),
            ("an unknown reference", {"reference": "z"}, RAISES, ("reference",)),
        ],
    ),
    Entry(
        "report",
        pc.report,
        {"y_true": Y, "y_pred": P, "metrics": ["recall", "f1"], "n_resamples": 100, "rng": 1},
        ("y_true", "y_pred"),
        {
            "y_true": labels_kind("y_true"),
            "y_pred": labels_kind("y_pred"),
            "groups": [c for c in groups_kind() if c.label != "one person"],
            "by": [
                Case("a scalar", "x"),
                Case("one label too few", ["a"] * (len(Y) - 1)),
                Case("None inside", [None] * len(Y)),
            ],
            "positive": label_kind(),
            "metrics": metrics_list_kind(),
            "confidence_level": level_kind(),
            "design": choice_kind(registry.DESIGN, none_ok=True),
            "df_adjust": choice_kind(registry.DF_ADJUST),
            "n_resamples": resamples_kind(extra=(Case("'exact'", "exact"),)),
            "rng": rng_kind(),
            "bayes": bool_kind(),
            "score": [
                Case("a string", "0.5"),
                Case("a scalar", 0.5),
                Case("one score too few", S[:-1]),
                Case("NaN inside", [np.nan, *S[1:]]),
                Case("strings", [str(v) for v in S]),
                Case("a 2-D array", [S]),
                Case(
                    "scores",
                    S,
                    OK,
                    also={"metrics": ["recall", "roc_auc"]},
                    check=lambda t: list(t["metric"]) == ["recall", "roc_auc"],
                ),
            ],
            "differences": also(bool_kind(), by=BY),
            "reference": also(label_kind(), by=BY, differences=True),
            "bayes_prior_sensitivity": also(bool_kind(), bayes=True, bayes_sampler="grid"),
        },
        [
            (
                "bayes_prior_sensitivity without bayes",
                {"bayes_prior_sensitivity": True},
                RAISES,
                ("bayes_prior_sensitivity", "bayes"),
            ),
            (
                "roc_auc without a score",
                {"metrics": ["roc_auc"]},
                RAISES,
                ("metrics", "score"),
            ),
            (
                "an unknown bayes_sampler with bayes=True",
                {"bayes": True, "bayes_sampler": None},
                RAISES,
                ("bayes_sampler",),
            ),
            ("differences without by", {"differences": True}, RAISES, ("differences", "by")),
            (
                "differences with a person in two subgroups",
                {"differences": True, "by": BY, "groups": [f"p{i % 10}" for i in range(40)]},
                RAISES,
                ("groups",),
            ),
            ("differences between subgroups", {"differences": True, "by": BY}, OK, ()),
        ],
    ),
    Entry(
        "compare_groups",
        _compare_groups_ends,
        {"y_true": Y, "y_pred": P, "metric": "recall", "by": BY},
        ("y_true", "y_pred", "metric", "by"),
        {
            "y_true": labels_kind("y_true"),
            "y_pred": labels_kind("y_pred"),
            "metric": [*choice_kind(registry.BINARY_METRIC), Case("a macro average", "macro_f1")],
            "by": [
                Case("None", None),
                Case("a scalar", "x"),
                Case("empty", []),
                Case("one label too few", BY[:-1]),
                Case("None inside", [None, *BY[1:]]),
                Case("one subgroup", ["a"] * len(Y)),
                Case("a reference without relevant texts", ["ab"[y] for y in Y], NAN),
            ],
            "groups": groups_kind(),
            "reference": [
                *(c for c in label_kind() if c.label != "a label not among the labels"),
                Case("not one of the subgroups", "c"),
                Case("the second subgroup", "b", OK),
            ],
            "confidence_level": level_kind(),
            "method": [
                *choice_kind(registry.GROUP_METHOD),
                Case("newcombe for f1", "newcombe", also={"metric": "f1"}),
                Case("newcombe with groups", "newcombe", also={"groups": G}),
                Case("the bootstrap", "bootstrap", OK, also={"n_resamples": 200}),
            ],
            "simultaneous": choice_kind(registry.SIMULTANEOUS),
            "positive": label_kind(),
            "n_resamples": also(
                resamples_kind(extra=(Case("'exact'", "exact"), Case("too many", 10**12))),
                method="bootstrap",
            ),
            "rng": rng_kind(),
        },
        [
            (
                "bootstrap resamples with the cluster-robust interval",
                {"groups": G, "n_resamples": 500},
                RAISES,
                ("n_resamples",),
            ),
            (
                "a subgroup of one person",
                {"groups": G, "by": ["a"] * 4 + ["b"] * 36},
                NAN,
                (),
            ),
            (
                "a max-t band over three subgroups",
                # a person a text: 3 persons a subgroup would warn of few effective persons
                {
                    "groups": [f"p{i}" for i in range(40)],
                    "by": ["a"] * 12 + ["b"] * 12 + ["c"] * 16,
                    "simultaneous": "max_t",
                },
                OK,
                (),
            ),
        ],
    ),
    Entry(
        "compare_groups_counts",
        _group_difference_ends,
        {"counts": [40, 5, 10, 45], "reference_counts": [60, 4, 5, 31], "metric": "recall"},
        ("counts", "reference_counts", "metric"),
        {
            "counts": cells_kind(4),
            "reference_counts": cells_kind(4),
            "metric": choice_kind(registry.BINARY_METRIC),
            "nested": bool_kind(),
            "method": [
                *choice_kind(registry.GROUP_METHOD),
                Case("newcombe for f1", "newcombe", also={"metric": "f1"}),
            ],
            "confidence_level": level_kind(),
            "n_resamples": also(
                resamples_kind(extra=(Case("'exact'", "exact"), Case("too many", 10**12))),
                method="bootstrap",
            ),
            "rng": rng_kind(),
        },
        [
            (
                "batch shapes that differ",
                {"counts": [[40, 5, 10, 45], [4, 1, 1, 4]]},
                RAISES,
                ("reference_counts",),
            ),
            ("a fraction inside", {"counts": [40.5, 5, 10, 45]}, RAISES, ("counts",)),
            (
                "one person each, nested",
                {"counts": [[40, 5, 10, 45]], "reference_counts": [[6, 4, 5, 31]], "nested": True},
                NAN,
                (),
            ),
            (
                "no person axis, nested",
                {"nested": True},
                RAISES,
                ("counts",),
            ),
        ],
    ),
    Entry(
        "compare",
        pc.compare,
        # n_resamples left at its default: with groups the recommended method is not the
        # bootstrap, and a bootstrap option passed to another method is an error
        {"y_true": Y, "pred_a": P, "pred_b": Q, "metric": "recall", "rng": 1},
        ("y_true", "pred_a", "pred_b", "metric"),
        {
            "y_true": [
                Case("None", None),
                Case("a scalar", 1),
                Case("empty", [], also={"pred_a": [], "pred_b": []}),
                Case("one label too few", Y[:-1], names=("pred_a",)),
                Case("NaN inside", [np.nan, *Y[1:]]),
                Case("three classes", [2, *Y[1:]], names=("y_true", "positive")),
            ],
            "pred_a": [
                Case("one label too few", P[:-1]),
                Case("None inside", [None, *P[1:]]),
                Case("a 2-D array of another shape", [P]),
            ],
            "estimand": [
                Case("an estimand of repeated runs with one run each", "new_run"),
                Case("None (the default)", None, OK),
            ],
            "pred_b": [
                Case("None", None),
                Case("one label too few", Q[:-1]),
                Case("strings of another code", ["yes"] * len(Q), names=("pred_b", "positive")),
            ],
            "metric": [
                *choice_kind(registry.COMPARE_METRIC),
                Case("a macro average", "macro_f1"),
            ],
            "method": [
                *choice_kind(registry.COMPARE_METHOD),
                Case("newcombe for f1", "newcombe", also={"metric": "f1"}, names=("method",)),
            ],
            "groups": groups_kind(),
            "positive": label_kind(),
            "confidence_level": level_kind(),
            "scheme": choice_kind(registry.BOOTSTRAP_SCHEME, none_ok=True),
            "interval": choice_kind(registry.BOOTSTRAP_INTERVAL),
            "pseudo_count": pseudo_count_kind(),
            "n_resamples": resamples_kind(
                extra=(
                    Case("'exact'", "exact"),
                    Case("more than memory holds", 10**12),
                )
            ),
            "rng": rng_kind(),
        },
        [
            (
                "a cluster scheme without groups",
                {"scheme": "cluster"},
                RAISES,
                ("scheme",),
            ),
            (
                "one person with a cluster scheme",
                {"groups": ["a"] * len(Y), "method": "bootstrap", "scheme": "cluster"},
                RAISES,
                ("groups",),
            ),
            (
                "one person with a hierarchical scheme",
                {"groups": ["a"] * len(Y), "method": "bootstrap", "scheme": "hierarchical"},
                RAISES,
                ("groups",),
            ),
            (
                "one person with the nested Newcombe interval",
                {"groups": ["a"] * len(Y), "method": "newcombe"},
                RAISES,
                ("groups",),
            ),
            (
                "a bootstrap scheme with the cluster-robust interval",
                {"groups": G, "scheme": "cluster"},
                RAISES,
                ("scheme",),
            ),
            (
                "bootstrap resamples with the cluster-robust interval",
                {"groups": G, "n_resamples": 500},
                RAISES,
                ("n_resamples",),
            ),
        ],
    ),
    Entry(
        "runs_ci(source)",
        pc.runs_ci,
        {"y_true": Y, "y_pred": RUNS, "metric": "recall"},
        ("y_true", "y_pred", "metric"),
        {"source": choice_kind(registry.RUN_SOURCE)},
    ),
    Entry(
        "metric_ci(runs)",
        pc.metric_ci,
        {"y_true": Y, "y_pred": RUNS, "metric": "recall"},
        ("y_true", "y_pred", "metric"),
        {
            "y_pred": [
                Case("one run as a column", [[v] for v in P]),
                Case("a row too few", RUNS[:-1], names=("y_pred",)),
                Case("None inside", [[None, v] for v in P]),
            ],
            "estimand": choice_kind(registry.RUN_ESTIMAND, none_ok=True),
            "method": choice_kind(registry.RUN_METHOD),
            "metric": [Case("a multi-class average", "macro_f1")],
        },
        [
            ("a design with runs", {"design": "icc"}, RAISES, ("design",)),
            ("a scheme with runs", {"scheme": "iid"}, RAISES, ("scheme",)),
            (
                "resamples with the analytic interval",
                {"n_resamples": 100},
                RAISES,
                ("n_resamples",),
            ),
            (
                "the two-way bootstrap",
                {"method": "bootstrap", "n_resamples": 100, "rng": 1, "groups": G},
                OK,
                (),
            ),
            ("the majority vote", {"estimand": "majority"}, OK, ()),
        ],
    ),
    Entry(
        "metric_ci(annotators)",
        pc.metric_ci,
        {"y_true": CODERS, "y_pred": P, "metric": "accuracy"},
        ("y_true", "y_pred", "metric"),
        {
            "y_true": [
                Case("one annotator as a column", [[y] for y in Y]),
                Case("a text no annotator coded", [[None, None], *CODERS[1:]]),
                Case("a row too few", CODERS[:-1], names=("y_pred",)),
            ],
            "estimand": choice_kind(registry.ANNOTATOR_ESTIMAND, none_ok=True),
            "method": choice_kind(registry.RUN_METHOD),
        },
        [
            ("a design with annotators", {"design": "icc"}, RAISES, ("design",)),
            ("runs with annotators", {"y_pred": RUNS}, RAISES, ("y_true", "y_pred")),
            ("the mean of these annotators", {"estimand": "these_annotators"}, OK, ()),
        ],
    ),
    Entry(
        "compare(runs)",
        pc.compare,
        {"y_true": Y, "pred_a": RUNS, "pred_b": Q, "metric": "recall"},
        ("y_true", "pred_a", "pred_b", "metric"),
        {
            "estimand": [
                Case("the majority", "majority"),
                Case("a number", 3),
                Case("these runs", "these_runs", OK),
            ],
            "pred_b": [Case("a row too few", Q[:-1])],
        },
        [
            ("a bootstrap scheme with runs", {"scheme": "iid"}, RAISES, ("scheme",)),
            ("a method with runs", {"method": "bootstrap"}, RAISES, ("method",)),
            ("runs for both", {"pred_b": RUNS, "groups": G}, OK, ()),
        ],
    ),
    Entry(
        "metric_ci(roc_auc)",
        pc.metric_ci,
        {"y_true": Y, "y_pred": S, "metric": "roc_auc"},
        ("y_true", "y_pred", "metric"),
        {
            "y_pred": scores_kind("y_pred"),
            "method": also(choice_kind(registry.METRIC_CI_AUC_METHOD), n_resamples=200),
        },
        [
            ("a design for roc_auc", {"design": "icc"}, RAISES, ("design",)),
            ("a df adjustment for roc_auc", {"df_adjust": None}, RAISES, ("df_adjust",)),
            ("a pseudo count for roc_auc", {"pseudo_count": 1}, RAISES, ("pseudo_count",)),
            ("an analytic method for roc_auc", {"method": "wilson"}, RAISES, ("method",)),
            ("a scheme with DeLong", {"scheme": "iid"}, RAISES, ("scheme",)),
            (
                "the bootstrap with the recommended options",
                {"method": "bootstrap", "rng": 1, "groups": G},
                OK,
                (),
            ),
        ],
    ),
    Entry(
        "auc_ci",
        pc.auc_ci,
        {"y_true": Y, "y_score": S},
        ("y_true", "y_score"),
        {
            "y_true": auc_labels_kind(),
            "y_score": scores_kind("y_score"),
            "groups": groups_kind(),
            "method": choice_kind(registry.AUC_METHOD),
            "confidence_level": level_kind(),
            "positive": label_kind(),
            **auc_bootstrap_kinds(),
        },
        auc_extra("y_score"),
    ),
    Entry(
        "compare_auc",
        pc.compare_auc,
        {"y_true": Y, "score_a": S, "score_b": T},
        ("y_true", "score_a", "score_b"),
        {
            "y_true": auc_labels_kind(),
            "score_a": scores_kind("score_a"),
            "score_b": scores_kind("score_b"),
            "groups": groups_kind(),
            "method": choice_kind(registry.COMPARE_AUC_METHOD),
            "confidence_level": level_kind(),
            "positive": label_kind(),
            **auc_bootstrap_kinds(),
        },
        auc_extra("score_a"),
    ),
    Entry(
        "annotator_agreement",
        _agreement_ends,
        {"codes": CODES},
        ("codes",),
        {
            "codes": codes_kind("codes"),
            "groups": groups_kind(),
            "statistic": choice_kind(registry.AGREEMENT_STATISTIC),
            "method": [
                *choice_kind(registry.AGREEMENT_METHOD),
                Case("asymptotic for Krippendorff's alpha", "asymptotic"),
                Case("asymptotic for two annotators", "asymptotic", OK, also={"codes": PAIR}),
            ],
            "confidence_level": level_kind(),
            "level_of_measurement": [
                *choice_kind(registry.LEVEL_OF_MEASUREMENT),
                Case("ordinal for the kappas", "ordinal", also={"statistic": "fleiss_kappa"}),
                Case(
                    "interval of text codes", "interval", also={"codes": [["a", "b"], ["b", "b"]]}
                ),
                Case("ratio of negative codes", "ratio", also={"codes": [[-1, 1], [1, 1]]}),
                Case("ordinal of numbers", "ordinal", OK),
            ],
            "categories": categories_kind(),
            **auc_bootstrap_kinds(),
        },
        [
            *agreement_extra(),
            (
                "Cohen's kappa of three annotators",
                {"statistic": "cohen_kappa"},
                RAISES,
                ("statistic",),
            ),
            (
                "Fleiss' kappa of missing codes",
                {"statistic": "fleiss_kappa"},
                RAISES,
                ("statistic",),
            ),
            (
                "Fleiss' kappa of two complete annotators",
                {"codes": PAIR, "statistic": "fleiss_kappa"},
                OK,
                (),
            ),
        ],
    ),
    Entry(
        "agreement_report",
        _agreement_report_ends,
        {"human_codes": CODES, "machine_labels": MACHINE},
        ("human_codes", "machine_labels"),
        {
            "human_codes": [
                *(c for c in codes_kind("human_codes") if c.label != "one code only"),
                Case("one code only", [[1, 1]] * 40, NAN, also={"machine_labels": [1] * 40}),
            ],
            "machine_labels": [
                *labels_kind("machine_labels")[:3],
                Case("one label too few", MACHINE[:-1]),
                Case("NaN inside", [np.nan, *MACHINE[1:]]),
                Case("a 2-D array", [[q] for q in MACHINE]),
                Case("text beside numbers", ["a"] * len(MACHINE)),
            ],
            "groups": groups_kind(),
            "method": choice_kind(registry.AGREEMENT_METHOD),
            "confidence_level": level_kind(),
            "categories": categories_kind(),
            **auc_bootstrap_kinds(),
        },
        agreement_extra(),
    ),
    Entry(
        "compare(roc_auc)",
        pc.compare,
        {"y_true": Y, "pred_a": S, "pred_b": T, "metric": "roc_auc"},
        ("y_true", "pred_a", "pred_b", "metric"),
        {"pred_b": scores_kind("pred_b")},
        [
            ("a pseudo count for roc_auc", {"pseudo_count": 1}, RAISES, ("pseudo_count",)),
            ("newcombe for roc_auc", {"method": "newcombe"}, RAISES, ("method",)),
            ("the paired bootstrap", {"method": "bootstrap", "n_resamples": 200, "rng": 1}, OK, ()),
        ],
    ),
    Entry(
        "plan_sample_size",
        pc.plan_sample_size,
        {"metric_value": 0.9, "half_width": 0.05},
        ("metric_value", "half_width"),
        {
            "metric_value": real_scalar_kind(0.0, 1.0),
            "half_width": [*real_scalar_kind(0.0, 0.5), Case("too small to plan", 1e-9)],
            "confidence_level": level_kind(),
            "method": choice_kind(registry.PLAN_METHOD),
            "pseudo_count": [
                *(c for c in pseudo_count_kind() if c.label not in ("zero", "a numpy integer")),
                Case("for an analytic method", 1),
                Case("for the percentile bootstrap", 1, OK, also={"method": "percentile"}),
                Case(
                    "a numpy integer for the percentile bootstrap",
                    np.int64(1),
                    OK,
                    also={"method": "percentile"},
                ),
            ],
            "prevalence": [*real_scalar_kind(0.0, 1.0, none=OK), Case("1", 1.0, OK)],
            "icc": [
                *also(
                    real_scalar_kind(0.0, 1.0, closed=True),
                    texts_per_person=5,
                    method="agresti_coull",
                ),
                Case("without texts_per_person", 0.1, names=("icc", "texts_per_person")),
            ],
            "texts_per_person": [
                *also(
                    real_scalar_kind(1.0, None, closed=True),
                    icc=0.1,
                    method="agresti_coull",
                ),
                Case("without icc", 5, names=("icc", "texts_per_person")),
            ],
            "df_adjust": choice_kind(registry.DF_ADJUST),
            "cluster_size_cv": [
                *also(
                    real_scalar_kind(0.0, None, closed=True),
                    icc=0.1,
                    texts_per_person=5,
                    method="agresti_coull",
                ),
                Case("large", 3.0, OK, also={"icc": 0.1, "texts_per_person": 5}),
                Case("without icc and texts_per_person", 0.5),
                Case("zero without icc", 0.0, OK),
            ],
        },
        [
            (
                "a nested plan for the bootstrap",
                {"icc": 0.1, "texts_per_person": 5, "method": "percentile"},
                RAISES,
                ("method",),
            ),
        ],
    ),
    Entry(
        "plan_stratified_sample",
        pc.plan_stratified_sample,
        {"metric": "recall", "half_width": 0.2, **STRATIFIED_CORPUS},
        ("metric", "half_width"),
        {
            "metric": [
                *choice_kind(registry.STRATIFIED_PLAN_METRIC),
                Case("a metric it does not plan", "accuracy"),
                Case("f1", "f1", OK),
                Case("precision without a rate", "precision", OK, {"false_omission_rate": None}),
            ],
            "half_width": [*real_scalar_kind(0.0, 0.5), Case("too small to plan", 1e-9)],
            **stratified_corpus_kinds(),
            "confidence_level": level_kind(),
            "allocation": [*choice_kind(registry.ALLOCATION), Case("equal", "equal", OK)],
            "method": [
                *choice_kind(registry.STRATIFIED_PLAN_METHOD),
                Case("logit", "logit", OK),
                Case("the recommended interval", "poststratified"),
            ],
        },
        [
            (
                "a rate that rounds to no false negative",
                {"false_omission_rate": 1e-6},
                RAISES,
                ("false_omission_rate",),
            ),
            (
                "a pilot without predicted negatives for recall",
                {"ppv": None, "false_omission_rate": None, "pilot": [STRATA[0], [0, 0, 0, 0]]},
                RAISES,
                ("pilot",),
            ),
        ],
    ),
    Entry(
        "stratified_planning.expected_stratified_half_width",
        expected_stratified_half_width,
        {"metric": "recall", "n1": 20, "n0": 60, **STRATIFIED_CORPUS},
        ("metric", "n1", "n0"),
        {
            "metric": choice_kind(registry.STRATIFIED_PLAN_METRIC),
            "n1": coded_texts_kind(200),
            "n0": [
                *coded_texts_kind(50000),
                Case("zero for precision", 0, OK, also={"metric": "precision"}),
            ],
            **stratified_corpus_kinds(design=True),
            "confidence_level": level_kind(),
            "method": choice_kind(registry.STRATIFIED_PLAN_METHOD),
        },
        [
            (
                "fewer corpus texts than coded",
                {"predicted_positive": 10},
                RAISES,
                ("n1", "ppv"),
            ),
        ],
    ),
    Entry(
        "half_width_curves",
        pc.half_width_curves,
        {"n": [20, 40], "metric_value": [0.8, 0.9]},
        ("n", "metric_value"),
        {
            "n": [
                *positive_kind(integer=True),
                Case("a fraction inside", [20, 40.5]),
                Case("empty", [], OK),
            ],
            "metric_value": probability_kind(),
            "confidence_level": level_kind(),
            "method": choice_kind(registry.PLAN_METHOD),
            "pseudo_count": [
                *(c for c in pseudo_count_kind() if c.label not in ("zero", "a numpy integer")),
                Case("for an analytic method", 1),
            ],
            "icc": [
                *also([c for c in probability_kind() if c.label != "None"], texts_per_person=5),
                Case("without texts_per_person", 0.1, names=("icc", "texts_per_person")),
            ],
            "texts_per_person": [
                Case("zero", 0, also={"icc": 0.1}),
                Case("NaN", np.nan, also={"icc": 0.1}),
                Case("a string", "5", also={"icc": 0.1}),
                Case("without icc", 5, names=("icc", "texts_per_person")),
                Case("too many for 2 persons", 50, OK, also={"icc": 0.1}),
            ],
            "df_adjust": choice_kind(registry.DF_ADJUST),
            "cluster_size_cv": [
                *also(real_scalar_kind(0.0, None, closed=True), icc=0.1, texts_per_person=5),
                Case("without icc and texts_per_person", 0.5),
                Case("zero without icc", 0.0, OK),
            ],
        },
        [
            (
                "nested curves of the bootstrap",
                {"icc": 0.1, "texts_per_person": 5, "method": "percentile"},
                RAISES,
                ("method",),
            ),
        ],
    ),
    Entry(
        "bayes.grid_intervals",
        pc.bayes.grid_intervals,
        {"successes": SUCCESSES, "trials": TRIALS, "shape": (40, 20)},
        ("successes", "trials"),
        {
            **PER_PERSON,
            "estimand": choice_kind(
                registry.ESTIMAND.subset(("population", "mu", "sampled_persons"))
            ),
            "population_sizes": population_sizes_kind(),
            "population_persons": population_persons_kind(),
            "confidence_level": level_kind(),
            "kind": choice_kind(registry.CREDIBLE_INTERVAL),
            "prior": choice_kind(registry.PRIOR),
            "shape": shape_kind(),
            "draws": also(
                positive_int_kind(extra=(Case("more than memory holds", 10**10),)),
                estimand="population",
            ),
            "rng": rng_kind(),
            "batch": positive_int_kind(optional=True),
        },
        [
            (
                "a batch with a data set of one person",
                {"successes": [[3, 2], [3, 0]], "trials": [[5, 5], [5, 0]]},
                RAISES,
                ("trials",),
            ),
            (
                "a batch of no data sets",
                {"successes": np.zeros((0, 3)), "trials": np.zeros((0, 3))},
                OK,
                (),
            ),
        ],
    ),
    Entry(
        "bayes.fit(sampler='grid')",
        pc.bayes.fit_proportion_counts,
        {
            "successes": SUCCESSES,
            "trials": TRIALS,
            "sampler": "grid",
            "draws": 50,
            "chains": 2,
            "grid_shape": (40, 20),
        },
        ("successes", "trials"),
        {
            **PER_PERSON,
            "sampler": choice_kind(registry.SAMPLER),
            "prior": choice_kind(registry.PRIOR),
            "confidence_level": level_kind(),
            "draws": positive_int_kind(extra=(Case("more than memory holds", 10**10),)),
            "tune": positive_int_kind(),
            "chains": positive_int_kind(),
            "rng": rng_kind(),
            "persons": [
                Case("one id too few", ["a", "b", "c"]),
                Case("a scalar", "a"),
                Case("ids", ["a", "b", "c", "d"], OK),
            ],
            "population_sizes": population_sizes_kind(),
            "population_persons": population_persons_kind(),
            "grid_shape": shape_kind(),
        },
        [
            (
                "a batch (fit takes one data set)",
                {"successes": [SUCCESSES], "trials": [TRIALS]},
                RAISES,
                ("successes",),
            ),
        ],
    ),
    Entry(
        "bayes.confusion_posterior",
        pc.bayes.confusion_posterior,
        {"counts": [40, 6, 9, 345]},
        ("counts",),
        {
            "counts": [*cells_kind(4, zeros=OK), Case("a batch", [[4, 1, 1, 3], [4, 1, 1, 3]], OK)],
            "prior": confusion_prior_kind(),
            "multiclass": [
                *bool_kind(),
                Case("a 3 x 3 matrix", True, OK, also={"counts": np.eye(3) * 5}),
                Case("a 1 x 1 matrix", True, names=("counts",), also={"counts": [[5]]}),
            ],
        },
    ),
    Entry(
        "ConfusionPosterior.interval",
        _posterior_interval,
        {},
        (),
        {
            "metric": choice_kind(registry.BINARY_METRIC),
            "kind": choice_kind(registry.CREDIBLE_INTERVAL),
            "confidence_level": level_kind(),
            "draws": also(
                positive_int_kind(extra=(Case("more than memory holds", 10**10),)),
                metric="kappa",
            ),
            "rng": also(rng_kind(), metric="kappa"),
            "batch": also(positive_int_kind(optional=True), metric="kappa"),
        },
    ),
    Entry(
        "bayes.stratified_posterior",
        _stratified_ends,
        {"cells": STRATA, "stratum_sizes": [240, 3140], "metric": "recall", "draws": 300, "rng": 1},
        ("cells", "stratum_sizes", "metric"),
        {
            "cells": [
                *NOT_A_NUMBER,
                Case("one stratum's cells, 1-D", [24, 6, 0, 0]),
                Case("NaN inside", [[np.nan, 6, 0, 0], STRATA[1]]),
                Case("negative", [[-1, 6, 0, 0], STRATA[1]]),
                Case("a fraction", [[2.5, 6, 0, 0], STRATA[1]]),
                Case("strings", [["24", "6", "0", "0"], STRATA[1]]),
                Case("three cells", [[24, 6, 0], [0, 0, 3]]),
                Case("one stratum too many", [*STRATA, [1, 1, 1, 1]]),
                Case("a batch", [STRATA, STRATA], OK, check=lambda e: e.shape == (3, 2)),
                Case(
                    "no relevant text",
                    [[0, 6, 0, 0], [0, 0, 0, 30]],
                    OK,
                    also={"stratum_sizes": [6, 30]},  # a census: recall 0/0
                    check=lambda e: bool(np.isnan(e).all()),
                ),
            ],
            "stratum_sizes": [
                *NOT_A_NUMBER,
                Case("fewer than sampled", [10, 3140]),
                Case("a fraction", [240.5, 3140]),
                Case("NaN", [np.nan, 3140]),
                Case("one size too few", [240]),
            ],
            "metric": [
                *choice_kind(registry.BINARY_METRIC),
                Case("prevalence", "prevalence", OK),
                Case("a multiclass metric", "macro_f1"),
            ],
            "prior": choice_kind(registry.STRATIFIED_PRIOR),
            "draws": positive_int_kind(),
            "confidence_level": level_kind(),
            "rng": rng_kind(),
            "finite": [
                *bool_kind(),
                Case("relative sizes", False, OK, also={"stratum_sizes": [0.5, 7.0]}),
                Case("negative relative sizes", False, also={"stratum_sizes": [-1.0, 7.0]}),
            ],
        },
    ),
    Entry(
        "bayes.nested_metric_intervals",
        _nested_ends,
        {"cells": NESTED_CELLS, "metric": "f1", "draws": 200, "grid_shape": (40, 20)},
        ("cells",),
        {
            "cells": nested_cells_kind(),
            "metric": choice_kind(registry.METRIC),
            "estimand": choice_kind(registry.CONFUSION_ESTIMAND),
            "prior": choice_kind(registry.PRIOR),
            "confidence_level": level_kind(),
            "kind": choice_kind(registry.CREDIBLE_INTERVAL),
            "draws": positive_int_kind(extra=(Case("more than memory holds", 10**10),)),
            "grid_shape": shape_kind(),
            "rng": rng_kind(),
            "batch": positive_int_kind(optional=True),
            "population_sizes": population_sizes_kind(),
            "population_persons": population_persons_kind(),
        },
    ),
    Entry(
        "bayes.compare_counts",
        pc.bayes.compare_counts,
        {"joint": [30, 2, 1, 3, 2, 1, 4, 20], "metric": "recall", "draws": 200},
        ("joint",),
        {
            "joint": [
                *cells_kind(8, zeros=OK),
                Case("a fraction", [2.5, *range(2, 9)]),
                Case("per person, not nested", [list(range(1, 9))] * 3, OK),
            ],
            "metric": choice_kind(registry.BINARY_METRIC),
            "nested": [
                *bool_kind(),
                Case("per person", True, OK, also={"joint": NESTED_JOINT, "grid_shape": (40, 20)}),
            ],
            "estimand": choice_kind(registry.CONFUSION_ESTIMAND),
            "prior": [
                *(c for c in confusion_prior_kind() if c is None or c.label != "None"),
                Case("None (the default)", None, OK),
                Case("a concentration prior, not nested", "pareto"),
                Case("a number, nested", 0.5, also={"joint": NESTED_JOINT, "nested": True}),
                Case(
                    "a concentration prior, nested",
                    "bda3",
                    OK,
                    also={"joint": NESTED_JOINT, "nested": True, "grid_shape": (40, 20)},
                ),
            ],
            "confidence_level": level_kind(),
            "kind": choice_kind(registry.CREDIBLE_INTERVAL),
            "draws": positive_int_kind(),
            "grid_shape": also(shape_kind(), joint=NESTED_JOINT, nested=True),
            "rng": rng_kind(),
            "batch": positive_int_kind(optional=True),
            "population_sizes": [
                Case("not nested", [5, 5, 6, 6]),
                *also(
                    population_sizes_kind(), joint=NESTED_JOINT, nested=True, grid_shape=(40, 20)
                ),
            ],
            "population_persons": [
                Case("not nested", 10),
                *also(
                    population_persons_kind(), joint=NESTED_JOINT, nested=True, grid_shape=(40, 20)
                ),
            ],
        },
    ),
    Entry(
        "BayesFit.interval",
        _fit_interval,
        {},
        (),
        {
            "estimand": choice_kind(registry.ESTIMAND),
            "kind": choice_kind(registry.CREDIBLE_INTERVAL),
            "confidence_level": level_kind(),
        },
    ),
]


def _cases():
    for entry in ENTRIES:
        for argument, cases in entry.kinds.items():
            for case in cases:
                if case is None:
                    continue
                changes = {**case.also, argument: case.value}
                names = (argument, *case.names)
                yield pytest.param(
                    entry,
                    changes,
                    case.expect,
                    names,
                    case.check,
                    id=f"{entry.name}-{argument}-{case.label}",
                )
        for label, changes, expect, names in entry.extra:
            yield pytest.param(entry, changes, expect, names, None, id=f"{entry.name}-{label}")


CASES = list(_cases())


def _names_an_argument(message: str, names: tuple[str, ...]) -> bool:
    return any(re.search(rf"`{re.escape(n)}(?![A-Za-z0-9_])", message) for n in names)


def _is_nan(value: Any) -> bool:
    if hasattr(value, "low"):  # an interval result: its estimate and ends
        value = [value.estimate, value.low, value.high]
    return bool(np.all(np.isnan(np.asarray(value, dtype=float))))


@pytest.mark.parametrize(("entry", "changes", "expect", "names", "check"), CASES)
def test_catalogue(entry, changes, expect, names, check):
    start = time.perf_counter()
    if expect == RAISES:
        with pytest.raises(ValueError) as err:
            entry.call(changes)
        message = str(err.value)
        assert _names_an_argument(message, names), message
        assert "\n" not in message, message
    elif expect == NAN:
        with pytest.warns(pc.UndefinedMetricWarning, match="undefined"):
            result = entry.call(changes)
        assert _is_nan(result), result
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = entry.call(changes)
        if check is not None:
            assert check(result), result
    assert time.perf_counter() - start < SECONDS


def test_the_catalogue_is_large():
    assert len(CASES) >= 150


# The public functions and the entries that cover them (one entry may cover a few).
COVERED = {
    pc.proportion_ci: "proportion_ci",
    pc.clustered_proportion_ci: "clustered_proportion_ci",
    pc.icc: "icc",
    pc.design_effect: "design_effect",
    pc.effective_sample_size: "effective_sample_size",
    pc.exact_coverage: "exact_coverage",
    pc.expected_half_width: "expected_half_width",
    pc.operating_characteristics: "operating_characteristics",
    pc.bootstrap_ci: "bootstrap_ci",
    pc.compute_metric: "compute_metric",
    pc.proportion_counts: "proportion_counts",
    pc.metric_ci: "metric_ci",
    pc.report: "report",
    pc.compare: "compare",
    pc.auc_ci: "auc_ci",
    pc.compare_auc: "compare_auc",
    pc.compare_groups: "compare_groups",
    pc.compare_many: "compare_many",
    pc.rank_ci: "rank_ci",
    pc.cv_ci: "cv_ci",
    pc.grouped_folds: "grouped_folds",
    pc.nested_cv_ci: "nested_cv_ci",
    pc.annotator_agreement: "annotator_agreement",
    pc.agreement_report: "agreement_report",
    compare_groups_counts: "compare_groups_counts",
    pc.plan_sample_size: "plan_sample_size",
    pc.plan_stratified_sample: "plan_stratified_sample",
    expected_stratified_half_width: "stratified_planning.expected_stratified_half_width",
    pc.half_width_curves: "half_width_curves",
    pc.bayes.grid_intervals: "bayes.grid_intervals",
    pc.bayes.fit_proportion_counts: "bayes.fit(sampler='grid')",
    pc.bayes.confusion_posterior: "bayes.confusion_posterior",
    pc.bayes.nested_metric_intervals: "bayes.nested_metric_intervals",
    pc.bayes.compare_counts: "bayes.compare_counts",
    pc.bayes.stratified_posterior: "bayes.stratified_posterior",
}


@pytest.mark.parametrize("function", list(COVERED), ids=lambda f: f.__name__)
def test_every_argument_of_every_public_function_has_cases(function):
    entries = [e for e in ENTRIES if e.name.startswith(COVERED[function])]
    assert entries, function
    covered = {a for e in entries for a in (*e.kinds, *(k for x in e.extra for k in x[1]))}
    for name in inspect.signature(function).parameters:
        assert name in covered, (function.__name__, name)


#: Registered choices no catalogued function takes, and where they are tested instead.
NOT_CATALOGUED = {
    "BINARY_METRIC": "a paired_nested suite's metric (tests/test_harness.py); compare takes "
    "COMPARE_METRIC",
    "CONFUSION_SAMPLER": "fit_confusion_counts runs MCMC (tests/test_bayes.py)",
    "MULTICLASS_METRIC": "a part of METRIC, which is catalogued",
    "OUTPUT_FORMAT": "a command-line flag (tests/test_registry.py)",
    "VALIDATE_ACTION": "a command-line argument (tests/test_registry.py)",
}


def test_every_registered_choice_gets_values_of_the_wrong_type():
    seen = {id(c) for c in CHOICES_SEEN}
    for name, value in vars(registry).items():
        public = not name.startswith("_")
        if isinstance(value, registry.Choices) and public and name not in NOT_CATALOGUED:
            assert id(value) in seen, name
