"""One result protocol: ``to_dict()``, ``to_frame()`` and ``to_xarray()`` for every result.

Every result of perfci is a frozen dataclass. :class:`ResultMixin` gives each one

- ``to_dict()``: a JSON-ready dict of its fields, in field order: plain ``float``,
  ``int``, ``str``, ``bool`` and None, lists for arrays (nested lists for arrays of
  more than one axis), nested results as nested dicts. NaN and infinity become None, so
  that ``json.dumps(result.to_dict(), allow_nan=False)`` always succeeds and the output is
  strict JSON; a None where a number is expected means "undefined" (NaN) or infinite.
- ``to_frame()``: a :class:`pandas.DataFrame`, one row for a scalar result and one row per
  element for a batched one (arrays flattened in C order, with the leading axes as the
  index, named after :attr:`ResultMixin._dims` or ``dim_0``, ``dim_1``, ...). Nested
  results and dicts become columns ``<field>.<subfield>`` (as :func:`pandas.json_normalize`
  names them); NaN stays NaN.
- ``to_xarray()``: an :class:`xarray.Dataset` with one variable per numeric or boolean
  field (nested results and dicts as ``<field>.<subfield>``) over the same dims, and the
  text fields as attributes.

pandas and xarray are imported inside these methods only: this module needs NumPy alone.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import xarray as xr

__all__ = ["SOURCES", "IntervalResult", "ResultMixin", "flat_fields", "sources_of", "to_jsonable"]

#: The sources of variation an interval's uncertainty can include, in this order.
SOURCES: tuple[str, ...] = ("texts", "persons", "runs", "annotators", "splits", "seeds")


def sources_of(
    *,
    persons: bool,
    runs: bool = False,
    annotators: bool = False,
    splits: bool = False,
    seeds: bool = False,
) -> tuple[str, ...]:
    """Return the sources of variation an interval includes, in the order of :data:`SOURCES`.

    Texts are always a source: every interval is about a population of texts.

    Examples
    --------
    >>> from perfci._core.results import sources_of
    >>> sources_of(persons=True), sources_of(persons=False, runs=True)
    (('texts', 'persons'), ('texts', 'runs'))
    """
    given = {
        "texts": True,
        "persons": persons,
        "runs": runs,
        "annotators": annotators,
        "splits": splits,
        "seeds": seeds,
    }
    return tuple(name for name in SOURCES if given[name])


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


def to_jsonable(value: Any, where: str = "value") -> Any:
    """Convert a value to plain JSON-ready Python: NaN and infinity become None.

    Parameters
    ----------
    value : object
        None, a bool, int, float or str (Python or NumPy), a NumPy array, a result (any
        object with ``to_dict``), a dataclass, a mapping, a list or a tuple, nested freely.
    where : str, default "value"
        How the value is named in the error for an unsupported type.

    Returns
    -------
    object
        Plain ``dict``, ``list``, ``str``, ``int``, ``float``, ``bool`` and None.

    Raises
    ------
    TypeError
        For a value of another type (never converted by guessing).

    Examples
    --------
    >>> import numpy as np
    >>> from perfci._core.results import to_jsonable
    >>> to_jsonable({"a": np.float64(0.5), "b": np.array([1.0, np.nan]), "c": (np.int64(3),)})
    {'a': 0.5, 'b': [1.0, None], 'c': [3]}
    """
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str):
        return str(value)  # also NumPy's str_
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _finite_or_none(float(value))
    if isinstance(value, np.generic):
        return to_jsonable(value.item(), where)
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            return to_jsonable(value[()], where)
        return [to_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, ResultMixin):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_jsonable(getattr(value, f.name), f"{where}.{f.name}")
            for f in dataclasses.fields(value)
        }
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"`{where}` of type {type(value).__name__} has no JSON form.")


def _is_result(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _flat_mapping(mapping: Mapping[Any, Any], prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            out.update(_flat_mapping(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = value
    return out


def flat_fields(result: Any, prefix: str = "") -> dict[str, Any]:
    """Return a result's fields as one flat dict, nested results and dicts as ``a.b``."""
    exclude = getattr(result, "_exclude", ())
    out: dict[str, Any] = {}
    names = [f.name for f in dataclasses.fields(result)] + list(getattr(result, "_derived", ()))
    for name in names:
        if name in exclude:
            continue
        value = getattr(result, name)
        if isinstance(value, tuple) and all(isinstance(v, str) for v in value):
            out[f"{prefix}{name}"] = ", ".join(value)  # a tuple of names, e.g. the sources
            continue
        if _is_result(value):
            out.update(flat_fields(value, f"{prefix}{name}."))
        elif isinstance(value, Mapping):
            out.update(_flat_mapping(value, f"{prefix}{name}."))
        else:
            out[f"{prefix}{name}"] = value
    return out


