r"""Several human annotators: a classifier's metric against each, their majority, or a new one.

With two or three human coders per text the reference is not one label. Which of them
an interval is about is its *estimand*:

- ``"new_annotator"`` (the default): the expected metric of the classifier against a new
  annotator from the population of annotators, on the population of texts. Texts (or
  persons) and annotators are both random, crossed: the interval includes the
  uncertainty of having seen only a few annotators, who may differ systematically (one
  stricter than another).
- ``"these_annotators"``: the mean over these annotators of the metric against each.
- ``"majority"``: the metric against the majority label of these annotators (texts
  whose codes tie are left out, as :func:`perfci.agreement_report` does); a single
  reference, so texts (and persons) are the only source.

:func:`annotator_table` gives the sensitivity table a reader needs: the metric against
each annotator, the majority, and the new-annotator interval, side by side.
Agreement among the annotators themselves is :func:`perfci.annotator_agreement` and
:func:`perfci.agreement_report`.

An annotator need not code every text: a text an annotator did not code is missing for
that annotator only, and each annotator's metric is over the texts they coded. The
intervals come from the crossed design of :mod:`perfci.crossed` (annotators in the place
of the runs of :mod:`perfci.runs`), whose linearized variance components allow such
missing cells; the majority label and each single annotator get the recommended interval
of one reference, :func:`perfci.metric_ci_counts` on their cells.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ._core import registry
from ._core.imputation import MIN_SHARED_TEXTS, expected_cells, impute_codes, unit_cells
from ._core.labels import (
    as_label_array,
    check_aligned,
    factorize_sorted,
    label_table,
    majority_of_counts,
)
from ._core.results import IntervalResult, sources_of
from ._core.validation import UndefinedMetricWarning, check_label, check_rng, dataset_generators
from .crossed import confusion_cells, crossed_intervals, crossed_iv, person_run_cells
from .metric import MetricCI, metric_ci_counts
from .metrics import metric_values
from .policy import RECOMMENDED

__all__ = [
    "ANNOTATOR_ESTIMANDS",
    "AnnotatorsCI",
    "ThinOverlapWarning",
    "annotator_ci",
    "annotator_table",
]

#: What an interval with several annotators is about (:data:`registry.ANNOTATOR_ESTIMAND`).
ANNOTATOR_ESTIMANDS: tuple[str, ...] = registry.ANNOTATOR_ESTIMAND.names


@dataclass(frozen=True, repr=False)
class AnnotatorsCI(IntervalResult):
    r"""A classifier's metric against several annotators, with its confidence interval.

    Attributes
    ----------
    metric : str
        The metric.
    estimate, low, high : float
        The estimate (the mean over annotators of the metric against each; for
        ``"majority"`` the metric against the majority label) and the interval ends.
    confidence_level : float
        The confidence level.
    method : str
        How the interval was computed.
    estimand : str
        ``"new_annotator"``, ``"these_annotators"`` or ``"majority"``.
    population : str
        What the interval is about, in words.
    se, df : float
        Standard error and the t quantile's degrees of freedom (NaN where not used: the
        bootstrap, a tiny design's interval against the median annotator).
    annotators : int
        Annotators (columns of `y_true`).
    units : int
        Texts, or with persons the persons, with a relevant text.
    n_texts : int
        Texts coded by at least one annotator.
    var_units, var_annotators : float
        The variance parts from sampling texts (or persons) and annotators (NaN where
        not estimated).
    annotator_estimates : numpy.ndarray
        The metric against each annotator (over the texts they coded).
    annotator_sd : float
        Standard deviation of `annotator_estimates` (ddof 1).
    coded : numpy.ndarray
        Texts each annotator coded.
    """

    _exclude: ClassVar[tuple[str, ...]] = ("annotator_estimates", "coded")
    _derived: ClassVar[tuple[str, ...]] = ("sources",)

    metric: str
    estimate: float
    low: float
    high: float
    confidence_level: float
    method: str
    estimand: str
    population: str
    se: float
    df: float
    annotators: int
    units: int
    n_texts: int
    var_units: float
    var_annotators: float
    annotator_estimates: np.ndarray
    annotator_sd: float
    coded: np.ndarray
    persons: int | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        """Return the sources of variation the interval includes.

        Texts, persons with `groups`, and annotators for ``"new_annotator"``.
        """
        return sources_of(
            persons=self.persons is not None, annotators=self.estimand == "new_annotator"
        )

    def __repr__(self) -> str:
        return (
            f"AnnotatorsCI(metric={self.metric!r}, estimate={self.estimate:.4g}, "
            f"low={self.low:.4g}, high={self.high:.4g}, estimand={self.estimand!r}, "
            f"sources={self.sources!r}, annotators={self.annotators})"
        )


def _population(estimand: str, nested: bool, annotators: int) -> str:
    texts = (
        "the population of persons (new persons included) and their texts"
        if nested
        else "the population of texts"
    )
    if estimand == "new_annotator":
        return (
            f"the expected metric against a new annotator from the population of annotators "
            f"(of whom {annotators} were seen), on {texts}"
        )
    if estimand == "these_annotators":
        return f"the mean over these {annotators} annotators of the metric against each, on {texts}"
    return f"the metric against the majority label of these {annotators} annotators, on {texts}"


def read_codes(y_true: Any, y_pred: Any, positive: Any) -> tuple[np.ndarray, np.ndarray, Any]:
    """Check several annotators' codes and one classifier's labels; encode them.

    Returns whether each (text, annotator) code is positive ``(n, A)`` (float, NaN where
    missing), whether each prediction is positive ``(n,)``, and the positive label. The
    labels are read by :func:`perfci.counting.normalize_labels` (the observed codes and
    the predictions together); a missing code is None, NaN or ``pd.NA``.

    Examples
    --------
    >>> from perfci.annotators import read_codes
    >>> truth, said, positive = read_codes([["yes", None], ["no", "no"]], ["yes", "yes"], "yes")
    >>> truth.tolist(), said.tolist(), positive
    ([[1.0, nan], [0.0, 0.0]], [True, True], 'yes')
    """
    import pandas as pd

    from .counting import normalize_labels

    table = label_table("y_true", y_true)
    codes, missing = np.asarray(table.values, dtype=object), table.missing
    if codes.shape[1] < 2:
        raise ValueError(
            f"`y_true` must hold at least 2 annotators (columns); got {codes.shape[1]}. With "
            "one annotator use perfci.metric_ci."
        )
    if missing.all(axis=0).any():  # an annotator who coded nothing says nothing
        empty = int(np.flatnonzero(missing.all(axis=0))[0])
        names = list(y_true.columns) if isinstance(y_true, pd.DataFrame) else None
        which = f"column {names[empty]!r}" if names else f"column {empty}"
        raise ValueError(
            f"`y_true` {which} holds no code: an annotator must code at least one text "
            "(drop that column)."
        )
    if missing.all(axis=1).any():
        rows = np.flatnonzero(missing.all(axis=1))
        raise ValueError(
            f"`y_true` must have a code of at least one annotator for every text; "
            f"{rows.size} texts have none (the first at position {int(rows[0])})."
        )
    pred = y_pred.to_numpy() if isinstance(y_pred, pd.Series | pd.Index) else y_pred
    given = normalize_labels({"y_true": codes[~missing], "y_pred": pred}, positive=positive, ndim=1)
    observed = np.asarray(given.values["y_true"])
    said = np.asarray(given.values["y_pred"])
    if said.size != codes.shape[0]:
        raise ValueError(
            f"`y_pred` must have one label per text of `y_true` ({codes.shape[0]}); got "
            f"{said.size}."
        )
    if given.positive is None:
        raise ValueError(
            f"`positive` must name the positive class: the labels are "
            f"{given.classes.tolist()!r}, and the metric is of one class against the rest."
        )
    truth = np.full(codes.shape, np.nan)
    truth[~missing] = (observed == given.positive).astype(float)
    return truth, said == given.positive, given.positive


def _cells(truth: np.ndarray, said: np.ndarray, person: np.ndarray | None) -> np.ndarray:
    """Cells ``(units, annotators, 4)``: per text, or summed per person; zeros where missing."""
    coded = ~np.isnan(truth)
    cell = 2 * (~said)[:, None] + (1 - np.nan_to_num(truth)).astype(int)  # 0 tp .. 3 tn
    if person is None:
        return np.eye(4)[cell] * coded[..., None]
    return person_run_cells(cell, person, observed=coded).astype(float)


class ThinOverlapWarning(UserWarning):
    """An annotator's imputed codes rest on few texts coded with someone else."""


