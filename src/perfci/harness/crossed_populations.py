"""Populations of crossed designs: a classifier's repeated runs, several human annotators.

Kinds ``runs_nested`` and ``annotators_nested``: the same texts nested in persons are
labelled several times, by R runs of a stochastic classifier or by A annotators, each
with a systematic effect of its own. Each kind's truths (of a new run or annotator, of a
data set's own ones, of their majority) are computed by quadrature, and its data sets are
drawn with every text's labels at once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .._core.imputation import ImputedCodes, expected_cells, impute_codes, unit_cells
from .persons import beta_quantile, cell_sizes

# ---------------------------------------------------------------------- repeated runs
#
# Kind "runs_nested": a stochastic classifier run R times on the same texts nested in
# persons. Run r labels text i of person g positive with probability
# Phi(alpha_y + a_i + c_g + b_r): a text effect, a person effect and a run effect shared
# by every text of the run (a run that is more lenient on every text), on the probit scale.

#: Gauss-Hermite nodes of the truths' expectations over a normal effect.
QUADRATURE_NODES = 64


def _normal_nodes(sd: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of E[f(X)] for X ~ N(0, sd^2) (probabilists' Gauss-Hermite)."""
    x, w = np.polynomial.hermite_e.hermegauss(QUADRATURE_NODES)
    return sd * x, w / w.sum()


def run_intercepts(params: dict) -> tuple[float, float, float]:
    """Return alpha_1, alpha_0 and sqrt(1 + s2) of a ``runs_nested`` population.

    With s2 = text_sd^2 + person_sd^2 the latent a_i + c_g is N(0, s2), so a run with
    effect b labels a positive text positive with probability
    Phi((alpha_1 + b) / sqrt(1 + s2)): alpha_1 = Phi^-1(recall) sqrt(1 + s2) makes the
    recall of a run with b = 0 the given one (and likewise the specificity).
    """
    return _probit_intercepts(params["recall"], params["specificity"], params)


def _probit_intercepts(
    positive_rate: float, negative_rate: float, params: dict
) -> tuple[float, float, float]:
    """alpha_1, alpha_0 and sqrt(1 + s2) for these rates at effect 0 (s2 from `params`)."""
    from scipy import special

    scale = float(np.sqrt(1 + params["text_sd"] ** 2 + params["person_sd"] ** 2))
    return (
        float(special.ndtri(positive_rate)) * scale,
        -float(special.ndtri(negative_rate)) * scale,
        scale,
    )


def run_cells(params: dict, run_effect: np.ndarray) -> np.ndarray:
    """Return the population cells ``[tp, fp, fn, tn]`` (..., 4) of runs with effects b.

    ``[pi R(b), (1 - pi) F(b), pi (1 - R(b)), (1 - pi)(1 - F(b))]`` with
    R(b) = Phi((alpha_1 + b) / sqrt(1 + s2)), F(b) = Phi((alpha_0 + b) / sqrt(1 + s2)) and
    pi the prevalence (sizes are unrelated to the persons' shares and effects, so the
    text-weighted population cells are these).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.harness.populations import run_cells
    >>> params = {"prevalence": 0.3, "recall": 0.85, "specificity": 0.9, "text_sd": 1.0,
    ...           "person_sd": 0.5}
    >>> run_cells(params, np.array([0.0, 0.5])).round(4)  # a run with b = 0: recall 0.85
    array([[0.255 , 0.07  , 0.045 , 0.63  ],
           [0.2744, 0.1201, 0.0256, 0.5799]])
    """
    from scipy import special

    alpha_1, alpha_0, scale = run_intercepts(params)
    b = np.asarray(run_effect, dtype=float)
    recall = special.ndtr((alpha_1 + b) / scale)
    false_positive = special.ndtr((alpha_0 + b) / scale)
    pi = params["prevalence"]
    return np.stack(
        [
            pi * recall,
            (1 - pi) * false_positive,
            pi * (1 - recall),
            (1 - pi) * (1 - false_positive),
        ],
        axis=-1,
    )


