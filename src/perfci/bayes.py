r"""Bayesian hierarchical models: posteriors and credible intervals for person-level rates.

A proportion metric on texts nested in persons (recall on each person's reference
positives, say) is modelled with the hierarchical beta-binomial of
:mod:`perfci.models.beta_binomial`. Three estimands have credible intervals:

``mu``
    the mean person-level rate of the superpopulation of persons;
``text_weighted``
    the finite-sample text-weighted rate :math:`\sum_i n_i p_i / \sum_i n_i` of the
    sampled persons (their rate on unlimited texts, weighted as in the sample). It is
    about *these* persons only: it leaves out the uncertainty of which persons were
    sampled, so it is narrower than the frequentist nested intervals, which are about the
    population of persons, and under-covers the population rate (see the harness's
    paper-nested suite). For the population, ``mu`` is the estimand (equal to the
    text-weighted population rate when a person's number of texts is unrelated to their
    rate);
``person``
    each person's rate :math:`p_i` (partial pooling).

Samplers: ``"nutpie"`` (default; the marginalized model is compiled once per prior and
refit to new data), ``"pymc"`` (PyMC's own NUTS), and ``"grid"``: the exact posterior of
(mu, s) by two-dimensional quadrature of the stable marginal likelihood, batched over data
sets (:func:`grid_intervals`), with person rates drawn from their exact conditionals.

Every result carries diagnostics (R-hat, bulk and tail ESS, divergences); a fit that
fails them is flagged, and a :class:`BayesianDiagnosticsWarning` says so.

Importing this module does not import PyMC; fitting does.
"""

from __future__ import annotations

import logging
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import xarray as xr
from scipy import stats

from ._core.validation import check_choice, check_confidence_level, check_real_array
from .counting import confusion
from .metrics import PROPORTION_METRICS, proportion_counts

__all__ = [
    "ESTIMANDS",
    "SAMPLERS",
    "BayesFit",
    "BayesianDiagnosticsWarning",
    "ConfusionFit",
    "ConfusionPosterior",
    "CredibleInterval",
    "confusion_posterior",
    "fit",
    "fit_confusion",
    "fit_labels",
    "grid_intervals",
    "plot_forest",
    "plot_posterior",
]

SAMPLERS = ("nutpie", "pymc", "grid")
ESTIMANDS = ("mu", "text_weighted", "person")
INTERVAL_KINDS = ("eti", "hdi")

#: Diagnostic thresholds: a fit is flagged beyond them (Vehtari et al., 2021).
MAX_RHAT = 1.01
MIN_ESS = 400


class BayesianDiagnosticsWarning(RuntimeWarning):
    """A posterior failed its diagnostics (R-hat, ESS or divergences) and is flagged."""


@dataclass(frozen=True)
class CredibleInterval:
    """A credible interval.

    Attributes
    ----------
    estimand : str
        ``"mu"``, ``"text_weighted"``, ``"person"`` or a metric name.
    kind : str
        ``"eti"`` (equal-tailed) or ``"hdi"`` (highest density).
    level : float
        The credible level.
    estimate : float or numpy.ndarray
        The posterior median.
    low, high : float or numpy.ndarray
        The interval ends (one per person for ``"person"``).
    """

    estimand: str
    kind: str
    level: float
    estimate: Any
    low: Any
    high: Any


def _hdi_from_draws(draws: np.ndarray, level: float) -> tuple[float, float]:
    """Narrowest interval holding `level` of the draws (last axis)."""
    x = np.sort(draws, axis=-1)
    n = x.shape[-1]
    k = int(np.ceil(level * n))
    widths = x[..., k - 1 :] - x[..., : n - k + 1]
    i = np.argmin(widths, axis=-1)
    low = np.take_along_axis(x, i[..., None], -1)[..., 0]
    high = np.take_along_axis(x, (i + k - 1)[..., None], -1)[..., 0]
    return low, high


def _interval_from_draws(estimand, draws, kind, level):
    if kind == "eti":
        low, mid, high = np.quantile(draws, [(1 - level) / 2, 0.5, (1 + level) / 2], axis=-1)
    else:
        low, high = _hdi_from_draws(draws, level)
        mid = np.median(draws, axis=-1)

    def plain(a):
        a = np.asarray(a)
        return float(a) if a.ndim == 0 else a

    return CredibleInterval(estimand, kind, level, plain(mid), plain(low), plain(high))


