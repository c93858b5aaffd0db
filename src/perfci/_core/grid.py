r"""The exact grid posterior of the hierarchical beta-binomial model (NumPy only).

Persons i = 1..m have y_i successes in n_i texts, p_i ~ Beta(mu kappa, (1 - mu) kappa),
y_i ~ Binomial(n_i, p_i), mu ~ Beta(1, 1) and s = kappa^(-1/2) ~ Beta(a, b) (the
concentration priors, :data:`PRIORS`). This module holds everything about that posterior
that needs neither PyMC nor xarray: the priors, the sufficient statistics
(:func:`marginal_counts`), the stable marginal log-likelihood on a (mu, s) grid
(:func:`log_posterior`), the adaptive two-pass grid (:func:`grid_posterior`), quantiles and
highest-density intervals of gridded marginals (:func:`grid_interval`) and of draws
(:func:`interval_from_draws`), and one drawing function (:func:`draw_grid_posterior`) for
(mu, s), the person rates and the text-weighted rate.

Shapes: persons on the last axis, every leading axis an independent data set; persons with
``trials = 0`` are not persons (they change neither the likelihood nor any draw).

Every data set's posterior depends on its own counts only, bit for bit, whatever else is
in the batch:

- the fine grid of a data set is a window of ``shape`` cells on a lattice that its own
  coarse pass chooses (the lattice divides (eps, 1 - eps) into N equal cells, N a small
  integer times a power of two), so data sets whose windows lie on the same lattice share
  one table of logarithms and one matrix product, and a data set alone gets the same grid
  points;
- the tabulated logarithms are rounded to a multiple of 2^-bits, with bits chosen from the
  data set's number of texts so that every product and partial sum of the matrix product
  is an integer multiple of 2^-bits below 2^52: the product is then exact, whatever BLAS
  does and in whatever order it sums. The rounding moves a log-likelihood by at most
  T 2^-(bits + 1) <= T^2 2^-47 for T texts: below 1e-8 for a thousand texts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .validation import check_memory, check_real_array

__all__ = [
    "COARSE_SHAPE",
    "MAX_TEXTS",
    "PRIORS",
    "GridDraws",
    "GridPosterior",
    "check_counts",
    "check_grid_shape",
    "check_population",
    "check_texts",
    "draw_grid_posterior",
    "draw_person_rates",
    "grid_interval",
    "grid_posterior",
    "grid_posterior_blocks",
    "interval_from_draws",
    "log_posterior",
    "marginal_counts",
    "s_prior",
]

#: Prior names and the Beta(a, b) prior of s = kappa^(-1/2) each implies (mu ~ Beta(1, 1)).
PRIORS: dict[str, tuple[float, float]] = {"pareto": (3.0, 1.0), "bda3": (1.0, 1.0)}

#: The grid covers (EPS, 1 - EPS) in mu and in s.
EPS = 1e-9
#: Cells of the first pass over (EPS, 1 - EPS)^2, which finds where the mass lies.
COARSE_SHAPE = (160, 60)
#: The fine pass covers all but this much of each marginal (plus one coarse cell a side).
TAIL = 1e-7
#: |log| of every tabulated term is below 2**_LOG_BITS (mu, 1 - mu >= EPS; j < e^32).
_LOG_BITS = 5
#: Largest number of texts in one data set (the exact products need 2**-bits steps).
MAX_TEXTS = 2**32
#: Significant bits of the number of cells of a fine-pass lattice in mu and in s (see
#: `_window`): more bits fit the windows tighter, fewer let more data sets share a table.
_LATTICE_BITS = (3, 2)
#: Table entries (j values x grid points) computed at once.
_TABLE_BLOCK = 1 << 19
#: Person-rate variates drawn at once (memory bound of the drawing functions).
RATE_BATCH = 1 << 20


def s_prior(prior: str) -> tuple[float, float]:
    """Return the Beta parameters of the prior of s = kappa^(-1/2) for a prior name.

    Examples
    --------
    >>> from perfci._core.grid import s_prior
    >>> s_prior("pareto")
    (3.0, 1.0)
    """
    if not isinstance(prior, str) or prior not in PRIORS:
        raise ValueError(f"`prior` must be one of {sorted(PRIORS)}; got {prior!r}.")
    return PRIORS[prior]


# ------------------------------------------------------------------------- checks


def check_grid_shape(name: str, value: Any) -> tuple[int, int]:
    """Return a grid shape: two integers of at least 2, the cells in mu and in s."""
    try:
        cells = tuple(value)
    except TypeError:
        cells = ()
    if (
        len(cells) != 2
        or any(isinstance(c, bool) or not isinstance(c, int | np.integer) for c in cells)
        or min(cells) < 2
    ):
        raise ValueError(
            f"`{name}` must be two integers of at least 2 (grid cells in mu and in s); "
            f"got {value!r}."
        )
    return int(cells[0]), int(cells[1])


def check_counts(
    successes: ArrayLike, trials: ArrayLike, batch: bool = False
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return validated per-person counts: whole, ``y <= n``, two persons with texts each.

    Persons are on the last axis; with ``batch=True`` every leading axis is a data set,
    else the counts must be one-dimensional. How many texts the arrays of a fit can hold
    is :func:`check_texts`'s to say.
    """
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
        where = ""
        if persons.ndim:
            first = tuple(int(i) for i in np.argwhere(persons < 2)[0])
            where = f" in data set {first if len(first) > 1 else first[0]}"
        raise ValueError(
            "`trials` must give at least 2 persons with a relevant text; a hierarchical "
            f"model of persons needs more than one; got {int(np.min(persons))}{where}."
        )
    return y.astype(np.int64), n.astype(np.int64)


