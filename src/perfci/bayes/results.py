"""Results of the Bayesian fits: the hierarchical beta-binomial's and the confusion model's.

:class:`BayesFit` and :class:`ConfusionFit` hold a fit's posterior draws, diagnostics and
flags, and give its credible intervals. The interval results themselves live where they
are computed and are re-exported here: :class:`CredibleInterval` (and the estimand and
kind vocabulary) in :mod:`~perfci.bayes.intervals`, :class:`PriorSensitivity` in
:mod:`~perfci.bayes.sensitivity`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._core import registry
from .._core.deprecation import DEFAULT_LEVEL, UNSET, hide_level, resolve_level
from .._core.grid import grid_interval, interval_from_draws
from .._core.results import ResultMixin, to_jsonable
from .._core.validation import (
    check_choice,
    check_confidence_level,
)
from .intervals import (
    ESTIMANDS,
    INTERVAL_KINDS,
    RENAMED_ESTIMANDS,
    CredibleInterval,
    check_estimand,
    interval_of_draws,
)
from .samplers import BayesianDiagnosticsWarning
from .sensitivity import PriorSensitivity, prior_sensitivity

if TYPE_CHECKING:
    import pandas as pd
    import xarray as xr

__all__ = [
    "ESTIMANDS",
    "INTERVAL_KINDS",
    "RENAMED_ESTIMANDS",
    "BayesFit",
    "ConfusionFit",
    "CredibleInterval",
    "PriorSensitivity",
    "check_estimand",
]

CONFUSION_METRICS = ("recall", "precision", "f1")
#: Binary metrics, in report order (a fit's posterior holds some or all of them).
BINARY_METRICS = registry.BINARY_METRIC.names


def _asked_level(fit_level: float, confidence_level: Any, level: Any) -> Any:
    """Return the level a fit's method was asked for (the former ``level=`` too), else the fit's."""
    confidence_level = resolve_level(confidence_level, level, stacklevel=4)
    return fit_level if confidence_level is DEFAULT_LEVEL else confidence_level


@dataclass(frozen=True, repr=False)
class BayesFit(ResultMixin):
    """A fitted hierarchical beta-binomial model.

    Attributes
    ----------
    posterior : xarray.DataTree
        Group ``posterior`` with ``mu``, ``s``, ``kappa``, ``population``,
        ``sampled_persons`` and ``p`` (dim ``person``), dims ``(chain, draw)``;
        ``sample_stats`` for MCMC samplers; ``grid`` (the exact marginal posterior of
        mu) for the grid sampler.
    sampler, prior : str
        How it was fitted.
    successes, trials : numpy.ndarray
        The per-person data (persons with a relevant text only).
    diagnostics : dict
        ``r_hat`` (largest), ``ess_bulk`` and ``ess_tail`` (smallest) over mu and s,
        ``divergences`` (count); for the grid sampler ``r_hat`` is NaN (no chains) and
        the ESS is the number of independent draws.
    flagged : bool
        True if the fit failed a diagnostic; do not use it without a look.
    flag_reasons : tuple of str
        Which diagnostics failed: the sampler's (R-hat, ESS, divergences), and the tail
        check's (kappa's posterior mean is infinite; the prior is a truncation without
        which the posterior would be improper).
    confidence_level : float
        The level of the fit's intervals when a method is not given one (the fit's
        `confidence_level`, 0.95 by default).
    tail : dict
        ``{"kappa": {...}}``, which posterior moments of the concentration exist:
        ``moment_order`` (moments of order r exist iff r < it), ``mean_finite``,
        ``variance_finite``, ``pareto_k`` (the generalized-Pareto shape of the upper
        tail, 1 / moment_order), all exact, from the prior; ``pareto_k_hat``, the
        empirical k-hat of the MCMC draws' upper tail (NaN for the exact grid); and
        ``improper_without_truncation``. mu, s, the person rates and the population and
        sampled persons' rates lie in (0, 1) and have every moment. See
        :mod:`perfci._core.tails` for the derivation.

    Notes
    -----
    An infinite posterior mean of kappa flags the fit, but leaves every credible
    interval valid: quantiles exist whatever the tail. :meth:`summary` reports kappa by
    its median and equal-tailed interval, and its mean and SD only where they exist.

    :meth:`to_dict` is a JSON-ready summary of the fit, not of its draws (see there).
    :meth:`to_frame` and :meth:`to_xarray` hold one row of the fit's own fields:
    `sampler`, `prior`, `diagnostics` (as ``diagnostics.r_hat``, ...), `flagged`,
    `flag_reasons` and `tail` (as ``tail.kappa.mean_finite``, ...); the posterior and
    the per-person data are left out.
    """

    _exclude: ClassVar[tuple[str, ...]] = ("posterior", "successes", "trials")

    posterior: xr.DataTree
    sampler: str
    prior: str
    successes: NDArray[np.int64]
    trials: NDArray[np.int64]
    diagnostics: dict[str, float]
    flagged: bool
    flag_reasons: tuple[str, ...] = field(default=())
    tail: dict[str, dict[str, Any]] = field(default_factory=dict)
    confidence_level: float = 0.95

    def draws(self, estimand: str) -> NDArray[np.float64]:
        """Posterior draws of an estimand, chains pooled (persons first for ``person``)."""
        estimand = check_estimand("estimand", estimand)
        name = "p" if estimand == "person" else estimand
        values = self.posterior["posterior"][name].to_numpy()
        if estimand == "person":
            return values.reshape(-1, values.shape[-1]).T
        return values.reshape(-1)

    @hide_level
    def interval(
        self,
        estimand: str = "population",
        kind: str = "eti",
        confidence_level: float = DEFAULT_LEVEL,
        *,
        level: Any = UNSET,
    ) -> CredibleInterval:
        """Credible interval of an estimand.

        Parameters
        ----------
        estimand : {"population", "mu", "sampled_persons", "person"}, default "population"
            What the interval is about (see :mod:`perfci.bayes`): ``"population"`` is the
            one to set beside a frequentist interval.
        kind : {"eti", "hdi"}, default "eti"
            Equal-tailed or highest-density interval.
        confidence_level : float, default 0.95
            Credible level, always explicit (``level``, its former name, is deprecated).

        Returns
        -------
        CredibleInterval
            With the posterior median as `estimate`. For the grid sampler, ``mu``
            intervals come from the exact gridded marginal, not from draws; both are what
            :func:`perfci.bayes.grid_intervals` returns for the same data.
        """
        confidence_level = _asked_level(self.confidence_level, confidence_level, level)
        estimand = check_estimand("estimand", estimand)
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
        if self.sampler == "grid" and estimand == "mu":
            grid = self.posterior["grid"]
            edges = grid["mu_edge"].to_numpy()
            mass = grid["mu_mass"].to_numpy()
            low, mid, high = grid_interval(edges[None, :], mass[None, :], kind, lvl)
            return CredibleInterval("mu", kind, lvl, float(mid[0]), float(low[0]), float(high[0]))
        return interval_of_draws(estimand, self.draws(estimand), kind, lvl)

    @hide_level
    def to_dict(
        self, *, confidence_level: float = DEFAULT_LEVEL, level: Any = UNSET
    ) -> dict[str, Any]:
        """Return a JSON-ready summary of the fit (NaN as None); the posterior is left out.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Credible level of the intervals in the summary (``level``, its former name,
            is deprecated).

        Returns
        -------
        dict
            ``sampler``, ``prior``, ``persons`` (how many were fitted), ``diagnostics``
            (``r_hat`` is None for the grid sampler), ``flagged``, ``flag_reasons``, and
            ``population``, ``mu`` and ``sampled_persons``: the equal-tailed credible
            intervals at `confidence_level`, as :meth:`CredibleInterval.to_dict` gives
            them. The draws stay in
            :attr:`posterior`; ``interval("person").to_dict()`` gives the person rates.

        Examples
        --------
        >>> import json
        >>> import perfci as pc
        >>> result = pc.bayes.fit_proportion_counts(
        ...     [28, 25, 30, 22], [30, 30, 30, 26], sampler="grid", rng=1
        ... )
        >>> summary = result.to_dict(confidence_level=0.9)
        >>> summary["persons"], summary["diagnostics"]["r_hat"], summary["flagged"]
        (4, None, False)
        >>> summary["mu"]["confidence_level"], summary["mu"]["kind"]
        (0.9, 'eti')
        >>> json.loads(json.dumps(summary, allow_nan=False)) == summary
        True
        """
        confidence_level = _asked_level(self.confidence_level, confidence_level, level)
        out = {
            "sampler": self.sampler,
            "prior": self.prior,
            "persons": int(self.trials.size),
            "diagnostics": self.diagnostics,
            "flagged": self.flagged,
            "flag_reasons": self.flag_reasons,
            "tail": self.tail,
            **{e: self.interval(e, "eti", confidence_level) for e in ESTIMANDS if e != "person"},
        }
        return to_jsonable(out, "BayesFit")

    @hide_level
    def summary(
        self, confidence_level: float = DEFAULT_LEVEL, *, level: Any = UNSET
    ) -> pd.DataFrame:
        """Posterior summary of mu, s, kappa and the population and sampled persons' rates.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the equal-tailed intervals (``level``, its former name, is
            deprecated).

        Returns
        -------
        pandas.DataFrame
            Index ``mu``, ``s``, ``kappa``, ``population``, ``sampled_persons``; columns
            ``mean``, ``sd``, ``median``, ``low``, ``high`` (the equal-tailed interval at
            `confidence_level`) and ``note``. For the grid sampler, mu, s and kappa come from the
            exact gridded marginals (as ``interval("mu")`` does) and the two rates from
            the draws; for MCMC, every row from the draws.

        Warns
        -----
        BayesianDiagnosticsWarning
            When kappa's mean is NaN: infinite under the prior (see :attr:`tail`), or, for
            MCMC draws, not estimable from them (a moment of order r when r times the
            draws' Pareto k-hat is at least 1). A NaN SD alone (always, under both
            priors) is said in the ``note`` without a warning.

        Notes
        -----
        Under ``"pareto"`` kappa's mean is finite and its variance infinite, under
        ``"bda3"`` both are infinite, for every data set (:mod:`perfci._core.tails`): the
        ``sd`` of kappa is always NaN, and its ``median``, ``low`` and ``high`` are the
        summary to report. Every other entry exists.

        Examples
        --------
        >>> import perfci as pc
        >>> y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
        >>> result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1)
        >>> table = result.summary(confidence_level=0.9)
        >>> print(table[["mean", "sd", "median", "low", "high"]].round(3))  # doctest: +ELLIPSIS
                          mean     sd  median    low    high
        mu               0.811  0.091   0.828  0.635   0.927
        s                0.597  0.228   0.600  0.225   0.953
        kappa            6.566    NaN   2.781  1.100  19.797
        population       ...
        sampled_persons  ...
        >>> table.loc["kappa", "note"]
        "sd infinite (under prior 'pareto' the moments of kappa exist only below order 1.5)"
        """
        import pandas as pd

        from .tails import moment_notes

        confidence_level = _asked_level(self.confidence_level, confidence_level, level)
        lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
        exact = self.sampler == "grid" and "s_mass" in self.posterior["grid"]
        rows = {}
        for name in ("mu", "s", "kappa", "population", "sampled_persons"):
            if exact and name in ("mu", "s", "kappa"):
                rows[name] = self._grid_row(name, lvl)
                continue
            values = self.posterior["posterior"][name].to_numpy().reshape(-1)
            low, mid, high = interval_from_draws(values[None, :], "eti", lvl)
            rows[name] = {
                "mean": float(values.mean()),
                "sd": float(values.std(ddof=1)),
                "median": float(mid[0]),
                "low": float(low[0]),
                "high": float(high[0]),
                "note": "",
            }
        k_hat = float(self.tail.get("kappa", {}).get("pareto_k_hat", np.nan))
        mean_ok, sd_ok, note = moment_notes(self.prior, np.nan if exact else k_hat)
        kappa = rows["kappa"]
        kappa["mean"] = kappa["mean"] if mean_ok else np.nan
        kappa["sd"] = kappa["sd"] if sd_ok else np.nan
        kappa["note"] = note
        # kappa's SD is infinite under every prior offered: said in the note, not warned
        # on every call; a mean that is NaN is warned about
        if not mean_ok:
            warnings.warn(
                f"kappa: {note}; summarize it by its median and interval.",
                BayesianDiagnosticsWarning,
                stacklevel=2,
            )
        return pd.DataFrame.from_dict(rows, orient="index")

    def _grid_row(self, name: str, level: float) -> dict[str, Any]:
        """Summary row of mu, s or kappa from the grid sampler's exact marginals."""
        from .._core.grid import s_prior
        from .._core.tails import grid_kappa_moments, grid_power_mean

        var = "mu" if name == "mu" else "s"
        grid = self.posterior["grid"]
        edges = grid[f"{var}_edge"].to_numpy()[None, :]
        mass = grid[f"{var}_mass"].to_numpy()[None, :]
        low, mid, high = (float(v[0]) for v in grid_interval(edges, mass, "eti", level))
        if name == "kappa":  # kappa = s^-2 is decreasing in s: its quantiles swap ends
            mean, sd = (float(v[0]) for v in grid_kappa_moments(edges, mass, self.prior))
            low, mid, high = high**-2.0, mid**-2.0, low**-2.0
        else:
            shape = 1.0 if var == "mu" else s_prior(self.prior)[0]
            mean = float(grid_power_mean(edges, mass, 1.0, shape)[0])
            second = float(grid_power_mean(edges, mass, 2.0, shape)[0])
            sd = float(np.sqrt(max(second - mean**2, 0.0)))
        return {"mean": mean, "sd": sd, "median": mid, "low": low, "high": high, "note": ""}

    @hide_level
    def prior_sensitivity(
        self,
        estimand: str = "population",
        confidence_level: float = DEFAULT_LEVEL,
        *,
        kind: Literal["eti", "hdi"] = "eti",
        alternative: str | None = None,
        tolerance: float = 0.1,
        population_sizes: ArrayLike | None = None,
        population_persons: Any = None,
        rng: Any = None,
        level: Any = UNSET,
    ) -> PriorSensitivity:
        """Return the credible interval under this fit's prior and under the alternative one.

        :func:`perfci.bayes.prior_sensitivity` on the fit's counts with ``prior=`` the
        fit's prior: both intervals on the exact grid, whatever sampler made the fit.
        The fit keeps no population sizes: for ``"population"`` and
        ``"sampled_persons"`` pass the `population_sizes` (one per fitted person, as in
        :attr:`trials`) and `population_persons` the fit was given, if any.

        Examples
        --------
        >>> import perfci as pc
        >>> y, n = [28, 25, 30, 22, 27], [30, 30, 30, 26, 30]
        >>> result = pc.bayes.fit_proportion_counts(y, n, sampler="grid", rng=1)
        >>> check = result.prior_sensitivity("mu", confidence_level=0.95)
        >>> check.alternative_prior, bool(check.differs)
        ('bda3', True)
        """
        confidence_level = _asked_level(self.confidence_level, confidence_level, level)
        return prior_sensitivity(
            self.successes,
            self.trials,
            estimand=estimand,
            confidence_level=confidence_level,
            kind=kind,
            prior=self.prior,
            alternative=alternative,
            tolerance=tolerance,
            population_sizes=population_sizes,
            population_persons=population_persons,
            rng=rng,
        )

    def __repr__(self) -> str:
        ci = self.interval("population", "eti", 0.95)
        flag = ", FLAGGED: " + "; ".join(self.flag_reasons) if self.flagged else ""
        return (
            f"BayesFit(sampler={self.sampler!r}, prior={self.prior!r}, persons="
            f"{self.trials.size}, population median {ci.estimate:.4g}, 95% ETI [{ci.low:.4g}, "
            f"{ci.high:.4g}]{flag})"
        )


