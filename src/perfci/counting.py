"""Labels to counts: the one place where rows of labelled texts become count arrays."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._core.joint import joint_cells
from ._core.labels import (
    MAX_FRACTIONAL_LABELS,
    as_label_array,
    binary_code,
    check_aligned,
    check_distinct,
    factorize_sorted,
    label_array,
    label_kind,
    listing,
    places,
    plain,
    same_label,
    sorted_labels,
    text_key,
)
from ._core.results import ResultMixin
from .metrics import CELLS

__all__ = [
    "ConfusionCounts",
    "LabelSet",
    "confusion",
    "factorize_sorted",
    "joint_confusion",
    "normalize_labels",
    "score_like",
]


@dataclass(frozen=True)
class ConfusionCounts(ResultMixin):
    """Confusion-matrix counts of labelled texts, per person and class where asked.

    Attributes
    ----------
    counts : numpy.ndarray
        Integer counts, last axis ``[tp, fp, fn, tn]``. Shape ``(4,)`` for one binary
        matrix, ``(k, 4)`` for one-vs-rest counts of k classes, and with a leading
        axis of one row per person when `groups` were given: ``(m, 4)`` or ``(m, k, 4)``.
    positive : object or None
        The positive label of a binary matrix; None for one-vs-rest counts.
    classes : numpy.ndarray or None
        The class labels, in the order of the class axis; None for a binary matrix.
    groups : numpy.ndarray or None
        The person ids, in the order of the person axis; None without groups.
    dims : tuple of str
        Names of the axes of `counts`: ``"person"``, ``"class"``, ``"cell"``.
    matrix : numpy.ndarray or None
        For multi-class counts, the k x k confusion matrices (rows: reference class,
        columns: classifier class), per person with groups: the joint counts a text-level
        bootstrap resamples. None for a binary matrix.

    Notes
    -----
    The object converts to its count array, so it can be passed wherever counts are
    expected (``numpy.asarray(result)`` is ``result.counts``). :meth:`to_frame` gives one
    row per matrix, :meth:`to_xarray` the counts (and matrices) with named dims, and
    :meth:`to_dict` a JSON-ready dict.
    """

    counts: np.ndarray
    positive: Any = None
    classes: np.ndarray | None = None
    groups: np.ndarray | None = None
    dims: tuple[str, ...] = field(default=("cell",))
    matrix: np.ndarray | None = None

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return self.counts if dtype is None else self.counts.astype(dtype)

    @property
    def n_texts(self) -> int:
        """Number of labelled texts counted."""
        per_matrix = self.counts[..., 0, :] if self.classes is not None else self.counts
        return int(per_matrix.sum())

    def to_frame(self) -> pd.DataFrame:
        """Return the counts as a :class:`pandas.DataFrame`, one row per matrix.

        Examples
        --------
        >>> import perfci as pc
        >>> pc.confusion([1, 0, 1, 1], [1, 1, 0, 1], groups=["x", "x", "y", "y"]).to_frame()
                tp  fp  fn  tn
        person
        x        1   1   0   0
        y        1   0   1   0
        """
        lead = self.dims[:-1]
        labels = {"person": self.groups, "class": self.classes}
        flat = self.counts.reshape(-1, 4)
        if not lead:
            return pd.DataFrame(flat, columns=list(CELLS))
        if len(lead) == 1:
            index = pd.Index(labels[lead[0]], name=lead[0])
        else:
            index = pd.MultiIndex.from_product([labels[d] for d in lead], names=list(lead))
        return pd.DataFrame(flat, index=index, columns=list(CELLS))

    def to_dataframe(self) -> pd.DataFrame:
        """Return the counts as a :class:`pandas.DataFrame`; the same as :meth:`to_frame`."""
        return self.to_frame()

    def to_xarray(self) -> Any:
        """Return the counts as an :class:`xarray.Dataset` with dims named as :attr:`dims`.

        The variable ``counts`` has the dims of :attr:`dims` with coordinates ``person``
        (the group ids), ``class`` and ``cell`` (``tp``, ``fp``, ``fn``, ``tn``); for
        multi-class counts, ``matrix`` has dims ``reference`` and ``classifier`` (the
        class labels) after ``person``.

        Examples
        --------
        >>> import perfci as pc
        >>> ds = pc.confusion([1, 0, 1, 1], [1, 1, 0, 1], groups=["x", "x", "y", "y"]).to_xarray()
        >>> ds["counts"].sel(person="y", cell="fn").item()
        1
        """
        import xarray as xr

        coords: dict[str, Any] = {"cell": list(CELLS)}
        if self.groups is not None:
            coords["person"] = self.groups
        if self.classes is not None:
            coords["class"] = self.classes
        variables: dict[str, Any] = {"counts": (self.dims, self.counts)}
        if self.matrix is not None:
            lead = ("person",) if self.groups is not None else ()
            variables["matrix"] = ((*lead, "reference", "classifier"), self.matrix)
            coords["reference"] = self.classes
            coords["classifier"] = self.classes
        attrs = {} if self.positive is None else {"positive": self.positive}
        return xr.Dataset(variables, coords=coords, attrs=attrs)


@dataclass(frozen=True)
class LabelSet:
    """Label arguments after :func:`normalize_labels`: one coding, checked once.

    Attributes
    ----------
    values : dict of str to numpy.ndarray
        Each argument's labels, by argument name. A recognized binary code is the
        integers 0 and 1 in every argument.
    positive : object or None
        The positive label in the same coding; None for one-vs-rest counts.
    classes : numpy.ndarray
        The labels, sorted: those observed in any argument, or ``[0, 1]`` for a binary code.
    coded : bool
        Whether the labels were recognized as one binary code (0/1, False/True or their
        strings) and recoded to the integers 0 and 1.
    """

    values: dict[str, np.ndarray]
    positive: Any
    classes: np.ndarray
    coded: bool


def normalize_labels(
    columns: dict[str, Any],
    *,
    positive: Any = None,
    negative: Any = None,
    infer_positive: bool = True,
    ndim: int | None = 1,
    names: dict[str, str] | None = None,
    rows: tuple[str, int] = ("position", 0),
) -> LabelSet:
    """Check label arguments and bring them to one coding: the input contract for labels.

    Every function that takes labels (:func:`confusion`, :func:`perfci.metric_ci`,
    :func:`perfci.report`, :func:`perfci.compare`, :func:`perfci.bayes.fit_proportion` and the
    command line) reads them through this function, so one set of rules holds everywhere:

    1. Missing values (None, NaN, ``pd.NA``, NaT) are refused, with their count and where
       the first ones are.
    2. An argument of numbers with more than :data:`MAX_FRACTIONAL_LABELS` distinct values,
       some not whole, is taken for model scores and refused: scores are thresholded into
       labels first.
    3. A binary code given as integers, floats, booleans or their strings (``1``, ``1.0``,
       ``True``, ``"1"``, ``"1.0"``, ``"true"``, ``"True"``) is one code, whichever of these
       each argument uses: every argument is recoded to the integers 0 and 1, and so are
       `positive` (default 1) and `negative`.
    4. Otherwise, labels that can never match are refused, showing each argument's coding:
       numbers beside text (1 is not ``"1"``), a binary code in one argument and no code in
       another (``0/1`` against ``"no"/"yes"``), or two arguments with two or more labels
       each and none in common.
    5. Text labels that differ only in case or surrounding whitespace (``"yes"``,
       ``" yes"``, ``"Yes"``) are refused, naming each spelling and its count in each
       argument: they would count as different labels, a near-miss of the positive label
       as a negative.
    6. `positive` must be one of the labels; two labels that are not a binary code need it
       named (when `infer_positive`); with `negative`, every label must be one of the two.

    Parameters
    ----------
    columns : dict of str to array_like
        The label arguments by name, reference first (``{"y_true": ..., "y_pred": ...}``),
        each with its texts on the last axis.
    positive, negative : object, optional
        The positive label, and the negative one when any other label is an error.
    infer_positive : bool, default True
        Whether to default `positive` (1 for a binary code) and ask for it for two other
        labels; False (one-vs-rest counts of given classes) leaves it None unless given.
    ndim : int or None, default 1
        1 for one-dimensional arguments; None for any shape (a batch of data sets).
    names : dict of str to str, optional
        How the arguments, ``positive`` and ``negative`` are named in messages (default:
        the name in backticks); the command line names its flags and columns.
    rows : tuple of (str, int), default ("position", 0)
        The word for a place in an argument, and the number of the first place.

    Returns
    -------
    LabelSet
        The labels in one coding, the positive label in it, and the classes.

    Raises
    ------
    ValueError
        With the messages of the rules above, naming the argument.

    Examples
    --------
    >>> from perfci.counting import normalize_labels
    >>> labels = normalize_labels({"y_true": [1, 0, 1, 1], "y_pred": ["1", "0", "1", "0"]})
    >>> labels.values["y_pred"], labels.positive
    (array([1, 0, 1, 0]), 1)
    """
    shown = {key: f"`{key}`" for key in (*columns, "positive", "negative")}
    shown.update(names or {})
    arrays = {
        key: label_array(shown[key], value, ndim=ndim, rows=rows) for key, value in columns.items()
    }
    uniques = {key: pd.unique(arr.ravel()) for key, arr in arrays.items()}
    for key, values in uniques.items():
        _refuse_scores(shown[key], values)
    every = pd.unique(np.concatenate([u.astype(object) for u in uniques.values()]))
    codes = [binary_code(v) for v in every]
    coded = all(c is not None for c in codes)
    if coded:
        table = dict(zip(every.tolist(), codes, strict=True))
        arrays = {key: _recode(arr, table) for key, arr in arrays.items()}
        classes = np.array([0, 1])
        positive, negative = (
            v if v is None or binary_code(v) is None else binary_code(v)
            for v in (positive, negative)
        )
    else:
        _refuse_numbers_beside_text(shown, uniques)
        _refuse_near_misses(shown, arrays, uniques, positive)
        _refuse_codings_that_never_match(shown, uniques)
        kinds = {label_kind(v) for v in every}
        classes = np.asarray(sorted_labels(every), dtype=None if len(kinds) == 1 else object)

    if positive is None and infer_positive and classes.size <= 2:
        if not coded:
            raise ValueError(
                f"{shown['positive']} must name the positive label for binary labels "
                f"{sorted_labels(classes)!r}."
            )
        positive = 1
    if positive is not None and not any(same_label(c, positive) for c in classes.tolist()):
        raise ValueError(
            f"{shown['positive']} label {plain(positive)!r} is not among the labels "
            f"{sorted_labels(classes)!r}{_did_you_mean(positive, classes)}."
        )
    if negative is not None:
        for key, arr in arrays.items():
            other = ~pd.Series(arr.ravel()).isin([positive, negative]).to_numpy()
            if other.any():
                raise ValueError(
                    f"{shown[key]} holds labels that are neither the {shown['positive']} "
                    f"{plain(positive)!r} nor the {shown['negative']} {plain(negative)!r}: "
                    f"{listing(sorted_labels(pd.unique(arr.ravel()[other])))}, at "
                    f"{places(other, arr.shape, rows)}."
                )
    return LabelSet(values=arrays, positive=positive, classes=classes, coded=coded)


def _recode(arr: np.ndarray, table: dict[Any, int]) -> np.ndarray:
    """`arr` as the integers 0/1, by the code `table` of its distinct values."""
    if arr.dtype.kind in "biuf":
        return arr.astype(np.int64, copy=False)  # 64-bit integers already: no copy
    codes, uniques = pd.factorize(arr.ravel())
    lookup = np.asarray([table[v] for v in uniques.tolist()], dtype=np.int64)
    return lookup[codes].reshape(arr.shape)


def _as_number(value: Any) -> float | None:
    """Return a label as a number (numbers and number strings, not booleans), else None."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return None
        return number if np.isfinite(number) else None
    return None