def _check_total(total: NDArray[Any], name: str) -> None:
    """Refuse data sets of :data:`MAX_TEXTS` texts or more (the exact products need fewer)."""
    if np.any(total >= MAX_TEXTS):
        raise ValueError(
            f"`{name}` must sum to fewer than {MAX_TEXTS} texts per data set; got "
            f"{float(np.max(total)):.4g}."
        )


def check_texts(
    trials: NDArray[Any], shape: tuple[int, int] | None, block: int = 1, name: str = "trials"
) -> None:
    """Refuse per-person texts whose per-text arrays would not fit in memory.

    The marginal likelihood's sufficient statistics (:func:`marginal_counts`) have one
    entry per text of the person with the most texts, J, for every data set of a block:
    about ``48 J`` bytes each. The grid's tables of logarithms have J rows of grid points
    in s: about ``80 J`` bytes per point, with up to ``max(COARSE_SHAPE[1], 2 n_s)``
    points (`shape` None: no grid, for the MCMC samplers). A request beyond the memory
    available raises a `ValueError` naming `name`, before anything is allocated.

    Parameters
    ----------
    trials : numpy.ndarray
        Per-person texts (persons on the last axis), or any upper bound of them.
    shape : tuple of int or None
        The fine grid's cells in mu and in s, or None.
    block : int, default 1
        Data sets whose statistics are held at once.
    name : str, default "trials"
        The argument the texts came from.
    """
    _check_total(np.asarray(trials).sum(-1), name)
    longest = float(np.max(trials, initial=0))
    points = 0 if shape is None else max(COARSE_SHAPE[1], 2 * shape[1])
    check_memory(
        name,
        8.0 * longest * (6 * max(1, block) + 10 * points),
        f"the per-text arrays grow with the most texts of one person ({longest:.4g}); "
        "pass fewer texts per person",
    )


def _is_number(value: Any) -> bool:
    """Not a string, bool or None (NumPy would read a string or a bool as a number)."""
    return not (isinstance(value, str | bytes | bool | np.bool_) or value is None)


def check_population(
    sizes: ArrayLike | None, population_persons: Any, trials: NDArray[np.int64]
) -> tuple[NDArray[np.float64] | None, NDArray[np.float64] | None]:
    """Validate the population's sizes and persons against (K, m) trials."""
    weights = None
    if sizes is not None:
        u = check_real_array("population_sizes", sizes)
        if u.shape != trials.shape:
            raise ValueError(
                f"`population_sizes` must give one size per person, of the shape of `trials` "
                f"{trials.shape}; got {u.shape}."
            )
        if np.any(u[trials > 0] <= 0):
            raise ValueError(
                "`population_sizes` must be positive for every person with a relevant text "
                "(their texts in the population, or a number proportional to them)."
            )
        weights = np.where(trials > 0, u, 0.0)
    total = None
    if population_persons is not None:
        sampled = (trials > 0).sum(-1)
        value = np.asarray(population_persons) if _is_number(population_persons) else None
        if value is not None and value.dtype.kind in "iuf" and value.ndim <= sampled.ndim:
            try:
                total = np.broadcast_to(value, sampled.shape).astype(np.float64)
            except ValueError:
                total = None
        whole = total is not None and bool(np.all(np.isinf(total) | (total == np.round(total))))
        if total is None or not whole or np.any(~(total >= sampled)):
            raise ValueError(
                "`population_persons` must be a whole number (or one per data set) of at "
                f"least the sampled persons ({int(np.max(sampled, initial=0))}), or inf for "
                f"an infinite population; got {population_persons!r}."
            )
    return weights, total