@dataclass(frozen=True, repr=False)
class BayesFit:
    """A fitted hierarchical beta-binomial model.

    Attributes
    ----------
    posterior : xarray.DataTree
        Group ``posterior`` with ``mu``, ``s``, ``kappa``, ``text_weighted`` and ``p``
        (dim ``person``), dims ``(chain, draw)``; ``sample_stats`` for MCMC samplers;
        ``grid`` (the exact marginal posterior of mu) for the grid sampler.
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
        Which diagnostics failed.
    """

    posterior: xr.DataTree
    sampler: str
    prior: str
    successes: np.ndarray
    trials: np.ndarray
    diagnostics: dict
    flagged: bool
    flag_reasons: tuple[str, ...] = field(default=())

    def draws(self, estimand: str) -> np.ndarray:
        """Posterior draws of an estimand, chains pooled (persons first for ``person``)."""
        check_choice("estimand", estimand, ESTIMANDS)
        name = "p" if estimand == "person" else estimand
        values = self.posterior["posterior"][name].to_numpy()
        if estimand == "person":
            return values.reshape(-1, values.shape[-1]).T
        return values.reshape(-1)

    def interval(self, estimand: str = "mu", kind: str = "eti", level: float = 0.95):
        """Credible interval of an estimand.

        Parameters
        ----------
        estimand : {"mu", "text_weighted", "person"}, default "mu"
            What the interval is about (see the module notes).
        kind : {"eti", "hdi"}, default "eti"
            Equal-tailed or highest-density interval.
        level : float, default 0.95
            Credible level, always explicit.

        Returns
        -------
        CredibleInterval
            With the posterior median as `estimate`. For the grid sampler, ``mu``
            intervals come from the exact gridded marginal, not from draws.
        """
        check_choice("estimand", estimand, ESTIMANDS)
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(level, "level"))
        if self.sampler == "grid" and estimand == "mu":
            grid = self.posterior["grid"]
            edges = grid["mu_edge"].to_numpy()
            mass = grid["mu_mass"].to_numpy()
            low, mid, high = _grid_interval(edges, mass[None, :], kind, lvl)
            return CredibleInterval("mu", kind, lvl, float(mid[0]), float(low[0]), float(high[0]))
        return _interval_from_draws(estimand, self.draws(estimand), kind, lvl)

    def __repr__(self) -> str:
        ci = self.interval("mu", "eti", 0.95)
        flag = ", FLAGGED: " + "; ".join(self.flag_reasons) if self.flagged else ""
        return (
            f"BayesFit(sampler={self.sampler!r}, prior={self.prior!r}, persons="
            f"{self.trials.size}, mu median {ci.estimate:.4g}, 95% ETI [{ci.low:.4g}, "
            f"{ci.high:.4g}]{flag})"
        )


# ----------------------------------------------------------------------------- grid


def _grid_axes(n_mu: int, n_s: int, mu_range, s_range):
    mu_edge = np.linspace(*mu_range, n_mu + 1)
    s_edge = np.linspace(*s_range, n_s + 1)
    return mu_edge, s_edge, (mu_edge[:-1] + mu_edge[1:]) / 2, (s_edge[:-1] + s_edge[1:]) / 2


def _grid_log_posterior(a_counts, b_counts, c_counts, mu, s, prior):
    """Log posterior on the (mu, s) grid for each data set: shape (D, n_mu, n_s)."""
    from .models.beta_binomial import s_prior

    j = np.arange(a_counts.shape[-1])[:, None, None]
    s2 = (s * s)[None, None, :]
    log_a = np.log(mu[None, :, None] + j * s2)  # (J, n_mu, n_s)
    log_b = np.log(1 - mu[None, :, None] + j * s2)
    log_c = np.log(1 + j[:, :, 0] * s2[0])  # (J, n_s)
    g = mu.size * s.size
    pa, pb = s_prior(prior)
    log_prior = (pa - 1) * np.log(s) + (pb - 1) * np.log1p(-s)
    # the prior and the C term depend on s only: one (D, n_s) array added once
    per_s = log_prior[None, :] - c_counts @ log_c
    loglik = a_counts @ log_a.reshape(-1, g)
    loglik += b_counts @ log_b.reshape(-1, g)
    loglik = loglik.reshape(-1, mu.size, s.size)
    loglik += per_s[:, None, :]
    return loglik