def _imputed_cells(
    truth: np.ndarray, said: np.ndarray, person: np.ndarray | None, units: int
) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """Cells of every text against every annotator, the missing codes imputed.

    Each annotator's metric is over every text (:mod:`perfci._core.imputation`); returns
    the cells per unit, the codes' influence on them through the imputation (None, and
    :func:`_cells` itself, for a complete design) and whether the overlap is thin. Warns
    with
    :class:`ThinOverlapWarning` where an annotator shares too few texts to be imputed
    (fewer than :data:`~perfci._core.imputation.MIN_SHARED_TEXTS`) and did not code most
    of the texts (:attr:`~perfci._core.imputation.ImputedCodes.thin`): their metric is
    then over their own texts, right only if those are like the rest.
    """
    imputed = impute_codes(truth, said)
    thin = imputed.thin[0]  # too few shared texts to impute, and their own texts a minority
    if thin.any():
        which = ", ".join(
            f"annotator {a + 1} ({imputed.shared[0, a]} texts shared, "
            f"{imputed.missing[0, a]} not coded)"
            for a in np.flatnonzero(thin)
        )
        warnings.warn(
            f"The codes an annotator did not give are imputed from those of the annotators "
            f"who coded the text, calibrated on at least {MIN_SHARED_TEXTS} texts the "
            f"annotator coded with someone else; {which} has fewer, so the metric against "
            "them is over their own texts, a minority: right if those are like the rest (a "
            "random subset), not if they were chosen (in the stress atlas, "
            "atlas-annotators-partial, the second coders of 40 texts coding mostly the "
            "first's positives: as little as 0.70). More texts coded by two annotators are "
            "the remedy.",
            ThinOverlapWarning,
            stacklevel=3,
        )
    if imputed.complete:
        return _cells(truth, said, person), None, bool(thin.any())
    cells, influence = expected_cells(said, imputed.codes), imputed.influence
    if person is not None:
        cells, influence = unit_cells(cells, person, units), unit_cells(influence, person, units)
    return cells, influence, bool(thin.any())