def marginal_counts(
    successes: ArrayLike, trials: ArrayLike
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Sufficient statistics of the marginal beta-binomial likelihood.

    Parameters
    ----------
    successes, trials : array_like of int
        Per-person y_i and n_i (persons on the last axis; leading axes are data sets).

    Returns
    -------
    A, B, C : numpy.ndarray
        For j = 0..max(n) - 1: A_j = #{i : y_i > j}, B_j = #{i : n_i - y_i > j},
        C_j = #{i : n_i > j} (last axis j; max(n) over all data sets).

    Examples
    --------
    >>> from perfci._core.grid import marginal_counts
    >>> marginal_counts([2, 3], [3, 3])
    (array([2, 2, 1]), array([1, 0, 0]), array([2, 2, 2]))
    """
    y = np.asarray(successes, dtype=np.int64)
    n = np.asarray(trials, dtype=np.int64)
    length = int(n.max()) if n.size else 0
    lead = y.shape[:-1]

    def exceeding(values: NDArray[np.int64]) -> NDArray[np.int64]:
        """#{i : values_i > j} for j < length, by a histogram of the values per data set."""
        flat = values.reshape(-1, values.shape[-1])
        rows = flat.shape[0]
        offsets = np.arange(rows)[:, None] * (length + 1)
        hist = np.bincount((flat + offsets).ravel(), minlength=rows * (length + 1))
        at_least = np.cumsum(hist.reshape(rows, length + 1)[:, ::-1], axis=1)[:, ::-1]
        return at_least[:, 1:].astype(np.int64).reshape(*lead, length)

    return exceeding(y), exceeding(n - y), exceeding(n)


# ------------------------------------------------------------ log posterior on a grid


def _exact_bits(total_texts: NDArray[np.int64]) -> NDArray[np.int64]:
    """Fraction bits of the rounded logs: 2**(_LOG_BITS + bits) * texts stays below 2**52."""
    bit_length = np.frexp(total_texts.astype(float))[1]  # texts < 2**bit_length
    return (52 - _LOG_BITS - bit_length).astype(np.int64)


def log_posterior(
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    mu: NDArray[np.float64],
    s: NDArray[np.float64],
    prior: str = "pareto",
) -> NDArray[np.float64]:
    r"""Log posterior density, up to a constant, of each data set at shared grid points.

    Parameters
    ----------
    successes, trials : numpy.ndarray of int, shape (K, m)
        Validated per-person counts of K data sets.
    mu, s : numpy.ndarray, shapes (n_mu,) and (n_s,)
        Grid points in (0, 1).
    prior : {"pareto", "bda3"}
        Concentration prior.

    Returns
    -------
    numpy.ndarray, shape (K, n_mu, n_s)

    Notes
    -----
    With :math:`A_j, B_j, C_j` from :func:`marginal_counts` and :math:`s = \kappa^{-1/2}`,

    .. math::

        \log p(\mu, s \mid y) = \sum_j A_j \log(\mu + j s^2) + B_j \log(1 - \mu + j s^2)
            - C_j \log(1 + j s^2) + (a - 1) \log s + (b - 1) \log(1 - s) + c,

    finite and smooth as :math:`s \to 0`. The sums over j are matrix products of the counts
    with tables of the logarithms rounded to multiples of :math:`2^{-\text{bits}}` (see the
    module notes), so each data set's values do not depend on the other data sets.
    """
    pa, pb = s_prior(prior)
    total = trials.sum(-1)
    _check_total(total, "trials")
    a_counts, b_counts, c_counts = (c.astype(float) for c in marginal_counts(successes, trials))
    bits = _exact_bits(total)
    # data sets with the same number of fraction bits share the rounded tables
    groups = [(np.flatnonzero(bits == b), 2.0 ** int(b)) for b in np.unique(bits)]
    # A_j is zero from j = max y on, B_j from j = max(n - y) on: tabulate only up to there
    used_a = int(successes.max(initial=0))
    used_b = int((trials - successes).max(initial=0))
    j = np.arange(a_counts.shape[-1], dtype=float)
    s2 = s * s
    shift = j[:, None, None] * s2[None, None, :]  # (J, 1, n_s)
    log_c = np.log1p(shift[:, 0, :])  # (J, n_s)

    out = np.empty((successes.shape[0], mu.size, s.size))
    per_s = np.empty((successes.shape[0], s.size))
    # Blocks of mu rows, all j at once: every output is complete after one block, and the
    # tables stay small enough for the allocator to reuse their memory.
    step = max(1, _TABLE_BLOCK // max(1, (used_a + used_b) * s.size))
    for start in range(0, mu.size, step):
        rows_mu = slice(start, start + step)
        m = mu[rows_mu][None, :, None]
        points = m.size * s.size
        log_a = np.log(m + shift[:used_a]).reshape(used_a, points)
        log_b = np.log(1 - m + shift[:used_b]).reshape(used_b, points)
        for rows, scale in groups:
            # integers below 2**52: the products and their sums are exact in any order
            value = a_counts[rows, :used_a] @ np.rint(log_a * scale)
            value += b_counts[rows, :used_b] @ np.rint(log_b * scale)
            value /= scale
            out[rows, rows_mu] = value.reshape(rows.size, -1, s.size)
    for rows, scale in groups:
        per_s[rows] = (c_counts[rows] @ np.rint(log_c * scale)) / scale
    log_prior = (pa - 1) * np.log(s) + (pb - 1) * np.log1p(-s)
    out += (log_prior[None, :] - per_s)[:, None, :]
    return out


def _normalize(log_density: NDArray[np.float64]) -> NDArray[np.float64]:
    """Cell masses from log densities on equal cells, per data set (first axis), in place."""
    flat = log_density.reshape(log_density.shape[0], -1)
    flat -= flat.max(axis=1, keepdims=True)
    np.exp(flat, out=flat)
    flat /= flat.sum(axis=1, keepdims=True)
    return log_density


# ----------------------------------------------------------------------- the grid


def _lattice_edges(lattice: int, first: int, last: int) -> NDArray[np.float64]:
    """Edges first..last of the lattice of `lattice` equal cells over (EPS, 1 - EPS)."""
    return EPS + np.arange(first, last + 1, dtype=np.float64) * ((1 - 2 * EPS) / lattice)


def _mids(edges: NDArray[np.float64]) -> NDArray[np.float64]:
    return (edges[:-1] + edges[1:]) / 2


def _mass_range(
    marginal: NDArray[np.float64], edges: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per data set: the edges holding all but TAIL of a marginal, one more cell a side."""
    cdf = np.cumsum(marginal, axis=1)
    cdf /= cdf[:, -1:]
    cells = marginal.shape[1]
    first = np.maximum((cdf < TAIL).sum(1) - 1, 0)
    last = np.minimum((cdf < 1 - TAIL).sum(1) + 2, cells)
    return edges[first], edges[last]


def _window(
    low: NDArray[np.float64], high: NDArray[np.float64], cells: int, bits: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Lattice and first lattice cell of a window of `cells` cells covering [low, high].

    The lattice divides (EPS, 1 - EPS) into N equal cells of width h, with N of the form
    c 2^e, c < 2**bits (few distinct lattices in a batch, so that data sets share
    tables), and the largest such N with (cells - 1) h >= high - low: then a window
    starting at the lattice point below `low` covers the range, and the range fills more
    than 1 - 2**(1 - bits) of the window. Ranges too wide for a window of
    `cells` cells get the plain grid, N = `cells`.
    """
    span = 1 - 2 * EPS
    with np.errstate(divide="ignore"):
        finest = np.floor((cells - 1) * span / (high - low))
    finest = np.minimum(finest, 2.0**50).astype(np.int64)
    drop = np.maximum(np.frexp(finest.astype(float))[1] - bits, 0)
    lattice = np.maximum((finest >> drop) << drop, cells)
    first = np.floor((low - EPS) / (span / lattice)).astype(np.int64)
    return lattice, np.clip(first, 0, lattice - cells)


@dataclass(frozen=True)
class GridPosterior:
    """Posterior cell masses of K data sets, each on its own (mu, s) grid.

    Attributes
    ----------
    mass : numpy.ndarray, shape (K, n_mu, n_s)
        Posterior mass of each cell (each data set's masses sum to 1).
    mu_edge : numpy.ndarray, shape (K, n_mu + 1)
        Cell edges in mu, per data set.
    s_edge : numpy.ndarray, shape (K, n_s + 1)
        Cell edges in s = kappa^(-1/2), per data set.
    s_shape : float, default 1.0
        The prior's exponent a (s ~ Beta(a, b)): within the cell that touches s = 0 the
        posterior density of s is ∝ s^(a - 1) (see :mod:`perfci._core.tails`), and
        draws there follow it (elsewhere s is uniform within its cell).
    """

    mass: NDArray[np.float64]
    mu_edge: NDArray[np.float64]
    s_edge: NDArray[np.float64]
    s_shape: float = 1.0

    @property
    def mu_mass(self) -> NDArray[np.float64]:
        """Marginal posterior mass of each mu cell, shape (K, n_mu)."""
        return self.mass.sum(axis=2)

    def rows(self, part: slice) -> GridPosterior:
        """Return the posterior of the data sets `part` (every field, `s_shape` too)."""
        return GridPosterior(self.mass[part], self.mu_edge[part], self.s_edge[part], self.s_shape)


def _windows(
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    prior: str,
    shape: tuple[int, int],
    block: int,
) -> tuple[NDArray[np.int64], ...]:
    """Lattices and first cells of every data set's fine window, from the coarse pass.

    The coarse pass runs over `block` data sets at a time (memory); a data set's window
    depends on its own counts only.
    """
    n_mu, n_s = shape
    rows = successes.shape[0]
    edges_mu = _lattice_edges(COARSE_SHAPE[0], 0, COARSE_SHAPE[0])
    edges_s = _lattice_edges(COARSE_SHAPE[1], 0, COARSE_SHAPE[1])
    windows = np.zeros((4, rows), dtype=np.int64)
    for start in range(0, rows, block):
        part = slice(start, start + block)
        coarse = _normalize(
            log_posterior(successes[part], trials[part], _mids(edges_mu), _mids(edges_s), prior)
        )
        windows[0:2, part] = _window(
            *_mass_range(coarse.sum(axis=2), edges_mu), n_mu, _LATTICE_BITS[0]
        )
        windows[2:4, part] = _window(
            *_mass_range(coarse.sum(axis=1), edges_s), n_s, _LATTICE_BITS[1]
        )
    return tuple(windows)


def _sharing_chunks(
    windows: tuple[NDArray[np.int64], ...], shape: tuple[int, int], block: int
) -> list[NDArray[np.int64]]:
    """Return the data sets whose fine windows share a table, in chunks of at most `block`.

    Data sets on the same lattices, with nearby windows, share one table of logarithms:
    the union of their windows is at most 1.5 windows wide in each direction. Members of
    a group are ordered by window before they are cut into chunks, so that a chunk's
    union stays narrow.
    """
    lattice_mu, first_mu, lattice_s, first_s = windows
    n_mu, n_s = shape
    keys = np.stack(
        [lattice_mu, first_mu // max(1, n_mu // 2), lattice_s, first_s // max(1, n_s // 2)],
        axis=1,
    )
    if not keys.shape[0]:
        return []
    _, group = np.unique(keys, axis=0, return_inverse=True)
    order = np.lexsort((first_s, first_mu, group.ravel()))
    bounds = np.flatnonzero(np.diff(group.ravel()[order])) + 1
    chunks = []
    for members in np.split(order, bounds):
        chunks.extend(np.split(members, range(block, members.size, block)))
    return chunks


def _fine_pass(
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    windows: tuple[NDArray[np.int64], ...],
    prior: str,
    shape: tuple[int, int],
) -> GridPosterior:
    """Masses of data sets that share one table, each on its own window (see _windows)."""
    n_mu, n_s = shape
    lattice_mu, first_mu, lattice_s, first_s = windows
    axes = []
    for lattice, first, cells in ((lattice_mu, first_mu, n_mu), (lattice_s, first_s, n_s)):
        lo, hi = int(first.min()), int(first.max()) + cells
        union = _lattice_edges(int(lattice[0]), lo, hi)
        offsets = first - lo
        spans = offsets[:, None] + np.arange(cells + 1)
        axes.append((union, offsets, np.take(union, spans)))
    (mu_union, mu_off, mu_edge), (s_union, s_off, s_edge) = axes
    values = log_posterior(successes, trials, _mids(mu_union), _mids(s_union), prior)
    # each data set's window of the union
    views = np.lib.stride_tricks.sliding_window_view(values, (n_mu, n_s), axis=(1, 2))
    mass = views[np.arange(successes.shape[0]), mu_off, s_off]
    return GridPosterior(_normalize(mass), mu_edge, s_edge, s_prior(prior)[0])


def grid_posterior_blocks(
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    prior: str = "pareto",
    shape: tuple[int, int] = (400, 100),
    block: int | None = None,
) -> Iterator[tuple[NDArray[np.int64], GridPosterior]]:
    """Yield ``(members, posterior)``: the grid posteriors of K data sets, a block at a time.

    Parameters are those of :func:`grid_posterior`; `block` bounds the data sets of one
    block (memory: a block holds a few tables of its grid cells), all at once by default.
    Every data set is in exactly one block, `members` its indices (in no particular
    order); its posterior is bit for bit the one :func:`grid_posterior` gives it.

    Notes
    -----
    The coarse pass runs over all data sets first, so that data sets whose fine windows
    share a table of logarithms (the same lattices, nearby windows) are computed
    together whatever their position in the input: the table is computed once per block
    of them, not once per block of the input.
    """
    rows = successes.shape[0]
    block = max(1, rows if block is None else block)
    windows = _windows(successes, trials, prior, shape, block)
    for members in _sharing_chunks(windows, shape, block):
        posterior = _fine_pass(
            successes[members], trials[members], tuple(w[members] for w in windows), prior, shape
        )
        yield members, posterior


def grid_posterior(
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    prior: str = "pareto",
    shape: tuple[int, int] = (400, 100),
) -> GridPosterior:
    """Exact posterior of (mu, s) of K data sets by two-pass quadrature.

    Parameters
    ----------
    successes, trials : numpy.ndarray of int, shape (K, m)
        Validated per-person counts (pad with ``trials = 0``).
    prior : {"pareto", "bda3"}
        Concentration prior.
    shape : tuple of int
        Cells in mu and in s of the fine pass.

    Returns
    -------
    GridPosterior
        Each data set's masses on its own grid, bit for bit the same as when the data set
        is passed alone.

    Notes
    -----
    A coarse pass (:data:`COARSE_SHAPE` equal cells over (EPS, 1 - EPS)^2) finds, per data
    set, the range of each marginal holding all but :data:`TAIL` of the mass, padded by a
    coarse cell a side. The fine pass covers that range with a window of ``shape`` equal
    cells on the finest lattice of a small family that fits (see `_window` and the
    module notes): more than three quarters of the cells in mu, and half of those in s,
    fall inside the range. Cells carry the density at their midpoint (midpoint rule;
    equal cells, so their area cancels in normalizing).
    """
    n_mu, n_s = shape
    rows = successes.shape[0]
    mass = np.empty((rows, n_mu, n_s))
    mu_edge = np.empty((rows, n_mu + 1))
    s_edge = np.empty((rows, n_s + 1))
    for members, posterior in grid_posterior_blocks(successes, trials, prior, shape):
        mass[members] = posterior.mass
        mu_edge[members] = posterior.mu_edge
        s_edge[members] = posterior.s_edge
    return GridPosterior(mass, mu_edge, s_edge, s_prior(prior)[0])


# ------------------------------------------------------------------------ intervals


def grid_interval(
    edges: NDArray[np.float64], mass: NDArray[np.float64], kind: str, level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """ETI or HDI, and median, of gridded marginals (mass uniform within each cell).

    Parameters
    ----------
    edges : numpy.ndarray, shape (cells + 1,) or (K, cells + 1)
        Cell edges, shared or one row per data set.
    mass : numpy.ndarray, shape (K, cells)
        Marginal cell masses, one row per data set.
    kind : {"eti", "hdi"}
        Equal-tailed interval (quantiles of the CDF, linear within cells) or
        highest-density interval (the densest cells holding `level`; unimodal marginals).
    level : float
        Credible level.

    Returns
    -------
    low, median, high : numpy.ndarray, shape (K,)
    """
    rows, cells = mass.shape
    edges = np.broadcast_to(edges, (rows, cells + 1))
    cdf = np.zeros((rows, cells + 1))
    np.cumsum(mass, axis=1, out=cdf[:, 1:])
    cdf /= cdf[:, -1:]
    r = np.arange(rows)

    def quantile(q: float) -> NDArray[np.float64]:
        j = np.clip((cdf < q).sum(1), 1, cells)  # the cell where the CDF reaches q
        below, above = cdf[r, j - 1], cdf[r, j]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(above > below, (q - below) / (above - below), 0.0)
        return edges[r, j - 1] + np.clip(frac, 0, 1) * (edges[r, j] - edges[r, j - 1])

    mid = quantile(0.5)
    if kind == "eti":
        return quantile((1 - level) / 2), mid, quantile((1 + level) / 2)
    density = mass / np.diff(edges, axis=1)
    order = np.argsort(-density, axis=1)
    held = np.cumsum(np.take_along_axis(mass, order, 1), axis=1)
    held /= held[:, -1:]
    chosen = np.arange(cells)[None, :] < ((held < level).sum(1) + 1)[:, None]
    low = np.take_along_axis(edges, np.where(chosen, order, cells).min(1)[:, None], 1)
    high = np.take_along_axis(edges, np.where(chosen, order, -1).max(1)[:, None] + 1, 1)
    return low[:, 0], mid, high[:, 0]


def _hdi_from_draws(
    draws: NDArray[np.float64], level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Narrowest interval holding `level` of the draws (last axis)."""
    x = np.sort(draws, axis=-1)
    n = x.shape[-1]
    k = int(np.ceil(level * n))
    widths = x[..., k - 1 :] - x[..., : n - k + 1]
    i = np.argmin(widths, axis=-1)
    low = np.take_along_axis(x, i[..., None], -1)[..., 0]
    high = np.take_along_axis(x, (i + k - 1)[..., None], -1)[..., 0]
    return low, high


def interval_from_draws(
    draws: NDArray[np.float64], kind: str, level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """ETI (quantiles, numpy's default linear rule) or HDI, and median, of draws (last axis).

    Returns
    -------
    low, median, high : numpy.ndarray
        Shape of the leading axes of `draws`.
    """
    if kind == "eti":
        low, mid, high = np.quantile(draws, [(1 - level) / 2, 0.5, (1 + level) / 2], axis=-1)
        return low, mid, high
    low, high = _hdi_from_draws(draws, level)
    return low, np.median(draws, axis=-1), high


# --------------------------------------------------------------------------- draws


def draw_person_rates(
    mu: NDArray[np.float64],
    s: NDArray[np.float64],
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    rng: np.random.Generator,
    *,
    weights: NDArray[np.float64] | None = None,
    rates: bool = True,
    batch: int = RATE_BATCH,
) -> tuple[NDArray[np.float64] | None, NDArray[np.float64], NDArray[np.float64]]:
    r"""Person rates of one data set given draws of (mu, s), and what the estimands need.

    Parameters
    ----------
    mu, s : numpy.ndarray
        Posterior draws, any shape (the same for both).
    successes, trials : numpy.ndarray of int, shape (m,)
        The data set's persons with texts (``trials > 0``).
    rng : numpy.random.Generator
        Consumed in the order of the draws (C order), one Beta variate per draw and person.
    weights : numpy.ndarray, shape (m,), optional
        The persons' sizes in the population :math:`u_i` (default `trials`).
    rates : bool, default True
        Return the person rates (else only the summaries are kept).
    batch : int
        Largest number of person rates held at once; the draws do not depend on it.

    Returns
    -------
    rates : numpy.ndarray or None
        :math:`p_i \sim \mathrm{Beta}(\mu\kappa + y_i, (1 - \mu)\kappa + n_i - y_i)`, the
        exact conditional, shape ``mu.shape + (m,)``.
    sampled_persons : numpy.ndarray
        :math:`\theta_s = \sum_i u_i p_i / \sum_i u_i`, shape ``mu.shape``.
    spread : numpy.ndarray
        The SD (m - 1 denominator) of the size-weighted deviations
        :math:`u_i (p_i - \theta_s) / (\bar u \sqrt{1 - h_i})`, :math:`h_i = u_i / \sum_j
        u_j` (:mod:`perfci._core.population`), shape ``mu.shape``; NaN for one person.
    """
    from . import kernels
    from .population import deviation_spread, deviation_weights

    shape = mu.shape
    mu = mu.reshape(-1)
    kappa = s.reshape(-1) ** -2.0
    persons = trials.size
    u = trials.astype(np.float64) if weights is None else np.asarray(weights, dtype=np.float64)
    # size-weighted deviations, CR2-corrected by each person's leverage in the weighted rate
    share, scaled = deviation_weights(u)
    sampled = np.empty(mu.size)
    spread = np.empty(mu.size)
    p = np.empty((mu.size, persons)) if rates else None
    failures = trials - successes
    step = max(1, batch // max(1, persons))
    drawn = np.empty((min(step, mu.size), persons))
    for start in range(0, mu.size, step):  # bounds memory: step x persons
        block = slice(start, start + step)
        rows = drawn[: mu[block].size]
        # in rng.beta's order on (draws, persons) arrays of the parameters
        kernels.beta_rates(mu[block], kappa[block], successes, failures, rng, rows)
        sampled[block] = rows @ share
        deviations = (rows - sampled[block, None]) * scaled
        with np.errstate(invalid="ignore", divide="ignore"):
            spread[block] = deviation_spread(deviations)
        if p is not None:
            p[block] = rows
    return (
        None if p is None else p.reshape(*shape, persons),
        sampled.reshape(shape),
        spread.reshape(shape),
    )


@dataclass(frozen=True)
class GridDraws:
    """Independent posterior draws of K data sets from their grid posteriors.

    Attributes
    ----------
    mu, s, kappa : numpy.ndarray, shape (K, draws)
        Draws of mu, s and kappa = s^-2.
    sampled_persons, population : numpy.ndarray, shape (K, draws)
        Draws of the sampled persons' and of the population's text-weighted rate
        (:mod:`perfci._core.population`).
    rates : numpy.ndarray or None, shape (K, draws, m)
        Person rates (NaN for persons without texts), when asked for.
    """

    mu: NDArray[np.float64]
    s: NDArray[np.float64]
    kappa: NDArray[np.float64]
    sampled_persons: NDArray[np.float64]
    population: NDArray[np.float64]
    rates: NDArray[np.float64] | None


def draw_grid_posterior(
    posterior: GridPosterior,
    successes: NDArray[np.int64],
    trials: NDArray[np.int64],
    draws: int,
    rngs: Sequence[np.random.Generator],
    *,
    weights: NDArray[np.float64] | None = None,
    population_persons: NDArray[np.float64] | None = None,
    rates: bool = False,
    batch: int = RATE_BATCH,
) -> GridDraws:
    """Draw (mu, s), person rates and the rates of the estimands from grid posteriors.

    Parameters
    ----------
    posterior : GridPosterior
        K data sets' grid posteriors (:func:`grid_posterior`).
    successes, trials : numpy.ndarray of int, shape (K, m)
        The counts the posteriors were computed from.
    draws : int
        Independent draws per data set.
    rngs : sequence of numpy.random.Generator
        One per data set (see :func:`perfci._core.validation.dataset_generators`).
    weights : numpy.ndarray, shape (K, m), optional
        Persons' sizes in the population (default `trials`).
    population_persons : numpy.ndarray, shape (K,), optional
        Persons in each data set's population (inf: infinite, the default).
    rates : bool, default False
        Keep the person rates.
    batch : int
        Largest number of person rates held at once; the draws do not depend on it.

    Returns
    -------
    GridDraws

    Notes
    -----
    For each data set, with its own generator and in this order: `draws` uniforms pick
    cells in proportion to their mass (``Generator.choice`` with ``p``), `draws` uniforms
    place mu and then `draws` place s uniformly within the cell (as the quadrature
    assumes), person rates are drawn from their exact Beta conditionals
    (:func:`draw_person_rates`), for persons with texts only, and last `draws` Student t
    variates on m - 1 degrees of freedom give the population's deviation. Padding a data
    set with ``trials = 0`` persons consumes no random numbers and changes no draw. In the
    cell that touches s = 0, s follows the density ∝ s^(a - 1) of the posterior there (the
    same uniform, by the inverse CDF; see :attr:`GridPosterior.s_shape`): uniform, the
    cell's draws would give kappa = s^-2 an infinite mean of their own.
    """
    from . import kernels
    from .population import draw_population

    rows, _, n_s = posterior.mass.shape
    if len(rngs) != rows:
        raise ValueError(f"`rngs` must hold one generator per data set ({rows}).")
    mu = np.empty((rows, draws))
    s = np.empty((rows, draws))
    sampled = np.empty((rows, draws))
    population = np.empty((rows, draws))
    kept = np.full((rows, draws, successes.shape[-1]), np.nan) if rates else None
    cdf = np.empty(posterior.mass[0].size if rows else 0)
    cell = np.empty(draws, dtype=np.int64)
    for k, rng in enumerate(rngs):  # one generator per data set; vectorized over draws
        kernels.grid_cells(posterior.mass[k].ravel(), rng.random(draws), cdf, cell)
        i, j = np.divmod(cell, n_s)
        mu_edge, s_edge = posterior.mu_edge[k], posterior.s_edge[k]
        mu[k] = mu_edge[i] + rng.random(draws) * (mu_edge[i + 1] - mu_edge[i])
        s[k] = _place_s(s_edge, j, rng.random(draws), posterior.s_shape)
        persons = trials[k] > 0
        m = int(np.count_nonzero(persons))
        p, sampled[k], spread = draw_person_rates(
            mu[k],
            s[k],
            successes[k, persons],
            trials[k, persons],
            rng,
            weights=None if weights is None else weights[k, persons],
            rates=rates,
            batch=batch,
        )
        total = None if population_persons is None else float(population_persons[k])
        population[k] = draw_population(sampled[k], spread, m, total, rng)
        if kept is not None:
            kept[k][:, persons] = p
    return GridDraws(mu, s, s**-2.0, sampled, population, kept)


def _place_s(
    s_edge: NDArray[np.float64], cell: NDArray[np.int64], u: NDArray[np.float64], shape: float
) -> NDArray[np.float64]:
    """Place s in its cell by uniforms `u`: uniformly, or ∝ s^(shape - 1) in the cell at 0."""
    low, high = s_edge[cell], s_edge[cell + 1]
    s = low + u * (high - low)
    if shape != 1 and s_edge[0] <= EPS:
        first = cell == 0
        lo, hi = low[first] ** shape, high[first] ** shape
        s[first] = (lo + u[first] * (hi - lo)) ** (1 / shape)
    return s