def majority_cells(params: dict, run_effects: np.ndarray) -> np.ndarray:
    """Return the population cells (..., 4) of the majority vote of runs b (..., R).

    Given its class y and its combined effect u = a_i + c_g ~ N(0, s2), a text's R labels
    are independent with probabilities Phi(alpha_y + u + b_r): its count of positive
    labels is Poisson-binomial, computed by a recursion over the runs, and the vote is
    positive when the count exceeds R / 2 (a tie counts as negative, as
    :func:`perfci.runs.majority_vote`); the expectation over u is by Gauss-Hermite
    quadrature.

    Examples
    --------
    Three typical runs (b = 0) vote out much of a text's run-to-run noise: the vote's
    recall is 0.884 where each run's is 0.85.

    >>> import numpy as np
    >>> from perfci.harness.populations import majority_cells
    >>> params = {"prevalence": 0.3, "recall": 0.85, "specificity": 0.9, "text_sd": 1.0,
    ...           "person_sd": 0.5}
    >>> majority_cells(params, np.zeros((1, 3))).round(4)
    array([[0.2651, 0.0491, 0.0349, 0.6509]])
    """
    from scipy import special

    from ..runs import majority_vote

    alpha_1, alpha_0, _ = run_intercepts(params)
    b = np.asarray(run_effects, dtype=float)
    runs = b.shape[-1]
    u, weights = _normal_nodes(float(np.hypot(params["text_sd"], params["person_sd"])))
    positive_vote, _ = majority_vote(np.arange(runs + 1), runs)
    voted = []
    for alpha in (alpha_1, alpha_0):
        p = special.ndtr(alpha + u[:, None] + b[..., None, :])  # (..., nodes, R)
        count = np.zeros((*p.shape[:-1], runs + 1))
        count[..., 0] = 1.0
        for r in range(runs):  # the runs, not the data sets: P(count = k) after run r
            q = p[..., r, None]
            count = np.concatenate(
                [count[..., :1] * (1 - q), count[..., 1:] * (1 - q) + count[..., :-1] * q],
                axis=-1,
            )
        voted.append(count[..., positive_vote].sum(-1) @ weights)
    pi = params["prevalence"]
    return np.stack(
        [pi * voted[0], (1 - pi) * voted[1], pi * (1 - voted[0]), (1 - pi) * (1 - voted[1])],
        axis=-1,
    )


def runs_truth(params: dict, estimand: str, run_effects: np.ndarray) -> float | np.ndarray:
    """Return the truth of an estimand of a ``runs_nested`` cell.

    ``"new_run"``: E_b[metric(cells(b))] over b ~ N(0, run_sd^2) (Gauss-Hermite), one
    value. ``"these_runs"``: per data set the mean over its realized run effects b_r of
    metric(cells(b_r)); ``"majority"``: per data set the metric of the majority vote's
    population cells given its b_r (:func:`majority_cells`); each ``(data sets,)`` for
    run effects ``(data sets, R)``.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.harness.populations import runs_truth
    >>> params = {"prevalence": 0.3, "recall": 0.85, "specificity": 0.9, "text_sd": 1.0,
    ...           "person_sd": 0.5, "run_sd": 0.3, "metric": "recall"}
    >>> round(runs_truth(params, "new_run", None), 4)  # below 0.85: the recall is concave in b
    0.8453
    >>> runs_truth(params, "these_runs", np.array([[-0.04, 0.41, -0.2]])).round(4)
    array([0.8552])
    """
    from ..metrics import metric_values

    metric = params["metric"]
    if estimand == "new_run":
        b, weights = _normal_nodes(params["run_sd"])
        return float(weights @ metric_values(run_cells(params, b), metric))
    if estimand == "these_runs":
        return metric_values(run_cells(params, run_effects), metric).mean(-1)
    return metric_values(majority_cells(params, run_effects), metric)