def _grid_masses(successes, trials, prior, shape, mu_range=None, s_range=None):
    """Posterior cell masses on a (mu, s) grid for a batch of data sets (persons last)."""
    from .models.beta_binomial import marginal_counts

    a_counts, b_counts, c_counts = (c.astype(float) for c in marginal_counts(successes, trials))
    eps = 1e-9
    mu_range = (eps, 1 - eps) if mu_range is None else mu_range
    s_range = (eps, 1 - eps) if s_range is None else s_range
    mu_edge, s_edge, mu, s = _grid_axes(*shape, mu_range, s_range)
    mass = _grid_log_posterior(a_counts, b_counts, c_counts, mu, s, prior)
    # In place: these arrays hold (data sets x grid) numbers. The cells are equal, so
    # their area is a constant that normalizing removes.
    mass -= mass.max(axis=(1, 2), keepdims=True)
    np.exp(mass, out=mass)
    mass /= mass.sum(axis=(1, 2), keepdims=True)
    return mass, mu_edge, s_edge


def _range_of(mass_1d: np.ndarray, edges: np.ndarray, tail: float = 1e-7):
    """Smallest range of grid edges holding all but `tail` of the mass (any data set)."""
    cdf = np.cumsum(mass_1d, axis=-1)
    lo = np.searchsorted(cdf.max(0), tail, side="left")
    hi = np.searchsorted(cdf.min(0), 1 - tail, side="left") + 1
    return edges[max(0, lo)], edges[min(edges.size - 1, hi)]


def _adaptive_grid(successes, trials, prior, shape):
    """Two passes: a coarse grid over (0, 1)^2 locates the mass, a fine grid covers it."""
    coarse, mu_edge, s_edge = _grid_masses(successes, trials, prior, (160, 60))
    mu_range = _range_of(coarse.sum(2), mu_edge)
    s_range = _range_of(coarse.sum(1), s_edge)
    # pad by one coarse cell on each side, inside (0, 1)
    mu_pad, s_pad = mu_edge[1] - mu_edge[0], s_edge[1] - s_edge[0]
    mu_range = (max(1e-9, mu_range[0] - mu_pad), min(1 - 1e-9, mu_range[1] + mu_pad))
    s_range = (max(1e-9, s_range[0] - s_pad), min(1 - 1e-9, s_range[1] + s_pad))
    return _grid_masses(successes, trials, prior, shape, mu_range, s_range)


def _grid_interval(edges, mass, kind, level):
    """ETI or HDI and median of gridded marginals (mass uniform within each cell).

    All data sets (rows) at once: quantiles by one searchsorted over the rows' CDFs laid
    end to end (row d shifted by d), then linear interpolation within the cell.
    """
    rows, cells = mass.shape
    cdf = np.concatenate([np.zeros((rows, 1)), np.cumsum(mass, axis=1)], axis=1)
    cdf /= cdf[:, -1:]
    shift = np.arange(rows)[:, None]
    flat = (cdf + shift).ravel()

    def quantile(q):
        pos = np.searchsorted(flat, q + shift[:, 0], side="left") - shift[:, 0] * (cells + 1)
        j = np.clip(pos, 1, cells)
        below = cdf[np.arange(rows), j - 1]
        above = cdf[np.arange(rows), j]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(above > below, (q - below) / (above - below), 0.0)
        return edges[j - 1] + np.clip(frac, 0, 1) * (edges[j] - edges[j - 1])

    mid = quantile(0.5)
    if kind == "eti":
        return quantile((1 - level) / 2), mid, quantile((1 + level) / 2)
    # HDI: the densest cells holding `level` of the mass (unimodal marginals)
    density = mass / np.diff(edges)[None, :]
    order = np.argsort(-density, axis=1)
    held = np.cumsum(np.take_along_axis(mass, order, 1), axis=1)
    chosen = np.arange(cells)[None, :] < ((held < level).sum(1) + 1)[:, None]
    low = edges[np.where(chosen, order, cells).min(1)]
    high = edges[np.where(chosen, order, -1).max(1) + 1]
    return low, mid, high


