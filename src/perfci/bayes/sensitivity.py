r"""Prior sensitivity: a credible interval under the concentration's two priors.

:func:`prior_sensitivity` computes the exact grid interval (:func:`~perfci.bayes.grid_intervals`)
under a prior and under the alternative one, with the same random numbers, and says
whether they differ materially; :class:`PriorSensitivity` is its result.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from .._core.deprecation import DEFAULT_LEVEL, UNSET, hide_level, resolve_level
from .._core.grid import s_prior
from .._core.results import ResultMixin
from .._core.validation import check_real_scalar, check_rng
from .grid import GRID_DRAWS, GRID_ESTIMANDS, GRID_SHAPE, grid_intervals
from .intervals import CredibleInterval, check_estimand

__all__ = ["ALTERNATIVE_PRIOR", "MATERIAL_SHIFT", "PriorSensitivity", "prior_sensitivity"]

#: The prior each prior is checked against by default.
ALTERNATIVE_PRIOR = {"pareto": "bda3", "bda3": "pareto"}
#: Default tolerance: a move of more than this fraction of the interval's width is material.
MATERIAL_SHIFT = 0.1

_WHICH = ("low end", "median", "high end")


@dataclass(frozen=True)
class PriorSensitivity(ResultMixin):
    """A credible interval under two priors, and whether they differ materially.

    Attributes
    ----------
    prior, alternative_prior : str
        The prior of the interval to report, and the one it is checked against.
    interval, alternative : CredibleInterval
        The credible interval under each (exact grid).
    shift : float or numpy.ndarray
        The largest move of the low end, the median or the high end from `interval` to
        `alternative`, as a fraction of the width of `interval`.
    differs : bool or numpy.ndarray
        ``shift > tolerance``: the prior matters for this interval.
    reason : str or numpy.ndarray of str
        Which end moved most, by how much, in words.
    tolerance : float
        The fraction of the width beyond which a move is material.

    Notes
    -----
    :meth:`rows` gives one report-ready row per prior. :meth:`to_dict`, :meth:`to_frame`
    and :meth:`to_xarray` hold every field (the intervals as ``interval.low``, ...; one
    row per data set for a batch).
    """

    prior: str
    alternative_prior: str
    interval: CredibleInterval
    alternative: CredibleInterval
    shift: Any
    differs: Any
    reason: Any
    tolerance: float

    def rows(self) -> list[dict[str, Any]]:
        """One row per prior, the given one first, as a report row needs it.

        Returns
        -------
        list of dict
            Keys ``estimand``, ``prior``, ``estimate``, ``low``, ``high``, ``kind``,
            ``level``, ``differs`` and ``reason`` (the same on both rows).

        Examples
        --------
        >>> import perfci as pc
        >>> y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
        >>> check = pc.bayes.prior_sensitivity(y, n, estimand="mu")  # five persons
        >>> [(row["prior"], row["differs"]) for row in check.rows()]
        [('pareto', True), ('bda3', True)]
        """
        return [
            {
                "estimand": ci.estimand,
                "prior": prior,
                "estimate": ci.estimate,
                "low": ci.low,
                "high": ci.high,
                "kind": ci.kind,
                "confidence_level": ci.confidence_level,
                "differs": self.differs,
                "reason": self.reason,
            }
            for prior, ci in (
                (self.prior, self.interval),
                (self.alternative_prior, self.alternative),
            )
        ]


@hide_level
def prior_sensitivity(
    successes: ArrayLike,
    trials: ArrayLike,
    *,
    estimand: str = "population",
    confidence_level: float = DEFAULT_LEVEL,
    kind: Literal["eti", "hdi"] = "eti",
    prior: str = "pareto",
    alternative: str | None = None,
    tolerance: float = MATERIAL_SHIFT,
    population_sizes: ArrayLike | None = None,
    population_persons: Any = None,
    shape: tuple[int, int] = GRID_SHAPE,
    draws: int = GRID_DRAWS,
    rng: Any = None,
    batch: int | None = None,
    level: Any = UNSET,
) -> PriorSensitivity:
    r"""Credible intervals under a prior and an alternative, and whether they differ.

    Both come from the exact grid (:func:`grid_intervals`), for one data set or a batch.

    Parameters
    ----------
    successes, trials : array_like of int, shape (\*batch, persons)
        Per-person counts, as for :func:`grid_intervals`.
    estimand : {"population", "mu", "sampled_persons"}, default "population"
        The interval's estimand (see :mod:`perfci.bayes`).
    confidence_level : float, default 0.95
        Credible level (``level``, its former name, is deprecated).
    kind : {"eti", "hdi"}, default "eti"
        Interval kind.
    prior : {"pareto", "bda3"}, default "pareto"
        The prior of the interval to report.
    alternative : {"pareto", "bda3"}, optional
        The prior to check it against; by default the other one.
    tolerance : float, default 0.1
        A move of an end or of the median by more than this fraction of the width of the
        interval under `prior` is material.
    population_sizes, population_persons, shape, draws, batch
        As for :func:`grid_intervals`.
    rng : numpy.random.Generator, int or None
        Seed of the draws (unused for ``"mu"``): both priors' intervals use the same
        random numbers (common random numbers: the Monte-Carlo error of their difference
        is smaller than each one's), each as its own :func:`grid_intervals` call with
        this `rng` would.

    Returns
    -------
    PriorSensitivity
        ``interval`` (under `prior`, equal to ``grid_intervals(..., prior=prior)``),
        ``alternative``, ``shift``, ``differs``, ``reason``; :meth:`~PriorSensitivity.rows`
        gives one report row per prior.

    Raises
    ------
    ValueError
        For an unknown prior or estimand, an `alternative` equal to `prior`, or a
        `tolerance` that is not positive; else as :func:`grid_intervals`.

    Notes
    -----
    **The rule.** With w the width of the interval under `prior`, the shift is the largest
    of the moves of the low end, the median and the high end, divided by w; the priors
    differ materially when it exceeds `tolerance`. Why a tenth of the width: for a
    posterior close to normal, a 95% equal-tailed interval is 3.92 posterior SDs wide,
    so a move of w/10 is 0.39 SD, which turns the 2.5% tail beyond an end into 5.8% or
    0.9%: the alternative's interval is then a 92% or a 98% interval of the reported
    posterior, and a median 0.39 SD away is a different answer to "how good is it". Moves
    below it are below the digits usually reported. For the drawn estimands the ends
    carry Monte-Carlo error: with the default 4,000 draws the SE of an end of a normal
    posterior is about 1% of w, so the rule's 10% is far beyond what chance alone moves
    (and the common random numbers shrink it further). A real shift close to the
    tolerance, though, can be flagged under one seed and not another; more `draws`
    settle it.

    Under the two priors the tail of kappa always differs (:mod:`perfci._core.tails`);
    what this checks is whether that reaches the interval. It does when the data say
    little about how alike the persons are: few persons, or few texts each.

    Examples
    --------
    Five persons: how alike they are is barely known, and the prior shows in mu.

    >>> import numpy as np
    >>> import perfci as pc
    >>> few = pc.bayes.prior_sensitivity([28, 25, 30, 22, 27], [30, 30, 30, 26, 30], estimand="mu")
    >>> for name, ci in [(few.prior, few.interval), (few.alternative_prior, few.alternative)]:
    ...     print(f"{name:7} mu {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    pareto  mu 0.828 [0.590, 0.939]
    bda3    mu 0.881 [0.685, 0.947]
    >>> bool(few.differs)
    True
    >>> print(few.reason)  # doctest: +NORMALIZE_WHITESPACE
    under prior 'bda3' the low end moves by +0.0954 (27% of the width): more than 10% of
    the width of the 'pareto' interval

    Three hundred persons: the data decide.

    >>> rng = np.random.default_rng(1)
    >>> trials = rng.integers(2, 10, size=300)
    >>> successes = rng.binomial(trials, rng.beta(7.2, 0.8, size=300))
    >>> many = pc.bayes.prior_sensitivity(successes, trials, estimand="mu")
    >>> bool(many.differs), round(many.shift, 3)
    (False, 0.03)
    """
    confidence_level = resolve_level(confidence_level, level)
    estimand = check_estimand("estimand", estimand, GRID_ESTIMANDS)
    s_prior(prior)
    if alternative is None:
        if prior not in ALTERNATIVE_PRIOR:
            raise ValueError(f"`alternative` must be given for prior {prior!r}.")
        alternative = ALTERNATIVE_PRIOR[prior]
    s_prior(alternative)
    if alternative == prior:
        raise ValueError(f"`alternative` must differ from `prior`; both are {prior!r}.")
    tol = check_real_scalar("tolerance", tolerance)
    if not tol > 0:
        raise ValueError(
            f"`tolerance` must be a positive fraction of the width; got {tolerance!r}."
        )
    generator = check_rng(rng)
    options: dict[str, Any] = {
        "estimand": estimand,
        "confidence_level": confidence_level,
        "kind": kind,
        "population_sizes": population_sizes,
        "population_persons": population_persons,
        "shape": shape,
        "draws": draws,
        "batch": batch,
    }
    # one copy of the generator each: the same random numbers for both priors
    given = grid_intervals(successes, trials, prior=prior, rng=copy.deepcopy(generator), **options)
    other = grid_intervals(
        successes, trials, prior=alternative, rng=copy.deepcopy(generator), **options
    )
    ends = np.stack(
        [np.asarray(getattr(given, f), dtype=float) for f in ("low", "estimate", "high")]
    )
    moved = np.stack(
        [np.asarray(getattr(other, f), dtype=float) for f in ("low", "estimate", "high")]
    )
    width = ends[2] - ends[0]
    relative = np.abs(moved - ends) / width
    which = np.argmax(relative, axis=0)
    shift = np.take_along_axis(relative, which[None], 0)[0]
    delta = np.take_along_axis(moved - ends, which[None], 0)[0]
    differs = shift > tol
    reasons = [
        _reason(bool(d), _WHICH[int(i)], float(m), float(r), prior, alternative, tol)
        for d, i, m, r in zip(
            differs.ravel(), which.ravel(), delta.ravel(), shift.ravel(), strict=True
        )
    ]
    if not np.ndim(given.low):
        return PriorSensitivity(
            prior, alternative, given, other, float(shift), bool(differs), reasons[0], tol
        )
    return PriorSensitivity(
        prior,
        alternative,
        given,
        other,
        shift,
        differs,
        np.array(reasons, dtype=str).reshape(shift.shape),
        tol,
    )


def _reason(
    differs: bool, which: str, delta: float, shift: float, prior: str, alternative: str, tol: float
) -> str:
    """Say which end moved most and whether that is material."""
    move = f"the {which} moves by {delta:+.3g} ({100 * shift:.0f}% of the width)"
    if differs:
        return (
            f"under prior {alternative!r} {move}: more than {100 * tol:g}% of the width of "
            f"the {prior!r} interval"
        )
    return (
        f"under prior {alternative!r} every end moves by at most {100 * tol:g}% of the "
        f"width of the {prior!r} interval ({move})"
    )