def score_like(values: Any) -> str | None:
    """Say why distinct label values look like scores, or return None if they do not.

    Numbers (or number strings) with more than :data:`MAX_FRACTIONAL_LABELS` distinct
    values, some not whole, are scores: a column of model probabilities, not labels. The
    one rule :func:`normalize_labels` and the command line apply.

    Examples
    --------
    >>> from perfci.counting import score_like
    >>> score_like(["0.91", "0.12", "0.5"])
    '3 distinct numbers from 0.12 to 0.91, some not whole (e.g. 0.91)'
    >>> score_like([0, 1]) is None
    True
    """
    values = pd.unique(np.asarray(values).ravel())
    if values.size <= MAX_FRACTIONAL_LABELS or values.dtype.kind in "biu":
        return None
    if values.dtype.kind == "f":
        numbers_ = values.astype(float)
    else:
        parsed = [_as_number(v) for v in values.tolist()]
        if any(v is None for v in parsed):
            return None
        numbers_ = np.asarray(parsed, dtype=float)
    fractional = numbers_[numbers_ != np.round(numbers_)]
    if fractional.size == 0:
        return None
    return (
        f"{numbers_.size} distinct numbers from {numbers_.min():g} to {numbers_.max():g}, "
        f"some not whole (e.g. {fractional[0]:g})"
    )