def _is_scalar_leaf(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | str | np.generic)


class ResultMixin:
    """``to_dict``, ``to_frame`` and ``to_xarray`` for a frozen-dataclass result.

    Subclasses may set ``_dims``, the names of the leading axes that batched fields share
    (default ``dim_0``, ``dim_1``, ...), ``_exclude``, fields left out of the frame
    and the dataset (not of the dict), and ``_derived``, properties given after the
    fields in all three (such as ``sources``). A tuple of names (the sources) is one
    text, ``"texts, persons"``, in the frame and the dataset, and a list in the dict.
    """

    _dims: ClassVar[tuple[str, ...] | None] = None
    _exclude: ClassVar[tuple[str, ...]] = ()
    _derived: ClassVar[tuple[str, ...]] = ()
    if TYPE_CHECKING:  # pragma: no cover
        # every subclass is a dataclass: this makes `dataclasses.fields(self)` type-check
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def to_dict(self) -> dict[str, Any]:
        """Return the result's fields as a JSON-ready dict (NaN and infinity as None).

        Returns
        -------
        dict
            Field names to plain Python values: arrays as (nested) lists, nested results
            as dicts. ``json.dumps(result.to_dict(), allow_nan=False)`` succeeds.
        """
        name = type(self).__name__
        fields = [f.name for f in dataclasses.fields(self)] + list(self._derived)
        return {key: to_jsonable(getattr(self, key), f"{name}.{key}") for key in fields}

    def _shape(self, fields: Mapping[str, Any]) -> tuple[int, ...]:
        shapes = [np.shape(v) for v in fields.values() if isinstance(v, np.ndarray)]
        try:
            return np.broadcast_shapes(*shapes) if shapes else ()
        except ValueError:
            raise TypeError(
                f"{type(self).__name__} has fields of shapes {shapes} that do not broadcast; "
                "it needs its own to_frame and to_xarray."
            ) from None

    def _dim_names(self, ndim: int) -> tuple[str, ...]:
        dims = self._dims
        if dims is not None and len(dims) == ndim:
            return dims
        return tuple(f"dim_{i}" for i in range(ndim))

    def to_frame(self) -> pd.DataFrame:
        """Return the result as a pandas DataFrame.

        Returns
        -------
        pandas.DataFrame
            One row for a scalar result; for a batched result one row per element (C
            order) with the leading axes as the index. Nested results and dicts give
            columns ``field.subfield``.
        """
        import pandas as pd

        fields = flat_fields(self)
        shape = self._shape(fields)
        size = math.prod(shape)
        columns: dict[str, Any] = {}
        for key, value in fields.items():
            if isinstance(value, np.ndarray):
                columns[key] = np.broadcast_to(value, shape).reshape(size)
            elif _is_scalar_leaf(value):
                columns[key] = [value] * size
            else:
                columns[key] = [to_jsonable(value, key)] * size
        if not shape:
            return pd.DataFrame(columns, index=pd.RangeIndex(1))
        names = self._dim_names(len(shape))
        if len(shape) == 1:
            index = pd.RangeIndex(shape[0], name=names[0])
        else:
            index = pd.MultiIndex.from_product([range(n) for n in shape], names=list(names))
        return pd.DataFrame(columns, index=index)

    def to_xarray(self) -> xr.Dataset:
        """Return the result as an xarray Dataset.

        Returns
        -------
        xarray.Dataset
            One variable per numeric or boolean field (nested results and dicts as
            ``field.subfield``) over the result's dims (none for a scalar result); text
            and None fields as attributes.
        """
        import xarray as xr

        fields = flat_fields(self)
        shape = self._shape(fields)
        dims = self._dim_names(len(shape))
        variables: dict[str, Any] = {}
        attrs: dict[str, Any] = {}
        for key, value in fields.items():
            if value is None or isinstance(value, str):
                attrs[key] = value
            elif isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
                variables[key] = (dims, np.broadcast_to(value, shape))
            elif isinstance(value, bool | int | float | np.bool_ | np.number):
                variables[key] = (dims, np.broadcast_to(np.asarray(value), shape))
            else:
                attrs[key] = to_jsonable(value, key)
        return xr.Dataset(variables, attrs=attrs)