def grid_intervals(
    successes: Any,
    trials: Any,
    *,
    level: float = 0.95,
    kind: str = "eti",
    prior: str = "pareto",
    shape: tuple[int, int] = (400, 100),
) -> CredibleInterval:
    """Exact credible intervals of mu for many data sets at once (grid quadrature).

    Parameters
    ----------
    successes, trials : array_like of int
        Per-person counts, persons on the last axis, one row per data set (pad with
        ``trials = 0``).
    level : float, default 0.95
        Credible level.
    kind : {"eti", "hdi"}, default "eti"
        Interval kind.
    prior : {"pareto", "bda3"}, default "pareto"
        Concentration prior (see :mod:`perfci.models.beta_binomial`).
    shape : tuple of int, default (400, 100)
        Grid points in mu and in s = kappa^(-1/2) of the fine pass.

    Returns
    -------
    CredibleInterval
        With arrays, one value per data set (floats for a single, 1-D data set).

    Notes
    -----
    The stable marginal log-likelihood (see
    :func:`perfci.models.beta_binomial_marginal`) is evaluated on a (mu, s) grid for all
    data sets with two matrix products; a coarse pass over (0, 1)^2 finds where the
    posterior mass lies and a fine pass covers it. Cells carry their prior density and
    area (midpoint rule); quantiles interpolate the marginal CDF of mu linearly within
    cells.

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> rng = np.random.default_rng(1)
    >>> trials = rng.integers(2, 5, size=(3, 20))
    >>> successes = rng.binomial(trials, 0.9)
    >>> ci = pc.bayes.grid_intervals(successes, trials)
    >>> ci.low.shape
    (3,)
    """
    check_choice("kind", kind, INTERVAL_KINDS)
    lvl = float(check_confidence_level(level, "level"))
    y, n = _check_counts(successes, trials, batch=True)
    single = y.ndim == 1
    mass, mu_edge, _ = _adaptive_grid(np.atleast_2d(y), np.atleast_2d(n), prior, shape)
    low, mid, high = _grid_interval(mu_edge, mass.sum(2), kind, lvl)
    if single:
        return CredibleInterval("mu", kind, lvl, float(mid[0]), float(low[0]), float(high[0]))
    return CredibleInterval("mu", kind, lvl, mid, low, high)


# ----------------------------------------------------------------------- validation


def _check_counts(successes, trials, batch=False):
    y = check_real_array("successes", successes)
    n = check_real_array("trials", trials)
    if y.shape != n.shape or y.ndim == 0:
        raise ValueError(
            f"`successes` and `trials` must be per-person arrays of the same shape; got "
            f"{y.shape} and {n.shape}."
        )
    if np.any(y < 0) or np.any(n < 0) or np.any(y != np.round(y)) or np.any(n != np.round(n)):
        raise ValueError("`successes` and `trials` must be non-negative whole numbers.")
    if np.any(y > n):
        raise ValueError("`successes` must not exceed `trials` for any person.")
    if not batch and y.ndim != 1:
        raise ValueError("`successes` and `trials` must be one-dimensional (one per person).")
    persons = (n > 0).sum(-1)
    if np.any(persons < 2):
        raise ValueError(
            "`trials` must give at least 2 persons with a relevant text; a hierarchical "
            f"model of persons needs more than one; got {int(np.min(persons))}."
        )
    return y.astype(np.int64), n.astype(np.int64)


# --------------------------------------------------------------------------- fitting


@cache
def _compiled_marginal(prior: str):
    """Compile the marginalized model with nutpie, once per prior (refit with new data)."""
    import nutpie

    from .models.beta_binomial import beta_binomial_marginal

    return nutpie.compile_pymc_model(beta_binomial_marginal([1, 1], [2, 2], prior=prior))


def _data_for(successes, trials):
    from .models.beta_binomial import marginal_counts

    a, b, c = (x.astype(float) for x in marginal_counts(successes, trials))
    return {"A": a, "B": b, "C": c, "j": np.arange(a.size, dtype=float)}


def _person_draws(mu, s, y, n, rng):
    """Draw person rates and the text-weighted rate for draws of (mu, s) of any shape.

    p_i ~ Beta(mu kappa + y_i, (1 - mu) kappa + n_i - y_i), the exact conditional.
    """
    kappa = s**-2.0
    p = rng.beta((mu * kappa)[..., None] + y, ((1 - mu) * kappa)[..., None] + (n - y))
    return kappa, p, (p * n).sum(-1) / n.sum()


def _run_mcmc(sampler: str, model: Any, draws: int, tune: int, chains: int, seed: int):
    """Sample a PyMC model (or a compiled nutpie model) quietly; return its DataTree."""
    with warnings.catch_warnings(), _quiet_pymc():
        # PyMC and nutpie report progress and tuning notes as warnings and log lines;
        # the diagnostics are what decides whether the fit is usable.
        warnings.simplefilter("ignore")
        if sampler == "nutpie":
            import nutpie

            if hasattr(model, "free_RVs"):  # a PyMC model, not yet compiled
                model = nutpie.compile_pymc_model(model)
            # warm-up draws are never used: not converting them saves most of a refit
            return nutpie.sample(
                model,
                draws=draws,
                tune=tune,
                chains=chains,
                seed=seed,
                progress_bar=False,
                save_warmup=False,
            )
        import pymc as pm

        with model:
            return pm.sample(
                draws=draws,
                tune=tune,
                chains=chains,
                random_seed=seed,
                nuts_sampler="pymc",
                progressbar=False,
                cores=1,
                compute_convergence_checks=False,
            )