@dataclass(frozen=True, repr=False)
class ConfusionFit(ResultMixin):
    """A fitted hierarchical Dirichlet-multinomial confusion model.

    Attributes
    ----------
    posterior : xarray.DataTree
        MCMC samplers: group ``posterior`` with ``pi`` (dim ``cell``), ``kappa``, and
        the population metrics ``recall``, ``precision``, ``f1``; group
        ``sample_stats``. Grid sampler (the hierarchical margins model): group
        ``posterior`` with every binary metric of the fit's estimand, and each margin's
        ``mu`` and ``kappa`` (dim ``margin``); attribute ``estimand``.
    diagnostics : dict
        As for :class:`BayesFit`, over ``kappa`` and the metrics.
    flagged : bool
        True if the fit failed a diagnostic (grid: a margin fell back to a pooled rate).
    flag_reasons : tuple of str
        Which diagnostics failed.
    confidence_level : float
        The level of the fit's intervals when a method is not given one.

    Notes
    -----
    :meth:`to_dict` is a JSON-ready summary of the fit, not of its draws (see there).
    :meth:`to_frame` and :meth:`to_xarray` hold one row of `diagnostics` (as
    ``diagnostics.r_hat``, ...), `flagged` and `flag_reasons`; the posterior is left out.
    """

    _exclude: ClassVar[tuple[str, ...]] = ("posterior",)

    posterior: xr.DataTree
    diagnostics: dict[str, float]
    flagged: bool
    flag_reasons: tuple[str, ...] = field(default=())
    confidence_level: float = 0.95

    @hide_level
    def interval(
        self,
        metric: str = "f1",
        kind: str = "eti",
        confidence_level: float = DEFAULT_LEVEL,
        *,
        level: Any = UNSET,
    ) -> CredibleInterval:
        """Credible interval of a population metric held in the posterior.

        Parameters
        ----------
        metric : str, default "f1"
            ``recall``, ``precision`` or ``f1`` for the MCMC samplers; every binary
            metric for the grid sampler (see :func:`perfci.bayes.fit_confusion_counts`).
        kind : {"eti", "hdi"}, default "eti"
            Equal-tailed or highest-density interval.
        confidence_level : float, default 0.95
            Credible level (``level``, its former name, is deprecated).

        Returns
        -------
        CredibleInterval
            From the posterior draws of the metric (all chains).

        Examples
        --------
        >>> import perfci as pc
        >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
        >>> fit = pc.bayes.fit_confusion_counts(per_person, sampler="grid", rng=1)
        >>> ci = fit.interval("recall", confidence_level=0.9)
        >>> bool(0 < ci.low < ci.estimate < ci.high < 1), ci.confidence_level
        (True, 0.9)
        """
        confidence_level = _asked_level(self.confidence_level, confidence_level, level)
        held = [m for m in BINARY_METRICS if m in self.posterior["posterior"].data_vars]
        check_choice("metric", metric, held)
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(confidence_level, "confidence_level", scalar=True))
        draws = self.posterior["posterior"][metric].to_numpy().reshape(-1)
        return interval_of_draws(metric, draws, kind, lvl)

    @hide_level
    def to_dict(
        self, *, confidence_level: float = DEFAULT_LEVEL, level: Any = UNSET
    ) -> dict[str, Any]:
        """Return a JSON-ready summary of the fit (NaN as None); the posterior is left out.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Credible level of the intervals in the summary (``level``, its former name,
            is deprecated).

        Returns
        -------
        dict
            ``diagnostics``, ``flagged``, ``flag_reasons``, and ``recall``,
            ``precision`` and ``f1``: the equal-tailed credible intervals of the
            population metrics at `confidence_level`, as :meth:`CredibleInterval.to_dict` gives
            them. The draws stay in :attr:`posterior`.
        """
        confidence_level = _asked_level(self.confidence_level, confidence_level, level)
        out = {
            "diagnostics": self.diagnostics,
            "flagged": self.flagged,
            "flag_reasons": self.flag_reasons,
            **{m: self.interval(m, "eti", confidence_level) for m in CONFUSION_METRICS},
        }
        return to_jsonable(out, "ConfusionFit")

    def __repr__(self) -> str:
        ci = self.interval("f1")
        flag = ", FLAGGED: " + "; ".join(self.flag_reasons) if self.flagged else ""
        return (
            f"ConfusionFit(f1 median {ci.estimate:.4g}, {100 * self.confidence_level:g}% ETI "
            f"[{ci.low:.4g}, "
            f"{ci.high:.4g}]{flag})"
        )