@dataclass(frozen=True)
class RunsSample:
    """Texts of simulated data sets labelled by R runs, and the counts the methods see.

    Attributes
    ----------
    truth : numpy.ndarray of bool, (texts,)
        Whether each text is a reference positive (the texts of every data set, in order).
    said : numpy.ndarray of bool, (texts, R)
        Whether each run labels the text positive.
    owner : numpy.ndarray of int, (texts,)
        The text's person as ``data set * persons + person``.
    run_effects : numpy.ndarray, (data sets, R)
        The runs' systematic effects b_r of each data set.
    shape : tuple of int
        (data sets, persons).
    """

    truth: np.ndarray
    said: np.ndarray
    owner: np.ndarray
    run_effects: np.ndarray
    shape: tuple[int, int]

    def _cell_index(self, said: np.ndarray) -> np.ndarray:
        """Index 0 tp, 1 fp, 2 fn, 3 tn of labels (texts, ...) against the reference."""
        truth = self.truth.reshape(-1, *([1] * (said.ndim - 1)))
        return 2 * (~said).astype(np.int64) + (~truth)

    def person_cells(self) -> np.ndarray:
        """Cells ``[tp, fp, fn, tn]`` of each person in each run, (data sets, persons, R, 4)."""
        from ..runs import person_run_cells

        runs = self.said.shape[1]
        units = self.shape[0] * self.shape[1]  # (data set, person) pairs
        cells = person_run_cells(self._cell_index(self.said), self.owner, units)
        return cells.reshape(*self.shape, runs, 4)

    def majority_cells(self) -> np.ndarray:
        """Cells of the majority vote of the runs per person, (data sets, persons, 4)."""
        from ..runs import majority_vote

        vote, _ = majority_vote(self.said.sum(1), self.said.shape[1])
        flat = self.owner * 4 + self._cell_index(vote)
        size = self.shape[0] * self.shape[1] * 4
        return np.bincount(flat, minlength=size).reshape(*self.shape, 4)

    def patterns(self) -> tuple[np.ndarray, np.ndarray]:
        """Each data set's distinct texts as units of :func:`perfci.runs.runs_ci_counts`.

        Texts with the same reference label and the same label in every run are one unit
        with a multiplicity (at most 2^(R+1) units, however many texts). Returns cells
        (data sets, width, R, 4) (int8) and multiplicities (data sets, width), padded to
        the largest number of units with empty units of multiplicity 0.
        """
        runs = self.said.shape[1]
        # a text's pattern as the bits of one code: the reference, then each run's label
        bits = np.left_shift(np.int64(1), np.arange(1, runs + 1, dtype=np.int64))
        code = self.truth.astype(np.int64) + self.said.astype(np.int64) @ bits
        code, data_set, slot, multiplicity, _ = _distinct_units(
            code, self.owner // self.shape[1], self.shape[0]
        )
        width = multiplicity.shape[1]
        pattern = (code[:, None] >> np.arange(runs + 1)) & 1  # (units, 1 + R)
        index = 2 * (1 - pattern[:, 1:]) + (1 - pattern[:, :1])
        cells = np.zeros((self.shape[0], width, runs, 4), dtype=np.int8)
        cells[data_set[:, None], slot[:, None], np.arange(runs), index] = 1
        return cells, multiplicity

    def crossed_person_cells(self, observed: np.ndarray) -> tuple[np.ndarray, None]:
        """Return the persons' cells of the crossed intervals (every run labels every text)."""
        return observed, None

    def crossed_patterns(self) -> tuple[np.ndarray, np.ndarray, None]:
        """Return the pooled texts' units of the crossed intervals: :meth:`patterns`."""
        return (*self.patterns(), None)