def _diagnostics(tree: xr.DataTree, var_names: list[str]) -> tuple[dict, tuple[str, ...]]:
    """R-hat, ESS and divergences of a fit, the failed ones in words, and a warning.

    Rank-normalized R-hat and bulk ESS, and tail ESS as the smaller ESS of the 5% and 95%
    quantile indicators (Vehtari et al., 2021), by ArviZ's array functions on each scalar
    variable's (chain, draw) draws: the same numbers as ``az.summary`` for R-hat and bulk
    ESS, at a fraction of its cost (it matters when fits are refit many times).
    """
    from arviz_stats.base import array_stats

    rhat, bulk, tail = [], [], []
    for name in var_names:
        draws = tree["posterior"][name].to_numpy()
        draws = draws.reshape(draws.shape[0], draws.shape[1], -1)
        for k in range(draws.shape[-1]):
            a = draws[..., k]
            rhat.append(array_stats.rhat(a, chain_axis=0, draw_axis=1))
            bulk.append(array_stats.ess(a, chain_axis=0, draw_axis=1, method="bulk"))
            tail.append(
                array_stats.ess(a, chain_axis=0, draw_axis=1, method="tail", prob=(0.05, 0.95))
            )
    diag = {
        "r_hat": float(np.max(rhat)),
        "ess_bulk": float(np.min(bulk)),
        "ess_tail": float(np.min(tail)),
        "divergences": int(tree["sample_stats"]["diverging"].sum()),
    }
    reasons = _failed(diag)
    if reasons:
        warnings.warn(
            "the posterior failed its diagnostics (" + "; ".join(reasons) + "); the fit is "
            "flagged: check it before use (more draws or tuning, or sampler='grid').",
            BayesianDiagnosticsWarning,
            stacklevel=3,
        )
    return diag, reasons


def _failed(diag: dict) -> tuple[str, ...]:
    """List the diagnostics a fit fails, in words."""
    divergences = diag["divergences"]
    reasons = []
    if not diag["r_hat"] <= MAX_RHAT:
        reasons.append(f"R-hat {diag['r_hat']:.3f} > {MAX_RHAT}")
    if not diag["ess_bulk"] >= MIN_ESS:
        reasons.append(f"bulk ESS {diag['ess_bulk']:.0f} < {MIN_ESS}")
    if not diag["ess_tail"] >= MIN_ESS:
        reasons.append(f"tail ESS {diag['ess_tail']:.0f} < {MIN_ESS}")
    if divergences:
        reasons.append(f"{divergences} divergent transitions")
    return tuple(reasons)


@contextmanager
def _quiet_pymc():
    """Silence PyMC's sampling log lines for the duration of a fit."""
    logger = logging.getLogger("pymc")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _posterior_tree(mu, s, y, n, rng, persons, extra=None) -> xr.DataTree:
    kappa, p, text_weighted = _person_draws(mu, s, y, n, rng)
    dims = ("chain", "draw")
    posterior = xr.Dataset(
        {
            "mu": (dims, mu),
            "s": (dims, s),
            "kappa": (dims, kappa),
            "text_weighted": (dims, text_weighted),
            "p": ((*dims, "person"), p),
        },
        coords={"chain": np.arange(mu.shape[0]), "draw": np.arange(mu.shape[1]), "person": persons},
    )
    groups = {"posterior": posterior, **(extra or {})}
    return xr.DataTree.from_dict(groups)


