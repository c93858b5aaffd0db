"""Dirichlet-multinomial models of the confusion matrix.

The four cells are ordered ``[tp, fp, fn, tn]``. Population metrics are functions of the
cell probabilities pi: recall = pi_tp / (pi_tp + pi_fn), precision = pi_tp / (pi_tp +
pi_fp), F1 = 2 pi_tp / (2 pi_tp + pi_fp + pi_fn).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pymc as pm

__all__ = ["dirichlet_confusion", "hierarchical_confusion"]

_CELLS = ["tp", "fp", "fn", "tn"]


def _metrics(pi: Any) -> None:
    """Add recall, precision and F1 of cell probabilities as deterministics."""
    tp, fp, fn = pi[..., 0], pi[..., 1], pi[..., 2]
    pm.Deterministic("recall", tp / (tp + fn))
    pm.Deterministic("precision", tp / (tp + fp))
    pm.Deterministic("f1", 2 * tp / (2 * tp + fp + fn))


def dirichlet_confusion(counts: Any, *, concentration: float = 1.0) -> pm.Model:
    """Build the Dirichlet-multinomial model of one confusion matrix.

    Parameters
    ----------
    counts : array_like of int
        ``[tp, fp, fn, tn]`` of independent texts.
    concentration : float, default 1.0
        Dirichlet prior parameter lambda of every cell (1: uniform over the simplex).

    Returns
    -------
    pymc.Model
        pi ~ Dirichlet(lambda), cells ~ Multinomial(n, pi); deterministics ``recall``,
        ``precision``, ``f1``. The posterior is Dirichlet(counts + lambda) in closed form,
        which :func:`perfci.bayes.confusion_posterior` uses without sampling.

    Examples
    --------
    >>> from perfci.models import dirichlet_confusion
    >>> model = dirichlet_confusion([40, 6, 9, 345])
    >>> [v.name for v in model.free_RVs]
    ['pi']
    """
    cells = np.asarray(counts, dtype=np.int64)
    with pm.Model(coords={"cell": _CELLS}) as model:
        pi = pm.Dirichlet("pi", a=np.full(4, float(concentration)), dims="cell")
        pm.Multinomial("cells", n=int(cells.sum()), p=pi, observed=cells, dims="cell")
        _metrics(pi)
    return model


def hierarchical_confusion(counts: Any, *, coords: dict | None = None) -> pm.Model:
    """Build the hierarchical Dirichlet-multinomial model of per-person confusion matrices.

    Parameters
    ----------
    counts : array_like of int
        Per-person ``[tp, fp, fn, tn]``, shape ``(m, 4)``.
    coords : dict, optional
        Coordinates; ``{"person": ids}`` names the persons.

    Returns
    -------
    pymc.Model
        Person cells ~ DirichletMultinomial(n_i, kappa * pi), population cell
        probabilities pi ~ Dirichlet(1, 1, 1, 1), kappa ~ Pareto(1.5, 1) (proper, kappa
        >= 1, as in the beta-binomial model); deterministics ``recall``, ``precision``,
        ``f1`` of pi, the population (superpopulation) metrics. The counts enter as
        ``pm.Data`` ``counts`` (and n_i as their row sums), so a compiled model can be
        refit to other persons, any number of them, without recompiling
        (``pm.set_data`` or nutpie's ``with_data(counts=...)``).

    Examples
    --------
    >>> import pymc as pm
    >>> from perfci.models import hierarchical_confusion
    >>> model = hierarchical_confusion([[5, 1, 0, 20], [3, 0, 2, 11], [8, 2, 1, 30]])
    >>> sorted(v.name for v in model.free_RVs)
    ['kappa', 'pi']
    >>> with model:
    ...     pm.set_data({"counts": [[5, 1, 0, 20], [3, 0, 2, 11]]}, coords={"person": [0, 1]})
    >>> model["counts"].get_value().shape
    (2, 4)
    """
    cells = np.asarray(counts, dtype=np.int64)
    if cells.ndim != 2 or cells.shape[1] != 4:
        raise ValueError(f"`counts` must have shape (m, 4); got {cells.shape}.")
    coords = {"person": np.arange(cells.shape[0])} if coords is None else coords
    coords = {**coords, "cell": _CELLS}
    with pm.Model(coords=coords) as model:
        data = pm.Data("counts", cells.astype(float), dims=("person", "cell"))
        pi = pm.Dirichlet("pi", a=np.ones(4), dims="cell")
        kappa = pm.Pareto("kappa", alpha=1.5, m=1.0)
        pm.DirichletMultinomial(
            "cells", n=data.sum(1), a=kappa * pi, observed=data, dims=("person", "cell")
        )
        _metrics(pi)
    return model