def _refuse_scores(shown: str, values: np.ndarray) -> None:
    """Refuse an argument of numbers with many distinct values, some not whole: scores."""
    found = score_like(values)
    if found is not None:
        raise ValueError(
            f"{shown} looks like scores, not labels: {found}. perfci counts labels: "
            "threshold the scores into labels first (e.g. 1 where the score is at least "
            "0.5, else 0) and pass those."
        )


def _coding(shown: str, values: np.ndarray) -> str:
    kinds = sorted({label_kind(v) for v in values} - {"other"})
    return (
        f"{shown} holds {listing(sorted_labels(values))} ({' and '.join(kinds) or 'other values'})"
    )


def _refuse_numbers_beside_text(shown: dict[str, str], uniques: dict[str, np.ndarray]) -> None:
    """Refuse numbers beside text: 1 and "1" are different labels and never match."""
    kinds = set().union(*({label_kind(v) for v in u} for u in uniques.values()))
    if {"numbers", "text"} <= kinds:
        raise ValueError(
            "the labels mix numbers and text, which never match (1 is not '1'): "
            + "; ".join(_coding(shown[key], u) for key, u in uniques.items())
            + "; code them alike."
        )


def _refuse_codings_that_never_match(shown: dict[str, str], uniques: dict[str, np.ndarray]) -> None:
    """Refuse a binary code against labels that are not one, or two codings with nothing shared.

    The reference (the first argument) is set against each of the others.
    """
    is_code = {key: [binary_code(v) is not None for v in u.tolist()] for key, u in uniques.items()}
    reference, *others = uniques
    for other in others:
        pair = (reference, other)
        for a, b in (pair, pair[::-1]):
            if all(is_code[a]) and not any(is_code[b]):
                raise ValueError(
                    f"{shown[a]} holds a binary code and {shown[b]} labels that are not one: "
                    + "; ".join(_coding(shown[k], uniques[k]) for k in pair)
                    + "; code both alike."
                )
        shared = set(uniques[reference].tolist()) & set(uniques[other].tolist())
        if not shared and min(uniques[k].size for k in pair) >= 2:
            raise ValueError(
                f"{shown[reference]} and {shown[other]} have no label in common: "
                + "; ".join(_coding(shown[k], uniques[k]) for k in pair)
                + "; code both alike."
            )