def fit(
    successes: Any,
    trials: Any,
    *,
    sampler: str = "nutpie",
    prior: str = "pareto",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    rng: Any = None,
    persons: Any = None,
    grid_shape: tuple[int, int] = (400, 200),
) -> BayesFit:
    """Fit the hierarchical beta-binomial model to per-person counts.

    Parameters
    ----------
    successes, trials : array_like of int
        Per-person successes y_i and relevant texts n_i (for recall: each person's true
        positives and reference positives). Persons without a relevant text are dropped;
        at least two must remain.
    sampler : {"nutpie", "pymc", "grid"}, default "nutpie"
        MCMC with nutpie (compiled once per prior, refit to new data), with PyMC's NUTS,
        or the exact grid posterior.
    prior : {"pareto", "bda3"}, default "pareto"
        Concentration prior (see :mod:`perfci.models.beta_binomial`).
    draws, tune, chains : int
        MCMC draws and tuning steps per chain, and chains. For the grid sampler,
        ``draws * chains`` independent draws are taken from the exact posterior.
    rng : numpy.random.Generator, int or None
        Seed for the sampler and the person-rate draws; the same seed gives the same
        posterior.
    persons : array_like, optional
        Person ids for the ``person`` coordinate.
    grid_shape : tuple of int, default (400, 200)
        Grid points in mu and s for the grid sampler.

    Returns
    -------
    BayesFit
        The posterior (an :class:`xarray.DataTree`), diagnostics and flags; use
        :meth:`BayesFit.interval` for credible intervals.

    Warns
    -----
    BayesianDiagnosticsWarning
        If the fit fails R-hat <= 1.01, bulk and tail ESS >= 400, or has divergences.

    Examples
    --------
    >>> import perfci as pc
    >>> y, n = [28, 25, 30, 22, 27, 29], [30, 30, 30, 26, 30, 30]
    >>> result = pc.bayes.fit(y, n, sampler="grid", rng=1)
    >>> ci = result.interval("mu", kind="eti", level=0.95)
    >>> print(f"mu {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    mu 0.850 [0.635, 0.943]
    """
    check_choice("sampler", sampler, SAMPLERS)
    from .models.beta_binomial import s_prior

    s_prior(prior)
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {value!r}.")
    y, n = _check_counts(successes, trials)
    keep = n > 0
    ids = np.arange(y.size) if persons is None else np.asarray(persons)
    if ids.shape != y.shape:
        raise ValueError(f"`persons` must have one id per person ({y.size}); got {ids.size}.")
    y, n, ids = y[keep], n[keep], ids[keep]
    generator = np.random.default_rng(rng)
    seed = int(generator.integers(2**31 - 1))

    if sampler == "grid":
        mass, mu_edge, s_edge = _adaptive_grid(y[None, :], n[None, :], prior, grid_shape)
        mass = mass[0]
        k = draws * chains
        cell = generator.choice(mass.size, size=k, p=mass.ravel())
        i, jj = np.divmod(cell, mass.shape[1])
        # uniform within the cell, as the quadrature assumes
        mu = mu_edge[i] + generator.random(k) * np.diff(mu_edge)[i]
        s = s_edge[jj] + generator.random(k) * np.diff(s_edge)[jj]
        grid = xr.Dataset(
            {"mu_mass": ("mu_cell", mass.sum(1)), "mu_edge": ("mu_edge_index", mu_edge)}
        )
        tree = _posterior_tree(
            mu.reshape(chains, draws),
            s.reshape(chains, draws),
            y,
            n,
            generator,
            ids,
            {"grid": grid},
        )
        diag = {"r_hat": np.nan, "ess_bulk": float(k), "ess_tail": float(k), "divergences": 0}
        return BayesFit(tree, sampler, prior, y, n, diag, False, ())

    if sampler == "nutpie":
        trace = _run_mcmc(
            sampler,
            _compiled_marginal(prior).with_data(**_data_for(y, n)),
            draws,
            tune,
            chains,
            seed,
        )
    else:
        from .models.beta_binomial import beta_binomial_marginal

        trace = _run_mcmc(
            sampler, beta_binomial_marginal(y, n, prior=prior), draws, tune, chains, seed
        )
    mu = trace["posterior"]["mu"].to_numpy()
    s = trace["posterior"]["s"].to_numpy()
    stats_ds = trace["sample_stats"].to_dataset()
    tree = _posterior_tree(mu, s, y, n, generator, ids, {"sample_stats": stats_ds[["diverging"]]})
    diag, reasons = _diagnostics(tree, ["mu", "s"])
    return BayesFit(tree, sampler, prior, y, n, diag, bool(reasons), reasons)


def fit_labels(
    y_true: Any,
    y_pred: Any,
    groups: Any,
    metric: str,
    *,
    positive: Any = None,
    **options: Any,
) -> BayesFit:
    """Fit the hierarchical beta-binomial model to a proportion metric from labels.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference and classifier labels, one per text.
    groups : array_like
        Person ids, one per text.
    metric : str
        A proportion metric: accuracy, recall, precision, specificity or npv; the model
        is fitted to each person's relevant texts for it.
    positive : object, optional
        The positive label (as in :func:`perfci.confusion`).
    **options
        Passed to :func:`fit` (sampler, prior, draws, tune, chains, rng).

    Returns
    -------
    BayesFit
        The fit, with person ids as the ``person`` coordinate.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> result = pc.bayes.fit_labels(texts["human"], texts["model"], texts["person"],
    ...                              "recall", sampler="grid", rng=1)
    >>> ci = result.interval("text_weighted", level=0.95)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    0.876 [0.835, 0.910]
    """
    check_choice("metric", metric, PROPORTION_METRICS)
    per_person = confusion(y_true, y_pred, positive=positive, groups=groups)
    if per_person.counts.ndim != 2:
        raise ValueError("`positive` must name the class for multi-class labels.")
    y, n = proportion_counts(per_person.counts, metric)
    return fit(y, n, persons=per_person.groups, **options)