def _shown(value: Any) -> str:
    """Show a number (or a small array) as a repr does: 4 significant digits."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return f"{float(arr):.4g}" if arr.dtype.kind in "fiub" else repr(value)
    return np.array2string(arr, precision=4, threshold=6, separator=", ")


class IntervalResult(ResultMixin):
    """The base of every interval result: a quantity, its interval, and what it is about.

    A subclass is a frozen dataclass whose fields or properties include `estimate` (always
    the quantity that `low` and `high` bound: for a difference, the difference), `low`,
    `high`, `confidence_level`, `method` (the interval with its options) and `sources`
    (what its uncertainty includes, :func:`sources_of`). It gets :attr:`half_width` and a
    repr that is short for a batch of data sets (their shape, not their arrays); a
    subclass lists in ``_repr_fields`` the further fields a single result's repr shows.

    Examples
    --------
    >>> import perfci as pc
    >>> truth = [[1, 1, 0, 0, 1, 0], [1, 0, 0, 1, 1, 0]]
    >>> pc.compare(truth, truth, [[1, 0, 0, 0, 1, 0]] * 2, "accuracy", method="newcombe")
    Comparison(metric='accuracy', data sets of shape (2,), confidence_level=0.95,
               method='Newcombe paired score interval')
    """

    _repr_fields: ClassVar[tuple[str, ...]] = ()

    if TYPE_CHECKING:  # what every subclass has, as a field or a property

        @property
        def estimate(self) -> Any: ...
        @property
        def low(self) -> Any: ...
        @property
        def high(self) -> Any: ...
        @property
        def confidence_level(self) -> Any: ...
        @property
        def method(self) -> str: ...

    @property
    def half_width(self) -> Any:
        """Half the interval's width, ``(high - low) / 2`` (an array for a batch)."""
        return (np.asarray(self.high, dtype=float) - np.asarray(self.low, dtype=float))[()] / 2

    def __repr__(self) -> str:
        metric = vars(self).get("metric")  # most results say which metric they are of
        parts = [] if metric is None else [f"metric={metric!r}"]
        shape = np.shape(self.estimate)
        if shape:
            parts.append(f"data sets of shape {shape}")
        else:
            parts += [
                f"{name}={_shown(getattr(self, name))}" for name in ("estimate", "low", "high")
            ]
            parts += [f"{name}={_shown(getattr(self, name))}" for name in self._repr_fields]
        level = np.asarray(self.confidence_level)
        shown = f"{float(level.flat[0]):g}" if np.all(level == level.flat[0]) else _shown(level)
        parts += [f"confidence_level={shown}", f"method={self.method!r}"]
        return f"{type(self).__name__}({', '.join(parts)})"
