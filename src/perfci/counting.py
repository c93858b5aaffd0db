"""Labels to counts: the one place where rows of labelled texts become count arrays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ._core.results import ResultMixin
from .metrics import CELLS

__all__ = ["ConfusionCounts", "confusion"]


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


def _as_label_array(name: str, values: Any) -> np.ndarray:
    if isinstance(values, pd.Series | pd.Index):
        arr = values.to_numpy()
    else:
        arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be one-dimensional; got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"`{name}` must not be empty.")
    if pd.isna(arr).any():
        raise ValueError(f"`{name}` contains missing values (NaN or None); drop or code them.")
    return arr


def _default_positive(labels: np.ndarray) -> Any:
    """Return the positive label of 0/1 or False/True codes; None when it must be named."""
    values = set(labels.tolist())
    if values <= {0, 1} or values <= {False, True}:
        return 1
    return None


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
        when the labels are 0/1 or False/True codes (then it defaults to 1). Without it,
        data with three or more classes give one-vs-rest counts for every class; two
        labels that are not 0/1 codes need it named.
    groups : array_like, optional
        Person ids, one per text. Counts then have a leading person axis, one row
        per person in sorted id order.
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
        If the inputs have different lengths, are empty or contain missing values,
        if `positive` is not among the labels, or if two non-0/1 labels leave the
        positive one unnamed.

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
    """
    t = _as_label_array("y_true", y_true)
    p = _as_label_array("y_pred", y_pred)
    if t.shape != p.shape:
        raise ValueError(
            f"`y_true` and `y_pred` must have the same length; got {t.size} and {p.size}."
        )
    if groups is not None:
        g = _as_label_array("groups", groups)
        if g.shape != t.shape:
            raise ValueError(f"`groups` must have one id per text ({t.size}); got {g.size}.")
        group_ids, person = np.unique(g, return_inverse=True)
    else:
        group_ids, person = None, np.zeros(t.size, dtype=np.intp)
    m = 1 if group_ids is None else group_ids.size

    observed = pd.unique(np.concatenate([t, p]))
    if labels is not None:
        classes = _as_label_array("labels", labels)
        missing = set(observed.tolist()) - set(classes.tolist())
        if missing:
            raise ValueError(
                f"`labels` must include every observed label; missing {sorted(missing, key=str)}."
            )
    else:
        try:
            classes = np.asarray(sorted(observed.tolist()))
        except TypeError:  # mixed label types: order them by their text
            classes = np.asarray(sorted(observed.tolist(), key=str), dtype=object)

    if positive is None and labels is None and classes.size <= 2:
        positive = _default_positive(classes)
        if positive is None:
            raise ValueError(
                f"`positive` must name the positive label for binary labels {classes.tolist()!r}."
            )
    lead: tuple[str, ...] = () if group_ids is None else ("person",)

    if positive is not None:
        if not np.any(classes == positive):
            raise ValueError(
                f"`positive` label {positive!r} is not among the labels {classes.tolist()!r}."
            )
        pos_t = t == positive
        pos_p = p == positive
        cell = np.where(pos_t, np.where(pos_p, 0, 2), np.where(pos_p, 1, 3))
        counts = np.bincount(person * 4 + cell, minlength=m * 4).reshape(m, 4)
        counts = counts[0] if group_ids is None else counts
        return ConfusionCounts(counts, positive=positive, groups=group_ids, dims=(*lead, "cell"))

    k = classes.size
    code_t = pd.Categorical(t, categories=classes).codes.astype(np.intp)
    code_p = pd.Categorical(p, categories=classes).codes.astype(np.intp)
    flat = np.bincount((person * k + code_t) * k + code_p, minlength=m * k * k)
    joint = flat.reshape(m, k, k)  # person, reference class, classifier class
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