# ---------------------------------------------------------------- confusion matrices


@dataclass(frozen=True)
class ConfusionPosterior:
    """Posterior of recall, precision and F1 under the Dirichlet-multinomial model.

    Attributes
    ----------
    alpha : numpy.ndarray
        Posterior Dirichlet parameters of ``[tp, fp, fn, tn]``: counts plus the prior.
    """

    alpha: np.ndarray

    def interval(self, metric: str = "f1", kind: str = "eti", level: float = 0.95):
        """Closed-form credible interval of ``recall``, ``precision`` or ``f1``.

        Recall is Beta(tp, fn), precision Beta(tp, fp) and F1 = 2W/(1 + W) with W ~
        Beta(tp, fp + fn) in the posterior parameters; F1 is increasing in W, so its
        quantiles are transformed Beta quantiles. The HDI is found on the exact
        density.
        """
        check_choice("metric", metric, ("recall", "precision", "f1"))
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(level, "level"))
        tp, fp, fn, _ = self.alpha
        a, b = {"recall": (tp, fn), "precision": (tp, fp), "f1": (tp, fp + fn)}[metric]
        transform = (lambda w: 2 * w / (1 + w)) if metric == "f1" else (lambda w: w)
        if kind == "eti":
            q = stats.beta.ppf([(1 - lvl) / 2, 0.5, (1 + lvl) / 2], a, b)
            low, mid, high = transform(q)
        else:
            # narrowest interval of the metric: minimize width over the lower tail mass
            tails = np.linspace(0, 1 - lvl, 2001)
            lows = transform(stats.beta.ppf(tails, a, b))
            highs = transform(stats.beta.ppf(tails + lvl, a, b))
            i = int(np.argmin(highs - lows))
            low, high = lows[i], highs[i]
            mid = transform(stats.beta.ppf(0.5, a, b))
        return CredibleInterval(metric, kind, lvl, float(mid), float(low), float(high))


def confusion_posterior(counts: Any, *, concentration: float = 1.0) -> ConfusionPosterior:
    """Closed-form posterior of the Dirichlet-multinomial confusion model.

    Parameters
    ----------
    counts : array_like
        ``[tp, fp, fn, tn]`` of independent texts.
    concentration : float, default 1.0
        Dirichlet prior λ of every cell (see :func:`perfci.models.dirichlet_confusion`).

    Returns
    -------
    ConfusionPosterior
        With :meth:`ConfusionPosterior.interval` for recall, precision and F1.

    Examples
    --------
    >>> import perfci as pc
    >>> post = pc.bayes.confusion_posterior([40, 6, 9, 345])
    >>> ci = post.interval("f1", level=0.95)
    >>> print(f"{ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    0.830 [0.738, 0.899]
    """
    cells = check_real_array("counts", counts)
    if cells.shape != (4,) or np.any(cells < 0):
        raise ValueError("`counts` must be four non-negative counts [tp, fp, fn, tn].")
    if not concentration > 0:
        raise ValueError(f"`concentration` must be positive; got {concentration!r}.")
    return ConfusionPosterior(cells + float(concentration))


# ----------------------------------------------------------------------------- plots


def plot_posterior(result: BayesFit, estimand: str = "mu", level: float = 0.95):
    """Plot the posterior of ``mu`` or ``text_weighted`` with its credible interval.

    Uses :func:`arviz_plots.plot_dist`; returns its plot collection.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import perfci as pc
    >>> fit = pc.bayes.fit([9, 8, 10, 7], [10, 10, 10, 10], sampler="grid", rng=1)
    >>> pc_ = pc.bayes.plot_posterior(fit)
    """
    import arviz_plots as azp

    check_choice("estimand", estimand, ("mu", "text_weighted"))
    return azp.plot_dist(
        result.posterior,
        var_names=[estimand],
        ci_prob=level,
        ci_kind="eti",
        point_estimate="median",
        backend="matplotlib",
    )