def _refuse_near_misses(
    shown: dict[str, str],
    arrays: dict[str, np.ndarray],
    uniques: dict[str, np.ndarray],
    positive: Any,
) -> None:
    """Refuse text labels that differ only in case or surrounding whitespace."""
    spellings: dict[str, set[str]] = {}
    for values in uniques.values():
        for v in values.tolist():
            if isinstance(v, str):
                spellings.setdefault(v.strip().casefold(), set()).add(v)
    clashes = [sorted(group) for group in spellings.values() if len(group) > 1]
    if not clashes:
        return
    tallies = {key: pd.Series(arr.ravel()).value_counts() for key, arr in arrays.items()}

    def counted(label: str) -> str:
        where = [
            f"{int(t[label])} {'text' if t[label] == 1 else 'texts'} in {shown[key]}"
            for key, t in tallies.items()
            if label in t
        ]
        return f"{label!r} ({', '.join(where)})"

    group = next((g for g in clashes if positive in g), clashes[0])
    if positive in group:
        raise ValueError(
            f"labels that differ from the {shown['positive']} label {positive!r} only in case "
            "or surrounding whitespace would count as negatives: "
            + ", ".join(counted(g) for g in group if g != positive)
            + f", beside {counted(positive)}; recode them to one spelling."
        )
    raise ValueError(
        "labels that differ only in case or surrounding whitespace would count as different "
        f"labels: {', '.join(counted(g) for g in group)}; recode them to one spelling."
    )