def _distinct_units(
    code: np.ndarray, data_set: np.ndarray, data_sets: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each data set's distinct texts: one unit per distinct code, with a multiplicity.

    `code` (texts,) says everything about a text that its cells depend on; `data_set`
    (texts,) its data set. Returns each unit's code, data set and slot (its position
    within the data set's units, in increasing order of code), the multiplicities
    (data sets, width), padded with 0 to the largest number of units, and one text of
    each unit (its index).
    """
    order = np.lexsort((code, data_set))
    texts = order
    code, data_set = code[order], data_set[order]
    first = np.ones(code.size, dtype=bool)
    first[1:] = (code[1:] != code[:-1]) | (data_set[1:] != data_set[:-1])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, code.size))
    code, data_set = code[starts], data_set[starts]
    units = np.bincount(data_set, minlength=data_sets)
    slot = np.arange(code.size) - (np.cumsum(units) - units)[data_set]
    multiplicity = np.zeros((data_sets, int(units.max())))
    multiplicity[data_set, slot] = counts
    return code, data_set, slot, multiplicity, texts[starts]


def draw_runs(params: dict, shape: tuple[int, int], rng: np.random.Generator) -> RunsSample:
    """Simulate data sets of a ``runs_nested`` population, shape (data sets, persons).

    Person g has a share of positives pi_g (a Beta with mean ``prevalence`` and ICC
    ``icc_prevalence``, a quantile of a normal latent) and an effect c_g ~ N(0,
    ``person_sd``^2); their texts (as in ``nested``, sizes unrelated to the rest) are
    positive with probability pi_g and have effects a_i ~ N(0, ``text_sd``^2); each data
    set's R runs have effects b_r ~ N(0, ``run_sd``^2), and run r labels text i positive
    with probability Phi(alpha_y + a_i + c_g + b_r) (:func:`run_intercepts`). Every text
    of every data set is drawn at once (no loop over data sets).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.harness.populations import draw_runs
    >>> params = {"texts_per_person": 4.0, "size_cv": 0.0, "min_texts": 1,
    ...           "prevalence": 0.3, "icc_prevalence": 0.1, "runs": 3, "recall": 0.85,
    ...           "specificity": 0.9, "text_sd": 1.0, "person_sd": 0.5, "run_sd": 0.3}
    >>> sample = draw_runs(params, (2, 5), np.random.default_rng(0))  # 2 data sets, 5 persons
    >>> sample.said.shape, sample.person_cells().shape
    ((40, 3), (2, 5, 3, 4))
    >>> cells, multiplicity = sample.patterns()  # the distinct texts of each data set
    >>> cells.shape, multiplicity.sum(1)
    ((2, 7, 3, 4), array([20., 20.]))
    """
    from scipy import special

    alpha_1, alpha_0, _ = run_intercepts(params)
    runs = int(params["runs"])
    share = beta_quantile(
        rng.standard_normal(shape), params["prevalence"], params["icc_prevalence"]
    )
    person_effect = params["person_sd"] * rng.standard_normal(shape)
    n = cell_sizes(params, person_effect, rng, informative=0.0)
    run_effects = params["run_sd"] * rng.standard_normal((shape[0], runs))
    owner = np.repeat(np.arange(share.size), n.ravel())
    truth = rng.random(owner.size) < share.ravel()[owner]
    latent = np.where(truth, alpha_1, alpha_0) + person_effect.ravel()[owner]
    latent += params["text_sd"] * rng.standard_normal(owner.size)
    probability = special.ndtr(latent[:, None] + run_effects[owner // shape[1]])
    said = rng.random(probability.shape) < probability
    return RunsSample(truth, said, owner, run_effects, (int(shape[0]), int(shape[1])))


# ------------------------------------------------------------------ several annotators
#
# Kind "annotators_nested", the mirror image of "runs_nested": one classifier, and the
# reference varies by annotator. Text i of person g has a true class y_i ~ Bern(pi_g);
# the classifier labels it from y_i alone (its recall and specificity against the true
# class); annotator a codes it positive with probability Phi(alpha_y + d_i + c_g + b_a):
# a text's difficulty (a hard text is miscoded by every annotator alike), a person
# effect and the annotator's systematic shift toward coding positive, on the probit
# scale. Each annotator codes each text with probability `coded` (missing at random),
# every text keeping at least one code.


def annotator_intercepts(params: dict) -> tuple[float, float, float]:
    """Return alpha_1, alpha_0 and sqrt(1 + s2) of an ``annotators_nested`` population.

    As :func:`run_intercepts`, with ``annotator_accuracy`` for both classes: an annotator
    with shift b = 0 codes a text's true class with that probability, in either class.
    """
    accuracy = params["annotator_accuracy"]
    return _probit_intercepts(accuracy, accuracy, params)


def _against_reference(params: dict, positive: np.ndarray, negative: np.ndarray) -> np.ndarray:
    """Cells ``[tp, fp, fn, tn]`` (..., 4) of the classifier against a reference.

    `positive` and `negative` (..., 2) are the probabilities that a text's reference is
    positive and negative given its true class (1, then 0); where the reference can be
    missing (a tied majority) they sum to less than 1. The classifier labels a text from
    its true class alone, so given the class it is independent of the reference.
    """
    pi = params["prevalence"]
    weight = np.array([pi, 1 - pi])  # P(y = 1), P(y = 0)
    said = np.array([params["recall"], 1 - params["specificity"]])  # P(label 1 | y)
    return np.stack(
        [
            np.sum(weight * said * positive, -1),
            np.sum(weight * said * negative, -1),
            np.sum(weight * (1 - said) * positive, -1),
            np.sum(weight * (1 - said) * negative, -1),
        ],
        axis=-1,
    )


def annotator_cells(params: dict, annotator_effect: np.ndarray) -> np.ndarray:
    """Return the population cells (..., 4) of the classifier against annotators b.

    An annotator with shift b codes a text of class y positive with probability
    Q_y(b) = Phi((alpha_y + b) / sqrt(1 + s2)) (:func:`annotator_intercepts`), and the
    classifier labels it positive with probability ``recall`` (y = 1) or
    1 - ``specificity`` (y = 0), independently given y.

    Examples
    --------
    Against a typical annotator (b = 0), who codes 10% of each class wrongly, a
    classifier with recall 0.85 against the true class has recall 0.696: the
    annotator's false positives count as its misses. Against a lenient one (b = 0.5)
    it is lower still.

    >>> import numpy as np
    >>> from perfci.harness.populations import annotator_cells
    >>> from perfci.metrics import metric_values
    >>> params = {"prevalence": 0.3, "recall": 0.85, "specificity": 0.9,
    ...           "annotator_accuracy": 0.9, "text_sd": 1.0, "person_sd": 0.5}
    >>> cells = annotator_cells(params, np.array([0.0, 0.5]))
    >>> cells.round(4)
    array([[0.2365, 0.0885, 0.1035, 0.5715],
           [0.2534, 0.0716, 0.1507, 0.5243]])
    >>> metric_values(cells, "recall").round(3)
    array([0.696, 0.627])
    """
    from scipy import special

    alpha_1, alpha_0, scale = annotator_intercepts(params)
    b = np.asarray(annotator_effect, dtype=float)[..., None]
    positive = special.ndtr((np.array([alpha_1, alpha_0]) + b) / scale)
    return _against_reference(params, positive, 1 - positive)


def annotator_majority_cells(params: dict, annotator_effects: np.ndarray) -> np.ndarray:
    """Return the population cells (..., 4) of the classifier against the majority code.

    The majority of annotators with shifts b (..., A), each text's majority over the
    annotators who coded it, a tie leaving the text without a reference (as
    :func:`perfci.annotators.majority_reference`). Given its class y and combined effect
    u = d_i + c_g ~ N(0, s2), a text's codes are independent: annotator a adds +1
    (coded positive, probability ``coded`` Phi(alpha_y + u + b_a)), -1 (coded negative)
    or 0 (not coded) to the text's margin, whose distribution is computed exactly by a
    recursion over the annotators; the majority is positive when the margin is above 0,
    negative below, and missing at 0 (a tie, or no code). The expectation over u is by
    Gauss-Hermite quadrature. Conditioning on at least one code divides every text's
    probabilities by the same 1 - (1 - coded)^A, which no metric sees.

    Examples
    --------
    Three typical annotators (b = 0) outvote some of a text's noise but not its
    difficulty, which they share: the classifier's recall against their majority is
    0.738, against one of them 0.696 (:func:`annotator_cells`), and 0.803 against the
    majority of three whose errors were independent (no text or person effect).

    >>> import numpy as np
    >>> from perfci.harness.populations import annotator_majority_cells
    >>> from perfci.metrics import metric_values
    >>> params = {"prevalence": 0.3, "recall": 0.85, "specificity": 0.9,
    ...           "annotator_accuracy": 0.9, "text_sd": 1.0, "person_sd": 0.5, "coded": 1.0}
    >>> cells = annotator_majority_cells(params, np.zeros((1, 3)))
    >>> cells.round(4), metric_values(cells, "recall").round(3)
    (array([[0.242, 0.083, 0.086, 0.589]]), array([0.738]))
    >>> independent = {**params, "text_sd": 0.0, "person_sd": 0.0}
    >>> metric_values(annotator_majority_cells(independent, np.zeros((1, 3))), "recall").round(3)
    array([0.803])
    """
    from scipy import special

    alpha_1, alpha_0, _ = annotator_intercepts(params)
    b = np.asarray(annotator_effects, dtype=float)
    annotators = b.shape[-1]
    coded = params["coded"]
    u, weights = _normal_nodes(float(np.hypot(params["text_sd"], params["person_sd"])))
    margin = np.arange(-annotators, annotators + 1)  # positive minus negative codes
    positive, negative = [], []
    for alpha in (alpha_1, alpha_0):
        p = special.ndtr(alpha + u[:, None] + b[..., None, :])  # (..., nodes, A)
        state = np.zeros((*p.shape[:-1], margin.size))
        state[..., annotators] = 1.0  # margin 0 before any annotator
        for a in range(annotators):  # the annotators, not the data sets
            q = p[..., a, None]
            up = np.concatenate([np.zeros_like(q), state[..., :-1]], axis=-1)
            down = np.concatenate([state[..., 1:], np.zeros_like(q)], axis=-1)
            state = (1 - coded) * state + coded * (q * up + (1 - q) * down)
        positive.append(state[..., margin > 0].sum(-1) @ weights)
        negative.append(state[..., margin < 0].sum(-1) @ weights)
    return _against_reference(params, np.stack(positive, axis=-1), np.stack(negative, axis=-1))


def annotators_truth(
    params: dict, estimand: str, annotator_effects: np.ndarray | None
) -> float | np.ndarray:
    """Return the truth of an estimand of an ``annotators_nested`` cell.

    ``"new_annotator"``: E_b[metric(cells(b))] over b ~ N(0, annotator_sd^2)
    (Gauss-Hermite), one value. ``"these_annotators"``: per data set the mean over its
    realized shifts b_a of metric(cells(b_a)); ``"majority"``: per data set the metric
    against its annotators' majority code (:func:`annotator_majority_cells`); each
    ``(data sets,)`` for shifts ``(data sets, A)``. Which texts an annotator coded
    changes no truth but the majority's, whose truth is known for ``coding = "random"``
    only (for ``"after_first"`` the estimand is refused).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.harness.populations import annotators_truth
    >>> params = {"prevalence": 0.3, "recall": 0.85, "specificity": 0.9,
    ...           "annotator_accuracy": 0.9, "text_sd": 1.0, "person_sd": 0.5,
    ...           "annotator_sd": 0.3, "coded": 1.0, "metric": "recall"}
    >>> round(annotators_truth(params, "new_annotator", None), 4)
    0.6935
    >>> annotators_truth(params, "these_annotators", np.array([[-0.04, 0.41, -0.2]])).round(4)
    array([0.6869])
    """
    from ..metrics import metric_values

    metric = params["metric"]
    if estimand == "new_annotator":
        b, weights = _normal_nodes(params["annotator_sd"])
        return float(weights @ metric_values(annotator_cells(params, b), metric))
    if annotator_effects is None:
        raise ValueError(f"`annotator_effects` are needed for estimand {estimand!r}.")
    if estimand == "these_annotators":
        return metric_values(annotator_cells(params, annotator_effects), metric).mean(-1)
    if params.get("coding", "random") != "random":
        raise ValueError(
            "estimand 'majority' takes `population.coding` 'random': the majority's truth "
            "with codes that depend on the first annotator's is not computed."
        )
    return metric_values(annotator_majority_cells(params, annotator_effects), metric)


@dataclass(frozen=True)
class AnnotatorsSample:
    """Texts of simulated data sets, the classifier's labels and the annotators' codes.

    Attributes
    ----------
    true_class : numpy.ndarray of bool, (texts,)
        Each text's true class (no method sees it; the truths integrate over it).
    said : numpy.ndarray of bool, (texts,)
        Whether the classifier labels the text positive.
    codes : numpy.ndarray of bool, (texts, A)
        Whether each annotator codes the text positive (False where not coded).
    coded : numpy.ndarray of bool, (texts, A)
        Whether each annotator coded the text (every text has at least one code).
    owner : numpy.ndarray of int, (texts,)
        The text's person as ``data set * persons + person``.
    annotator_effects : numpy.ndarray, (data sets, A)
        The annotators' systematic shifts b_a of each data set.
    shape : tuple of int
        (data sets, persons).
    """

    true_class: np.ndarray
    said: np.ndarray
    codes: np.ndarray
    coded: np.ndarray
    owner: np.ndarray
    annotator_effects: np.ndarray
    shape: tuple[int, int]

    def reference(self) -> np.ndarray:
        """Return the codes as :func:`perfci.annotator_ci` reads them: 1, 0, or NaN."""
        return np.where(self.coded, self.codes.astype(float), np.nan)

    def _cell_index(self, reference: np.ndarray) -> np.ndarray:
        """Index 0 tp, 1 fp, 2 fn, 3 tn of the labels against a reference (texts, ...)."""
        said = self.said.reshape(-1, *([1] * (reference.ndim - 1)))
        return 2 * (~said).astype(np.int64) + (~reference)

    def person_cells(self) -> np.ndarray:
        """Cells of each person against each annotator, (data sets, persons, A, 4).

        A person's cells against an annotator count the texts that annotator coded: 0
        where they coded none of the person's texts.
        """
        from ..runs import person_run_cells

        annotators = self.codes.shape[1]
        units = self.shape[0] * self.shape[1]  # (data set, person) pairs
        cells = person_run_cells(self._cell_index(self.codes), self.owner, units, self.coded)
        return cells.reshape(*self.shape, annotators, 4)

    def majority_cells(self) -> np.ndarray:
        """Cells against the majority code per person, (data sets, persons, 4).

        Each text's majority over the annotators who coded it; tied texts have none and
        are left out (:func:`perfci.annotators.majority_reference`).
        """
        from ..annotators import majority_reference

        majority, _ = majority_reference(self.reference())
        keep = ~np.isnan(majority)
        index = 2 * (~self.said[keep]).astype(np.int64) + (majority[keep] == 0)
        flat = self.owner[keep] * 4 + index
        size = self.shape[0] * self.shape[1] * 4
        return np.bincount(flat, minlength=size).reshape(*self.shape, 4)

    def patterns(self) -> tuple[np.ndarray, np.ndarray]:
        """Each data set's distinct texts as units of :func:`perfci.runs.crossed_intervals`.

        Texts with the same label and the same code (or none) from every annotator are
        one unit with a multiplicity (at most 2 x 3^A units, however many texts). Returns
        cells (data sets, width, A, 4) (int8; zeros where the unit's texts were not
        coded) and multiplicities (data sets, width), padded with empty units of
        multiplicity 0.
        """
        cells, multiplicity, _ = self._patterns()
        return cells, multiplicity

    def _patterns(self) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """Return :meth:`patterns`, and each unit's data set, slot and one of its texts."""
        annotators = self.codes.shape[1]
        # a text's pattern as the base-5 digits of one code: its cell against each
        # annotator (0-3), or 4 where not coded; the first annotator most significant
        digit = np.where(self.coded, self._cell_index(self.codes), 4)
        powers = 5 ** np.arange(annotators - 1, -1, -1, dtype=np.int64)
        code, data_set, slot, multiplicity, text = _distinct_units(
            digit @ powers, self.owner // self.shape[1], self.shape[0]
        )
        digits = (code[:, None] // powers) % 5  # (units, A)
        unit, annotator = np.nonzero(digits < 4)
        cells = np.zeros((self.shape[0], multiplicity.shape[1], annotators, 4), dtype=np.int8)
        cells[data_set[unit], slot[unit], annotator, digits[unit, annotator]] = 1
        return cells, multiplicity, (data_set, slot, text)

    @functools.cached_property
    def imputed_codes(self) -> ImputedCodes:
        """Return the codes with the missing ones imputed, as :func:`perfci.annotator_ci` does.

        Each data set is calibrated on its own texts (:mod:`perfci._core.imputation`).
        """
        return impute_codes(self.reference(), self.said, self.owner // self.shape[1], self.shape[0])

    def crossed_person_cells(self, observed: np.ndarray) -> tuple[np.ndarray, dict | None]:
        """Return the persons' cells of the crossed intervals, the missing codes imputed.

        Returns the cells (data sets, persons, A, 4) against every annotator on every
        text, as :func:`perfci.annotator_ci` computes them, and the options of
        :func:`perfci.crossed.crossed_intervals` that go with them: the cells of the codes
        given (`observed`, :meth:`person_cells`) and the imputation's `influence`, both
        (data sets, persons, A, 4); with every text coded by every annotator, those cells
        and None.
        """
        imputed = self.imputed_codes
        if imputed.complete:
            return observed, None
        units = self.shape[0] * self.shape[1]
        cells = unit_cells(expected_cells(self.said, imputed.codes), self.owner, units)
        influence = unit_cells(imputed.influence, self.owner, units)
        shape = observed.shape
        return cells.reshape(shape), {
            "observed": observed.astype(float),
            "influence": influence.reshape(shape),
        }

    def crossed_patterns(self) -> tuple[np.ndarray, np.ndarray, dict | None]:
        """Return the pooled texts' units of the crossed intervals, missing codes imputed.

        A unit's imputed codes, and their influence, are those of any of its texts: they
        depend on a text only through its label and codes (its pattern) and its data
        set. Returns cells, multiplicities and the options that go with them, as
        :meth:`crossed_person_cells` (None when complete), on :meth:`patterns`' units.
        """
        observed, multiplicity, (data_set, slot, text) = self._patterns()
        imputed = self.imputed_codes
        if imputed.complete:
            return observed, multiplicity, None
        cells, influence = np.zeros(observed.shape), np.zeros(observed.shape)
        cells[data_set, slot] = expected_cells(self.said[text], imputed.codes[text])
        influence[data_set, slot] = imputed.influence[text]
        return cells, multiplicity, {"observed": observed.astype(float), "influence": influence}


def _coded_mask(coded: float, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Which annotator coded which text, (texts, A): each with probability `coded`.

    Drawn given at least one code per text: the number of codes K from the binomial
    (A, `coded`) given K >= 1 (by its inverse CDF), then K annotators uniformly at
    random, which is the independent codes' distribution given that K >= 1.
    """
    from scipy import stats

    texts, annotators = shape
    if coded == 1:
        return np.ones(shape, dtype=bool)
    cdf = stats.binom.cdf(np.arange(annotators + 1), annotators, coded)
    target = cdf[0] + rng.random(texts) * (1 - cdf[0])
    count = np.clip(np.searchsorted(cdf, target), 1, annotators)
    rank = np.argsort(np.argsort(rng.random(shape), axis=1), axis=1)
    return rank < count[:, None]


def draw_annotators(
    params: dict, shape: tuple[int, int], rng: np.random.Generator
) -> AnnotatorsSample:
    """Simulate data sets of an ``annotators_nested`` population, shape (data sets, persons).

    Person g has a share of true positives pi_g (a Beta with mean ``prevalence`` and ICC
    ``icc_prevalence``, a quantile of a normal latent), an effect c_g ~ N(0,
    ``person_sd``^2) and a number of texts (as in ``nested``, unrelated to the rest);
    text i is truly positive with probability pi_g and has a difficulty d_i ~ N(0,
    ``text_sd``^2). The classifier labels it positive with probability ``recall``
    (y = 1) or 1 - ``specificity`` (y = 0); each data set's annotators have shifts
    b_a ~ N(0, ``annotator_sd``^2), and annotator a codes the text positive with
    probability Phi(alpha_y + d_i + c_g + b_a) (:func:`annotator_intercepts`), if they
    code it at all (:func:`_coded_mask`; with ``coding = "after_first"`` the first
    annotator codes every text and each other one a text with probability
    ``coded_positive`` where the first coded it positive, ``coded`` where negative).
    Every text of every data set is drawn at once.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.harness.populations import draw_annotators
    >>> params = {"texts_per_person": 4.0, "size_cv": 0.0, "min_texts": 1,
    ...           "prevalence": 0.3, "icc_prevalence": 0.1, "annotators": 3, "recall": 0.85,
    ...           "specificity": 0.9, "annotator_accuracy": 0.9, "text_sd": 1.0,
    ...           "person_sd": 0.5, "annotator_sd": 0.3, "coded": 0.6}
    >>> sample = draw_annotators(params, (2, 5), np.random.default_rng(0))
    >>> sample.codes.shape, sample.person_cells().shape, bool(sample.coded.any(1).all())
    ((40, 3), (2, 5, 3, 4), True)
    >>> cells, multiplicity = sample.patterns()  # the distinct texts of each data set
    >>> multiplicity.sum(1)
    array([20., 20.])
    """
    from scipy import special

    alpha_1, alpha_0, _ = annotator_intercepts(params)
    annotators = int(params["annotators"])
    share = beta_quantile(
        rng.standard_normal(shape), params["prevalence"], params["icc_prevalence"]
    )
    person_effect = params["person_sd"] * rng.standard_normal(shape)
    n = cell_sizes(params, person_effect, rng, informative=0.0)
    annotator_effects = params["annotator_sd"] * rng.standard_normal((shape[0], annotators))
    owner = np.repeat(np.arange(share.size), n.ravel())
    true_class = rng.random(owner.size) < share.ravel()[owner]
    said = rng.random(owner.size) < np.where(
        true_class, params["recall"], 1 - params["specificity"]
    )
    latent = np.where(true_class, alpha_1, alpha_0) + person_effect.ravel()[owner]
    latent += params["text_sd"] * rng.standard_normal(owner.size)
    probability = special.ndtr(latent[:, None] + annotator_effects[owner // shape[1]])
    codes = rng.random(probability.shape) < probability
    if params.get("coding", "random") == "after_first":
        # the first annotator codes every text; the others mostly the first's positives
        chance = np.where(codes[:, :1], params["coded_positive"], params["coded"])
        coded = np.c_[
            np.ones((codes.shape[0], 1), dtype=bool),
            rng.random((codes.shape[0], annotators - 1)) < chance,
        ]
    else:
        coded = _coded_mask(params["coded"], codes.shape, rng)
    return AnnotatorsSample(
        true_class,
        said,
        codes & coded,
        coded,
        owner,
        annotator_effects,
        (int(shape[0]), int(shape[1])),
    )