def plot_forest(result: BayesFit, level: float = 0.95):
    """Forest plot of person-level rates (partial pooling) beside the pooled ``mu``.

    Uses :func:`arviz_plots.plot_forest`; returns its plot collection.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import perfci as pc
    >>> fit = pc.bayes.fit([9, 8, 10, 7], [10, 10, 10, 10], sampler="grid", rng=1)
    >>> pc_ = pc.bayes.plot_forest(fit)
    """
    import arviz_plots as azp

    return azp.plot_forest(
        result.posterior,
        var_names=["mu", "p"],
        ci_probs=(0.5, level),
        ci_kind="eti",
        point_estimate="median",
        combined=True,
        backend="matplotlib",
    )


# ------------------------------------------------- hierarchical confusion matrices


@dataclass(frozen=True, repr=False)
class ConfusionFit:
    """A fitted hierarchical Dirichlet-multinomial confusion model.

    Attributes
    ----------
    posterior : xarray.DataTree
        Group ``posterior`` with ``pi`` (dim ``cell``), ``kappa``, and the population
        metrics ``recall``, ``precision``, ``f1``; group ``sample_stats``.
    diagnostics : dict
        As for :class:`BayesFit`, over ``kappa`` and the metrics.
    flagged : bool
        True if the fit failed a diagnostic.
    flag_reasons : tuple of str
        Which diagnostics failed.
    """

    posterior: xr.DataTree
    diagnostics: dict
    flagged: bool
    flag_reasons: tuple[str, ...] = field(default=())

    def interval(self, metric: str = "f1", kind: str = "eti", level: float = 0.95):
        """Credible interval of the population ``recall``, ``precision`` or ``f1``."""
        check_choice("metric", metric, ("recall", "precision", "f1"))
        check_choice("kind", kind, INTERVAL_KINDS)
        lvl = float(check_confidence_level(level, "level"))
        draws = self.posterior["posterior"][metric].to_numpy().reshape(-1)
        return _interval_from_draws(metric, draws, kind, lvl)

    def __repr__(self) -> str:
        ci = self.interval("f1")
        flag = ", FLAGGED: " + "; ".join(self.flag_reasons) if self.flagged else ""
        return (
            f"ConfusionFit(f1 median {ci.estimate:.4g}, 95% ETI [{ci.low:.4g}, "
            f"{ci.high:.4g}]{flag})"
        )


def fit_confusion(
    counts: Any,
    *,
    sampler: str = "nutpie",
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 4,
    rng: Any = None,
) -> ConfusionFit:
    """Fit the hierarchical Dirichlet-multinomial model to per-person confusion matrices.

    Parameters
    ----------
    counts : array_like of int
        Per-person ``[tp, fp, fn, tn]``, shape ``(m, 4)``, m >= 2 (for independent
        texts use the closed form, :func:`confusion_posterior`).
    sampler : {"nutpie", "pymc"}, default "nutpie"
        MCMC sampler. The model is compiled for each call (its shape depends on m).
    draws, tune, chains : int
        MCMC settings.
    rng : numpy.random.Generator, int or None
        Seed.

    Returns
    -------
    ConfusionFit
        Posterior of the population recall, precision and F1, with diagnostics.

    Examples
    --------
    >>> import perfci as pc
    >>> per_person = [[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30], [4, 1, 1, 15]]
    >>> result = pc.bayes.fit_confusion(per_person, rng=1)
    >>> ci = result.interval("f1", level=0.9)
    >>> bool(0 < ci.low < ci.estimate < ci.high < 1)
    True
    """
    check_choice("sampler", sampler, ("nutpie", "pymc"))
    cells = check_real_array("counts", counts)
    if cells.ndim != 2 or cells.shape[1] != 4 or np.any(cells < 0):
        raise ValueError(
            f"`counts` must be per-person [tp, fp, fn, tn], shape (m, 4); got {cells.shape}."
        )
    cells = cells[cells.sum(1) > 0].astype(np.int64)
    if cells.shape[0] < 2:
        raise ValueError("`counts` must hold at least 2 persons with texts.")
    seed = int(np.random.default_rng(rng).integers(2**31 - 1))
    from .models.confusion import hierarchical_confusion

    model = hierarchical_confusion(cells)
    trace = _run_mcmc(sampler, model, draws, tune, chains, seed)
    diag, reasons = _diagnostics(trace, ["kappa", "recall", "precision", "f1"])
    return ConfusionFit(trace, diag, bool(reasons), reasons)