def _did_you_mean(positive: Any, classes: np.ndarray) -> str:
    """Name the labels that read like `positive` but are not it (``'Yes'``, ``1``)."""
    near = [c for c in classes.tolist() if text_key(c) == text_key(positive)]
    return f"; {listing(near)} reads like it but is not the same label" if near else ""


def confusion(
    y_true: Any,
    y_pred: Any,
    *,
    positive: Any = None,
    groups: Any = None,
    labels: Any = None,
) -> ConfusionCounts:
    """Count a confusion matrix from labels, per person if `groups` are given.

    Parameters
    ----------
    y_true : array_like
        Reference labels (usually the human codes), one per text: a list, NumPy array
        or pandas Series.
    y_pred : array_like
        Classifier labels for the same texts, in the same order.
    positive : object, optional
        The positive label. Binary counts ``(4,)`` are returned when it is given, or
        when the labels are a binary code (then it defaults to 1). Without it, data with
        three or more classes give one-vs-rest counts for every class; two labels that
        are not a binary code need it named.
    groups : array_like, optional
        Person ids, one per text. Counts then have a leading person axis, one row
        per person in sorted id order (ids of types that do not compare, such as 3 and
        ``"ann"`` in one object column, in the order of their text, as labels are).
    labels : array_like, optional
        Class labels to count, in the order of the class axis, for one-vs-rest counts.
        Default: the sorted union of the labels in `y_true` and `y_pred`.

    Returns
    -------
    ConfusionCounts
        Integer counts with last axis ``[tp, fp, fn, tn]`` and their labels.

    Raises
    ------
    ValueError
        If the inputs have different lengths or are empty; or by the label contract of
        :func:`normalize_labels`: missing values (with their count and positions), a
        column of scores, codings that can never match, labels that differ only in case
        or surrounding whitespace, a `positive` that is not among the labels, or two
        labels that are not a binary code with `positive` unnamed; `labels` that
        repeat a class or leave out an observed label.

    Notes
    -----
    Labels are read by one contract (:func:`normalize_labels`). A binary code is one
    code whatever its type: 1, 1.0, True, "1", "1.0" and "true" are the same label in
    either argument, and are counted as the integer 1 (the default positive label).
    Anything that would silently count a label as another (1 beside "1", "yes" beside
    "Yes " or "Yes") is refused with a message that names the labels and their counts.

    Examples
    --------
    >>> import perfci as pc
    >>> human = ["yes", "yes", "no", "no", "yes", "no"]
    >>> model = ["yes", "no", "no", "yes", "yes", "no"]
    >>> pc.confusion(human, model, positive="yes").counts
    array([2, 1, 1, 2])
    >>> pc.confusion(human, model, positive="yes", groups=[1, 1, 1, 2, 2, 2]).counts
    array([[1, 0, 1, 1],
           [1, 1, 0, 1]])
    >>> pc.confusion(["a", "b", "c", "a"], ["a", "b", "b", "c"]).counts
    array([[1, 0, 1, 2],
           [1, 1, 0, 2],
           [0, 1, 1, 2]])
    >>> pc.confusion([1, 0, 1, 1], ["1", "0", "1", "0"], positive="1").counts
    array([2, 0, 1, 1])
    """
    check_aligned(y_true=y_true, y_pred=y_pred, groups=groups)
    given = normalize_labels(
        {"y_true": y_true, "y_pred": y_pred}, positive=positive, infer_positive=labels is None
    )
    t, p = given.values["y_true"], given.values["y_pred"]
    positive = given.positive
    if t.shape != p.shape:
        raise ValueError(
            f"`y_true` and `y_pred` must have the same length; got {t.size} and {p.size}."
        )
    if groups is not None:
        g = as_label_array("groups", groups)
        if g.shape != t.shape:
            raise ValueError(f"`groups` must have one id per text ({t.size}); got {g.size}.")
        group_ids, person = factorize_sorted(g)
    else:
        group_ids, person = None, np.zeros(t.size, dtype=np.intp)
    m = 1 if group_ids is None else group_ids.size

    classes = given.classes
    if labels is not None:
        named = as_label_array("labels", labels)
        if given.coded:
            named = np.asarray(
                [v if binary_code(v) is None else binary_code(v) for v in named.tolist()]
            )
        check_distinct("labels", named.tolist())
        observed = pd.unique(np.concatenate([t, p])).tolist()
        missing = [v for v in observed if not any(same_label(v, c) for c in named.tolist())]
        if missing:
            raise ValueError(
                f"`labels` must include every observed label; missing {sorted_labels(missing)}."
            )
        classes = named
    lead: tuple[str, ...] = () if group_ids is None else ("person",)

    if positive is not None:
        # the index of each text's cell in [tp, fp, fn, tn] (1 for a negative reference,
        # 2 for a negative classifier label) and of its person, added in place: no
        # temporary of 64-bit integers per text
        flat = (t != positive).astype(np.intp)
        negative_pred = p != positive
        flat += negative_pred
        flat += negative_pred
        if group_ids is not None:
            person *= 4
            flat += person
        counts = np.bincount(flat, minlength=m * 4).reshape(m, 4)
        counts = counts[0] if group_ids is None else counts
        return ConfusionCounts(counts, positive=positive, groups=group_ids, dims=(*lead, "cell"))

    k = classes.size
    # (person, reference class, classifier class) as one index, built in place
    flat = person
    flat *= k
    flat += pd.Categorical(t, categories=classes).codes
    flat *= k
    flat += pd.Categorical(p, categories=classes).codes
    joint = np.bincount(flat, minlength=m * k * k).reshape(m, k, k)
    counts = one_vs_rest(joint)
    if group_ids is None:
        counts, joint = counts[0], joint[0]
    return ConfusionCounts(
        counts, classes=classes, groups=group_ids, dims=(*lead, "class", "cell"), matrix=joint
    )


