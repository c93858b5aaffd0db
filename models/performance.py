r"""Hierarchical logistic models of a classifier's per-text success (performance models).

A *margin* is one of the rates a metric is made of (recall: the share of reference
positives the classifier codes positive; specificity; prevalence; precision ...). Each
margin m is a logistic regression of its relevant texts' success on covariates, with a
random intercept per person (and optional random slopes):

.. math::

   \operatorname{logit} p_{mi} = x_{mi}^\top \beta_m + \sigma_m z_{m,j[i]}
       + \sum_k w_{mik}\, \tau_{mk} v_{mk,j[i]},
   \qquad z, v \sim N(0, 1),

the successes of the texts of one person and covariate pattern ~ Binomial. The columns of
``x`` are standardized (intercept first), so the priors are on a common scale:

- intercept ~ Normal(0, 1.5): the margin's rate at the mean covariates within about
  0.05-0.95 a priori;
- every other coefficient ~ Normal(0, 1) per standard deviation of its column;
- the person SD sigma ~ HalfNormal(1), each random slope's SD tau ~ HalfNormal(0.5).

Persons enter as an index into a padded vector (``persons`` long): a compiled model
refits to any number of texts and to at most ``persons`` persons.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pymc as pm

__all__ = ["PRIOR_SCALES", "performance_model"]

#: The default prior scales: intercept SD, coefficient SD, person SD, random slope SD.
PRIOR_SCALES: dict[str, float] = {
    "intercept": 1.5,
    "coefficient": 1.0,
    "person_sd": 1.0,
    "slope_sd": 0.5,
}


def performance_model(
    margins: Mapping[str, Mapping[str, Any]],
    *,
    persons: int,
    terms: Mapping[str, Sequence[str]],
    slopes: Mapping[str, Sequence[str]] | None = None,
    prior: Mapping[str, float] | None = None,
    nested: bool = True,
) -> pm.Model:
    """Build the performance model of one or more margins.

    Parameters
    ----------
    margins : mapping
        Margin name -> data: ``successes`` and ``trials`` ``(n,)`` per row (a person and
        covariate pattern), ``X`` ``(n, p)`` the standardized design (intercept first),
        ``person`` ``(n,)`` the person index (0 to `persons` - 1) and, with slopes,
        ``W`` ``(n, q)`` the random slopes' columns.
    persons : int
        Length of the persons' vectors (the persons, padded).
    terms : mapping
        Margin -> the names of the design's columns.
    slopes : mapping, optional
        Margin -> the names of its random slopes' columns.
    prior : mapping, optional
        Overrides of :data:`PRIOR_SCALES`.
    nested : bool, default True
        Whether persons get random effects (False: a plain logistic regression).

    Returns
    -------
    pymc.Model
        Free variables ``{m}_beta`` and, nested, ``{m}_sigma``, ``{m}_z`` (and
        ``{m}_tau``, ``{m}_v``); data ``{m}_X``, ``{m}_person``, ``{m}_successes``,
        ``{m}_trials`` (and ``{m}_W``), refit with ``pm.set_data`` or nutpie's
        ``with_data``.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.models.performance import performance_model
    >>> data = {"successes": np.array([3.0, 5.0]), "trials": np.array([4.0, 6.0]),
    ...         "X": np.array([[1.0, -1.0], [1.0, 1.0]]), "person": np.array([0, 1])}
    >>> model = performance_model({"recall": data}, persons=2,
    ...                           terms={"recall": ["Intercept", "x"]})
    >>> sorted(v.name for v in model.free_RVs)
    ['recall_beta', 'recall_sigma', 'recall_z']
    """
    scales = {**PRIOR_SCALES, **(prior or {})}
    slopes = slopes or {}
    coords: dict[str, Any] = {"person": np.arange(int(persons))}
    for m in margins:
        coords[f"{m}_term"] = list(terms[m])
        if slopes.get(m):
            coords[f"{m}_slope"] = list(slopes[m])
    with pm.Model(coords=coords) as model:
        for m, data in margins.items():
            x = pm.Data(f"{m}_X", np.asarray(data["X"], dtype=float))
            successes = pm.Data(f"{m}_successes", np.asarray(data["successes"], dtype=float))
            trials = pm.Data(f"{m}_trials", np.asarray(data["trials"], dtype=float))
            p = len(terms[m])
            sd = np.full(p, scales["coefficient"])
            sd[0] = scales["intercept"]
            beta = pm.Normal(f"{m}_beta", 0.0, sd, dims=f"{m}_term")
            eta = pm.math.dot(x, beta)
            if nested:
                person = pm.Data(f"{m}_person", np.asarray(data["person"], dtype=np.int64))
                sigma = pm.HalfNormal(f"{m}_sigma", scales["person_sd"])
                z = pm.Normal(f"{m}_z", 0.0, 1.0, dims="person")
                eta = eta + sigma * z[person]
                if slopes.get(m):
                    w = pm.Data(f"{m}_W", np.asarray(data["W"], dtype=float))
                    tau = pm.HalfNormal(f"{m}_tau", scales["slope_sd"], dims=f"{m}_slope")
                    v = pm.Normal(f"{m}_v", 0.0, 1.0, dims=("person", f"{m}_slope"))
                    eta = eta + (w * (tau * v[person])).sum(axis=-1)
            pm.Binomial(f"{m}_obs", n=trials, logit_p=eta, observed=successes)
    return model