def majority_reference(truth: np.ndarray) -> tuple[np.ndarray, int]:
    """Return the majority code of each text (NaN where the codes tie) and the ties.

    A text's majority is positive when more of its coders said positive than negative;
    a tie leaves the text without a reference (it is left out and counted).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.annotators import majority_reference
    >>> majority_reference(np.array([[1, 1, 0], [0, np.nan, 1], [0, 0, np.nan]]))
    (array([ 1., nan,  0.]), 1)
    """
    votes = np.nansum(truth, axis=1)
    coders = np.sum(~np.isnan(truth), axis=1)
    code = majority_of_counts(np.stack([coders - votes, votes], axis=-1))  # -1: a tie, or none
    majority = np.where(code < 0, np.nan, code.astype(float))
    return majority, int(np.count_nonzero(code < 0))


def annotator_ci(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *,
    groups: Any = None,
    estimand: str = "new_annotator",
    method: str = "recommended",
    positive: Any = None,
    confidence_level: float = 0.95,
    n_resamples: int | str = RECOMMENDED,
    rng: Any = None,
) -> AnnotatorsCI:
    r"""Confidence interval for a classifier's metric against several human annotators.

    :func:`perfci.metric_ci` calls this function when `y_true` has a column per annotator.

    Parameters
    ----------
    y_true : array_like or DataFrame
        The annotators' codes, ``(n_texts, n_annotators)``, missing (None, NaN,
        ``pd.NA``) where an annotator did not code a text; every text coded at least once.
    y_pred : array_like
        The classifier's labels, one per text.
    metric : str
        A binary metric (:data:`perfci.BINARY_METRICS`).
    groups : array_like, optional
        Person ids, one per text (texts nested in persons).
    estimand : {"new_annotator", "these_annotators", "majority"}, default "new_annotator"
        What the interval is about (see :mod:`perfci.annotators`).
    method : {"recommended", "variance_components", "bootstrap"}, default "recommended"
        As in :func:`perfci.runs.runs_ci_counts`, with annotators for runs (a tiny
        design's recommended ``"new_annotator"`` interval is the median annotator's); for
        ``"majority"`` only ``"recommended"`` (:func:`perfci.metric_ci` on the majority).
    positive : object, optional
        The positive label.
    confidence_level : float, default 0.95
        Confidence level.
    n_resamples, rng
        Bootstrap options (``method="bootstrap"``; `rng` also for ``"majority"`` and a tiny design's
        median annotator); as in :func:`perfci.runs.runs_ci_counts`, `n_resamples` left at
        "recommended" is 2000 (more above a 99% level), and any number given is a bootstrap option.

    Returns
    -------
    AnnotatorsCI
        Estimate and interval, the estimand and its `sources`, the metric against each
        annotator and their SD.

    Raises
    ------
    ValueError
        For `y_true` that is not two-dimensional with at least 2 annotators, a text no
        annotator coded, labels of the wrong length or coding, and as
        :func:`perfci.runs.runs_ci_counts`.

    Warns
    -----
    UndefinedMetricWarning
        Where the metric is undefined against an annotator, and in a tiny design where
        no method is known to cover (the interval is NaN); for ``"majority"``, how many
        texts tie (they are left out).
    perfci.crossed.TinyDesignWarning
        For a tiny design, saying which interval it got.

    Notes
    -----
    The metric against annotator a is computed from the texts a coded. The estimate of
    ``"new_annotator"`` and ``"these_annotators"`` is the mean over annotators of these
    metrics, and the interval that of :func:`perfci.runs.runs_ci_counts` with the
    annotators as the crossed source: the linearized variance of the texts (or persons),
    plus for ``"new_annotator"`` the variance of the annotators' metrics beyond what the
    texts explain, with Satterthwaite's degrees of freedom (with two or three annotators
    who differ systematically close to 1 or 2: wide, as it must be). Where annotators
    coded different texts, each annotator's influence is taken on the shares of the texts
    they coded, and the interaction's degrees of freedom count the coded cells only.

    In a tiny design, fewer than :data:`perfci.policy.CROSSED_TINY_RELEVANT` (8) relevant
    texts per annotator (over the texts each coded), the recommended ``"new_annotator"``
    interval is the recommended interval against the median annotator alone (the two
    median ones joined with an even number), as for repeated runs
    (:func:`perfci.runs.runs_ci_counts`, Notes): in the stress atlas (10 texts) the
    variance components covered the new-annotator F1 only 0.878-0.912 at half-widths of
    0.49-0.92, the median annotator 0.963-0.997 at 0.38-0.45 (every metric at least
    0.959).

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> coders = texts[["human", "human_b"]]
    >>> ci = pc.metric_ci(coders, texts["model"], "recall", groups=texts["person"])
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}] about {ci.sources}")
    0.851 [0.686, 0.941] about ('texts', 'persons', 'annotators')
    >>> ci.annotator_estimates.round(3).tolist(), ci.coded.tolist()
    ([0.88, 0.819], [1069, 649])
    """
    check_aligned(y_true=y_true, y_pred=y_pred, groups=groups)
    import pandas as pd

    registry.ANNOTATOR_ESTIMAND.check(estimand)
    if metric not in registry.BINARY_METRIC:
        raise ValueError(
            f"`metric` must be a binary metric, one of {sorted(registry.BINARY_METRIC.names)}; "
            f"got {metric!r}."
        )
    level, n_resamples = crossed_iv(metric, method, confidence_level, n_resamples, None)
    check_label("positive", positive)
    if estimand == "majority" and method != "recommended":
        raise ValueError(
            "`method` must be 'recommended' for estimand 'majority': the majority is one "
            "reference, whose interval is perfci.metric_ci's."
        )
    truth, said, positive = read_codes(y_true, y_pred, positive)
    n, annotators = truth.shape
    person = None
    if groups is not None:
        ids = as_label_array("groups", groups)
        if ids.shape != (n,):
            raise ValueError(f"`groups` must have one id per text ({n}); got {ids.size}.")
        person = pd.factorize(ids)[0]
    nested = person is not None
    per_annotator = np.einsum("uac->ac", _cells(truth, said, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        estimates = metric_values(per_annotator, metric)
    common: dict[str, Any] = {
        "metric": metric,
        "confidence_level": level,
        "estimand": estimand,
        "population": _population(estimand, nested, annotators),
        "annotators": annotators,
        "n_texts": n,
        "annotator_estimates": estimates,
        "annotator_sd": float(np.std(estimates, ddof=1)),
        "coded": np.sum(~np.isnan(truth), axis=0),
        "persons": None if person is None else int(person.max()) + 1,
    }
    if estimand == "majority":
        return _majority_ci(truth, said, person, metric, level, rng, common)
    generators = (  # the bootstrap's, and the median annotator's of a tiny design
        dataset_generators(check_rng(rng), 1, False)
        if method in ("bootstrap", RECOMMENDED)
        else None
    )
    observed = _cells(truth, said, person)
    cells, influence, thin = _imputed_cells(truth, said, person, observed.shape[0])
    crossed = crossed_intervals(
        cells[None],
        np.ones((1, cells.shape[0])),
        metric,
        new_source=estimand == "new_annotator",
        method=method,
        level=level,
        n_resamples=n_resamples,
        generators=generators,
        batch=None,
        unit="persons" if nested else "texts",
        source="annotators",
        observed=None if influence is None else observed[None],
        influence=None if influence is None else influence[None],
    )
    parts = crossed["parts"]
    return AnnotatorsCI(
        estimate=float(parts["estimate"][0]),
        low=float(crossed["low"][0]),
        high=float(crossed["high"][0]),
        method=crossed["how"]
        + ("; too few texts shared to impute: over own texts" if thin else ""),
        se=float(np.asarray(crossed["se"])[0]),
        df=float(np.asarray(crossed["df"])[0]),
        units=int(parts["units"][0]),
        var_units=float(parts["var_units"][0]),
        var_annotators=float(parts["var_runs"][0]),
        **common,
    )


def _majority_ci(
    truth: np.ndarray,
    said: np.ndarray,
    person: np.ndarray | None,
    metric: str,
    level: float,
    rng: Any,
    common: dict[str, Any],
) -> AnnotatorsCI:
    """Compute the ``"majority"`` estimand: the recommended interval against the majority."""
    majority, ties = majority_reference(truth)
    if ties:
        warnings.warn(
            f"{ties} of {truth.shape[0]} texts have as many positive as negative codes; they "
            "have no majority label and are left out.",
            UndefinedMetricWarning,
            stacklevel=3,
        )
    keep = ~np.isnan(majority)
    ci = _one_reference(
        majority[keep], said[keep], None if person is None else person[keep], metric, level, rng
    )
    return AnnotatorsCI(
        estimate=ci.estimate,
        low=ci.low,
        high=ci.high,
        method=f"majority of {common['annotators']} annotators; {ci.method}",
        se=math.nan,
        df=math.nan,
        units=int(ci.persons) if ci.persons is not None else ci.relevant_n,
        var_units=math.nan,
        var_annotators=math.nan,
        **common,
    )


def annotator_table(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *,
    groups: Any = None,
    positive: Any = None,
    confidence_level: float = 0.95,
    rng: Any = None,
) -> Any:
    r"""Tabulate the metric against each annotator, their majority and a new annotator.

    Parameters
    ----------
    y_true, y_pred, metric, groups, positive, confidence_level, rng
        As in :func:`annotator_ci`.

    Returns
    -------
    pandas.DataFrame
        One row per annotator (``reference`` is the column's name or position: the
        metric against that annotator's codes, over the texts they coded, with
        :func:`perfci.metric_ci`'s recommended interval), then ``"majority"``,
        ``"these annotators"`` and ``"new annotator"``; columns ``reference``,
        ``estimate``, ``low``, ``high``, ``method``, ``sources``, ``texts`` (texts with a
        reference).

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> table = pc.annotator_table(texts[["human", "human_b"]], texts["model"], "recall",
    ...                            groups=texts["person"])
    >>> table["reference"].tolist()
    ['human', 'human_b', 'majority', 'these annotators', 'new annotator']
    """
    import pandas as pd

    if metric not in registry.BINARY_METRIC:
        raise ValueError(
            f"`metric` must be a binary metric, one of {sorted(registry.BINARY_METRIC.names)}; "
            f"got {metric!r}."
        )
    check_aligned(y_true=y_true, y_pred=y_pred, groups=groups)
    truth, said, _ = read_codes(y_true, y_pred, positive)
    names = (
        [str(c) for c in y_true.columns]
        if isinstance(y_true, pd.DataFrame)
        else [f"annotator {i}" for i in range(truth.shape[1])]
    )
    ids = None
    if groups is not None:
        ids = as_label_array("groups", np.asarray(groups, dtype=object))
        if ids.shape != (truth.shape[0],):
            raise ValueError(
                f"`groups` must have one id per text ({truth.shape[0]}); got {ids.size}."
            )
    streams = np.random.default_rng(rng).spawn(truth.shape[1] + 2)
    rows = []
    for a, name in enumerate(names):
        keep = ~np.isnan(truth[:, a])
        person = None if ids is None else factorize_sorted(ids[keep])[1]  # as confusion orders
        one = _one_reference(
            truth[keep, a], said[keep], person, metric, confidence_level, streams[a]
        )
        rows.append(
            {
                "reference": name,
                "estimate": one.estimate,
                "low": one.low,
                "high": one.high,
                "method": one.method,
                "sources": ", ".join(one.sources),
                "texts": int(keep.sum()),
            }
        )
    coded = pd.DataFrame(truth.astype(object)).where(~np.isnan(truth), None)
    for estimand, label, stream in (
        ("majority", "majority", streams[-2]),
        ("these_annotators", "these annotators", None),
        ("new_annotator", "new annotator", streams[-1]),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)  # ties: counted in texts
            ci = annotator_ci(
                coded,
                said.astype(int),
                metric,
                groups=groups,
                estimand=estimand,
                positive=1,
                confidence_level=confidence_level,
                rng=stream,
            )
        texts = (
            int(np.count_nonzero(~np.isnan(majority_reference(truth)[0])))
            if estimand == "majority"
            else int(truth.shape[0])
        )
        rows.append(
            {
                "reference": label,
                "estimate": ci.estimate,
                "low": ci.low,
                "high": ci.high,
                "method": ci.method,
                "sources": ", ".join(ci.sources),
                "texts": texts,
            }
        )
    return pd.DataFrame(rows)


def _one_reference(
    reference: np.ndarray,
    said: np.ndarray,
    person: np.ndarray | None,
    metric: str,
    confidence_level: Any,
    rng: np.random.Generator,
) -> MetricCI:
    """Compute the recommended interval against one reference's codes (1 or 0) of each text.

    With `person` codes, on the cells of each person, in the order of their codes.
    """
    cell = 2 * (~said) + (1 - reference).astype(np.int64)  # 0 tp .. 3 tn
    return metric_ci_counts(
        confusion_cells(cell, person),
        metric,
        nested=person is not None,
        confidence_level=confidence_level,
        rng=rng,
    )