def one_vs_rest(matrix: np.ndarray) -> np.ndarray:
    """One-vs-rest cells ``(..., k, 4)`` from k x k confusion matrices ``(..., k, k)``.

    Rows of `matrix` are the reference class, columns the classifier's class.
    """
    tp = np.diagonal(matrix, axis1=-2, axis2=-1)
    fn = matrix.sum(axis=-1) - tp
    fp = matrix.sum(axis=-2) - tp
    tn = matrix.sum(axis=(-2, -1))[..., None] - tp - fp - fn
    return np.stack([tp, fp, fn, tn], axis=-1)


def joint_confusion(
    y_true: Any,
    pred_a: Any,
    pred_b: Any,
    groups: Any,
    positive: Any,
) -> tuple[np.ndarray, bool, tuple[int, ...]]:
    """Joint counts of two classifiers' binary labels: what :func:`perfci.compare` counts.

    Returns
    -------
    cells : numpy.ndarray
        ``(K, 8)``, or ``(K, persons, 8)`` with `groups` (data sets flattened).
    nested : bool
        Whether `groups` were given.
    batch_shape : tuple of int
        The leading shape of the labels.
    """
    given = normalize_labels(
        {"y_true": y_true, "pred_a": pred_a, "pred_b": pred_b}, positive=positive, ndim=None
    )
    t, a, b = (given.values[k] for k in ("y_true", "pred_a", "pred_b"))
    positive = given.positive
    if positive is None:
        raise ValueError(
            f"`positive` must name the positive label among {given.classes.tolist()!r}."
        )
    for name, arr in (("pred_a", a), ("pred_b", b)):
        if arr.shape != t.shape:
            raise ValueError(
                f"`{name}` must have one label per text of `y_true` (shape {t.shape}); "
                f"got shape {arr.shape}."
            )
    batch_shape = t.shape[:-1]
    for name, arr in (("y_true", t), ("pred_a", a), ("pred_b", b)):
        if pd.unique(arr.ravel()).size > 2:
            raise ValueError(f"`{name}` must be binary labels for a comparison.")
    person = None
    if groups is not None:
        person = as_label_array("groups", groups, ndim=None)
        if person.shape not in (t.shape, t.shape[-1:]):
            shapes = f"{t.shape}" if t.ndim == 1 else f"{t.shape[-1:]} or {t.shape}"
            raise ValueError(
                f"`groups` must have one id per text, shape {shapes}; got {person.shape}."
            )
    cells = joint_cells(
        (t == positive).astype(int),
        (a == positive).astype(int),
        (b == positive).astype(int),
        person,
    )
    return cells, person is not None, batch_shape
