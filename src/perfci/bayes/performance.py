r"""Performance models: where a classifier fails, and what it does on a corpus (PyMC).

:func:`performance_model` fits a hierarchical logistic regression of a metric's per-text
success on covariates, persons as random effects (:mod:`perfci.models.performance`):

- recall: the reference positives, a success when the classifier codes them positive;
  specificity: the reference negatives; precision: the texts the classifier codes
  positive, a success when the reference agrees; npv: those it codes negative; accuracy:
  every text;
- F1, kappa, balanced accuracy, MCC, ppa and pna from three margins fit together:
  prevalence (every text, a success when the reference codes it positive), recall and
  specificity; a covariate pattern's confusion cells are :math:`[\pi R, (1 - \pi)(1 - S),
  \pi(1 - R), (1 - \pi) S]`.

Texts of one person and covariate pattern are one binomial row (counts first). Sampling
is with nutpie by default, the model compiled once per structure (its margins, number of
columns and random slopes, and persons padded to a power of two) and kept in the compile
cache (:mod:`perfci.bayes.compile_cache`), so a second fit of the structure, in any
process, starts sampling at once.

**What the results are about.** A rate at a covariate pattern is that of a *new person*:
:math:`E_u[\operatorname{logit}^{-1}(x^\top\beta + u)]` over the person effects' normal
distribution (Gauss-Hermite quadrature of :data:`QUADRATURE_NODES` nodes per draw). A
metric over a table of patterns weights them by their relevant texts (the metric's own
texts, or every text for the three-margin metrics):

- :meth:`PerformanceFit.coefficients`: the coefficients on the logit scale, per unit of
  each numeric column and against the reference level of each categorical one;
- :meth:`PerformanceFit.effects`: the metric's difference between a term's levels (or
  one SD of a numeric term), over the sample's own mix of the other covariates (an
  average marginal effect on the metric's scale), for new persons;
- :meth:`PerformanceFit.poststratify`: the metric on a target described by its covariate
  mix (multilevel regression and poststratification), for new persons or these;
- :meth:`PerformanceFit.population`: the metric over the sample's own mix, for new
  persons (with no covariates, the beta-binomial's population rate's counterpart).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.polynomial.hermite_e import hermegauss
from scipy import special

from .._core import registry
from .._core.labels import as_label_array, factorize_sorted
from .._core.validation import check_confidence_level, check_positive_int, check_rng
from ..metrics import metric_values
from .intervals import CredibleInterval, interval_of_draws
from .performance_design import Design, design_of, patterns
from .samplers import diagnostics, run_mcmc

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    import pymc as pm
    import xarray as xr
    from matplotlib.figure import Figure

__all__ = [
    "MARGINS",
    "QUADRATURE_NODES",
    "PerformanceFit",
    "margins_of",
    "new_person_rates",
    "performance_model",
    "plot_effect_table",
]

#: The margins a metric is modelled by.
MARGINS: dict[str, tuple[str, ...]] = {
    "recall": ("recall",),
    "specificity": ("specificity",),
    "precision": ("precision",),
    "npv": ("npv",),
    "accuracy": ("accuracy",),
}
_THREE = ("prevalence", "recall", "specificity")
#: Gauss-Hermite nodes of the expectation over a new person's effects.
QUADRATURE_NODES = 24
_NODES, _WEIGHTS = hermegauss(QUADRATURE_NODES)
_WEIGHTS = _WEIGHTS / math.sqrt(2 * math.pi)
#: Cells of a target evaluated at once (memory: draws x cells x nodes).
_CELL_CHUNK = 256


def margins_of(metric: str) -> tuple[str, ...]:
    """Return the margins a metric's performance model fits.

    Examples
    --------
    >>> from perfci.bayes.performance import margins_of
    >>> margins_of("recall"), margins_of("f1")
    (('recall',), ('prevalence', 'recall', 'specificity'))
    """
    return MARGINS.get(metric, _THREE)


def _margin_texts(margin: str, truth: np.ndarray, pred: np.ndarray) -> tuple[Any, Any]:
    """Return the margin's relevant texts (a mask) and their successes."""
    if margin == "recall":
        return truth, pred[truth]
    if margin == "specificity":
        return ~truth, ~pred[~truth]
    if margin == "precision":
        return pred, truth[pred]
    if margin == "npv":
        return ~pred, ~truth[~pred]
    if margin == "accuracy":
        return np.ones_like(truth), truth == pred
    return np.ones_like(truth), truth  # prevalence


def _three_margin_metric(
    metric: str, pi: np.ndarray, recall: np.ndarray, spec: np.ndarray, share: np.ndarray
) -> np.ndarray:
    """Return the metric of the cells of rows' prevalence, recall and specificity ``(S, C)``."""
    cells = np.stack(
        [
            (pi * recall) @ share,
            ((1 - pi) * (1 - spec)) @ share,
            (pi * (1 - recall)) @ share,
            ((1 - pi) * spec) @ share,
        ],
        axis=-1,
    )
    return np.asarray(metric_values(cells, metric), dtype=float)


def _bucket(persons: int) -> int:
    """Return the padded number of persons: a power of two, at least 8."""
    return max(8, 1 << max(0, math.ceil(math.log2(max(persons, 1)))))


def new_person_rates(eta: np.ndarray, scale: np.ndarray | None) -> np.ndarray:
    """Return a new person's rate: E over N(0, scale^2) of expit(eta + u), ``(S, C)``.

    Gauss-Hermite quadrature of :data:`QUADRATURE_NODES` nodes (error below 1e-8 for a
    scale up to 1.5 on the logit scale); `scale` None: no person effect.

    Examples
    --------
    >>> import numpy as np
    >>> from perfci.bayes.performance import new_person_rates
    >>> rate = new_person_rates(np.array([[2.0]]), np.array([[1.0]]))
    >>> round(float(rate[0, 0]), 4)  # below expit(2) = 0.8808: the person effect spreads it
    0.8445
    """
    if scale is None:
        return special.expit(eta)
    out = np.zeros_like(eta)
    for node, weight in zip(_NODES, _WEIGHTS, strict=True):
        out += weight * special.expit(eta + scale * node)
    return out


@dataclass
class PerformanceFit:
    """A fitted performance model: the posterior, its diagnostics, and what it answers.

    Attributes
    ----------
    metric : str
        The metric.
    margins : tuple of str
        The margins fit (module notes).
    design : Design
        The terms and how a table becomes the standardized design.
    slopes : tuple of str
        The design's columns with a random slope per person.
    idata : xarray.DataTree
        The posterior (ArviZ's data), of the standardized coefficients.
    diagnostics : dict
        R-hat (largest), bulk and tail ESS (smallest) and divergences.
    flagged : bool
        Whether the fit failed its diagnostics (a warning said so).
    reasons : tuple of str
        Why it is flagged.
    persons : numpy.ndarray or None
        The person ids, in the order of the model's person index (None: no groups).
    confidence_level : float
        The default level of the intervals.
    sampler : str
        ``"nutpie"`` or ``"pymc"``.
    data : dict
        Each margin's binomial rows (``X``, ``person``, ``successes``, ``trials``).
    """

    metric: str
    margins: tuple[str, ...]
    design: Design
    slopes: tuple[str, ...]
    idata: xr.DataTree
    diagnostics: dict[str, float]
    flagged: bool
    reasons: tuple[str, ...]
    persons: np.ndarray | None
    confidence_level: float
    sampler: str
    data: dict[str, dict[str, np.ndarray]] = field(repr=False)
    prior: dict[str, float] = field(repr=False, default_factory=dict)

    def __repr__(self) -> str:
        terms = ", ".join(t.name for t in self.design.terms) or "none"
        persons = "none" if self.persons is None else str(len(self.persons))
        return (
            f"PerformanceFit(metric={self.metric!r}, margins={self.margins}, terms=[{terms}], "
            f"persons={persons}, sampler={self.sampler!r}, flagged={self.flagged})"
        )

    # ------------------------------------------------------------------ the posterior

    @property
    def nested(self) -> bool:
        """Whether persons have random effects."""
        return self.persons is not None

    @property
    def _estimand(self) -> str:
        # about the population of persons with groups, else of texts (named by the metric)
        return "population" if self.nested else self.metric

    def _draws(self, name: str) -> np.ndarray:
        values = self.idata["posterior"][name].to_numpy()
        return values.reshape(values.shape[0] * values.shape[1], *values.shape[2:])

    def _beta(self, margin: str) -> np.ndarray:
        return self._draws(f"{margin}_beta")  # (S, p), standardized

    def _scale(self, margin: str, w: np.ndarray | None) -> np.ndarray | None:
        """Return the SD of a new person's effect at each row, ``(S, C)`` (None: not nested)."""
        if not self.nested:
            return None
        sigma = self._draws(f"{margin}_sigma")[:, None]
        variance = np.broadcast_to(sigma**2, (sigma.shape[0], 1 if w is None else len(w)))
        if self.slopes and w is not None:
            tau = self._draws(f"{margin}_tau")  # (S, q)
            variance = variance + (tau**2) @ (w.T**2)
        return np.sqrt(variance)

    def _slope_columns(self, x: np.ndarray) -> np.ndarray:
        columns = self.design.columns
        return x[:, [columns.index(s) for s in self.slopes]]

    def margin_rates(self, margin: str, x: np.ndarray) -> np.ndarray:
        """Return a new person's rate of a margin at standardized rows `x`, ``(S, rows)``."""
        beta = self._beta(margin)
        out = np.empty((beta.shape[0], len(x)))
        for start in range(0, len(x), _CELL_CHUNK):
            rows = x[start : start + _CELL_CHUNK]
            w = self._slope_columns(rows) if self.slopes else None
            out[:, start : start + len(rows)] = new_person_rates(
                beta @ rows.T, self._scale(margin, w)
            )
        return out

    def metric_draws(self, x: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """Return the metric's draws over rows `x` weighted by their relevant texts, ``(S,)``."""
        weights = np.asarray(weights, dtype=float)
        share = weights / weights.sum()
        if self.margins == (self.metric,):
            return self.margin_rates(self.metric, x) @ share
        pi, recall, spec = (self.margin_rates(m, x) for m in _THREE)
        return _three_margin_metric(self.metric, pi, recall, spec, share)

    def _level(self, confidence_level: float | None) -> float:
        if confidence_level is None:
            return self.confidence_level
        return float(check_confidence_level(confidence_level, scalar=True))

    # ------------------------------------------------------------------ answers

    def coefficients(self, confidence_level: float | None = None) -> pd.DataFrame:
        """Return the coefficients on the logit scale, with their credible intervals.

        Returns
        -------
        pandas.DataFrame
            One row per margin and term (``Intercept``, a numeric column per unit, a
            categorical one's ``name[level]`` against its reference level) and the
            person SD ``sd(person)`` (and ``sd(column | person)`` per random slope):
            ``margin``, ``term``, ``mean``, ``sd``, ``low``, ``high`` (equal-tailed),
            ``rhat``, ``ess_bulk``.
        """
        import pandas as pd
        from arviz_stats.base import array_stats

        level = self._level(confidence_level)
        rows = []
        posterior = self.idata["posterior"]

        def add(margin: str, term: str, draws: np.ndarray) -> None:
            chains = draws.reshape(posterior.sizes["chain"], posterior.sizes["draw"])
            low, high = np.quantile(draws, [0.5 - level / 2, 0.5 + level / 2])
            rows.append(
                {
                    "margin": margin,
                    "term": term,
                    "mean": float(draws.mean()),
                    "sd": float(draws.std(ddof=1)),
                    "low": float(low),
                    "high": float(high),
                    "rhat": float(array_stats.rhat(chains, chain_axis=0, draw_axis=1)),
                    "ess_bulk": float(
                        array_stats.ess(chains, chain_axis=0, draw_axis=1, method="bulk")
                    ),
                }
            )

        for m in self.margins:
            beta = self.design.to_original(self._beta(m))
            for j, term in enumerate(self.design.columns):
                add(m, term, beta[:, j])
            if self.nested:
                add(m, "sd(person)", self._draws(f"{m}_sigma"))
                if self.slopes:
                    tau = self._draws(f"{m}_tau")
                    for k, name in enumerate(self.slopes):
                        # the slope SD of a numeric column per unit of it
                        of = next((t for t in self.design.terms if t.name == name), None)
                        unit = 1.0 if of is None or of.categorical else of.sd
                        add(m, f"sd({name} | person)", tau[:, k] / unit)
        return pd.DataFrame(rows)

    def _sample_rows(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the standardized rows of the sample's relevant texts and their texts."""
        margin = self.margins[0] if len(self.margins) == 1 else "prevalence"
        data = self.data[margin]
        return data["X"], data["trials"]

    def population(self, confidence_level: float | None = None) -> CredibleInterval:
        """Return the metric over the sample's covariate mix, for new persons."""
        x, weights = self._sample_rows()
        draws = self.metric_draws(x, weights)
        return interval_of_draws(self._estimand, draws, "eti", self._level(confidence_level))

    def effects(
        self, term: str | None = None, confidence_level: float | None = None
    ) -> pd.DataFrame:
        """Return the metric's differences between a term's levels, on the metric's scale.

        Each difference sets the term to two values for every relevant text of the sample
        (the other covariates as they are) and compares the metric for new persons: a
        categorical term's level against its reference level, an indicator's (a numeric
        column of 0 and 1) 1 against 0, another numeric one's mean plus one SD against
        its mean.

        Parameters
        ----------
        term : str, optional
            One term (default every term).
        confidence_level : float, optional
            The credible level (default the fit's).

        Returns
        -------
        pandas.DataFrame
            ``term``, ``contrast``, ``estimate`` (posterior median), ``low``, ``high``,
            ``probability_positive`` (the posterior probability of a positive difference).
        """
        import pandas as pd

        level = self._level(confidence_level)
        names = [t.name for t in self.design.terms]
        if term is not None and term not in names:
            raise ValueError(f"`term` must be one of the model's terms {names}; got {term!r}.")
        x, weights = self._sample_rows()
        rows = []
        j = 1
        for t in self.design.terms:
            width = len(t.columns)
            if term is None or t.name == term:
                if t.categorical:
                    base = x.copy()
                    base[:, j : j + width] = 0.0
                    reference = self.metric_draws(base, weights)
                    for k, level_name in enumerate(t.levels[1:]):
                        other = base.copy()
                        other[:, j + k] = 1.0
                        rows.append(
                            self._effect(t.name, f"{level_name} vs {t.levels[0]}",
                                         self.metric_draws(other, weights) - reference, level)
                        )  # fmt: skip
                else:
                    low, high = x.copy(), x.copy()
                    if t.indicator:  # 1 against 0, standardized
                        low[:, j], high[:, j] = -t.mean / t.sd, (1 - t.mean) / t.sd
                        contrast = "1 vs 0"
                    else:  # its mean, and one SD above
                        low[:, j], high[:, j] = 0.0, 1.0
                        contrast = f"+1 SD ({t.sd:.3g})"
                    difference = self.metric_draws(high, weights) - self.metric_draws(low, weights)
                    rows.append(self._effect(t.name, contrast, difference, level))
            j += width
        return pd.DataFrame(
            rows, columns=["term", "contrast", "estimate", "low", "high", "probability_positive"]
        )

    @staticmethod
    def _effect(term: str, contrast: str, draws: np.ndarray, level: float) -> dict[str, Any]:
        low, mid, high = np.quantile(draws, [0.5 - level / 2, 0.5, 0.5 + level / 2])
        return {
            "term": term,
            "contrast": contrast,
            "estimate": float(mid),
            "low": float(low),
            "high": float(high),
            "probability_positive": float(np.mean(draws > 0)),
        }

    def poststratify(
        self,
        target: pd.DataFrame,
        *,
        weight: str | None = "weight",
        persons: str = "new",
        groups: str | None = None,
        confidence_level: float | None = None,
    ) -> CredibleInterval:
        """Return the metric on a target population described by its covariate mix.

        Parameters
        ----------
        target : pandas.DataFrame
            The target's covariate patterns: a column per term and a `weight` column (a
            share or count of the metric's relevant texts in each pattern: the reference
            positives for recall, the texts the classifier codes positive for precision,
            every text for accuracy and the three-margin metrics); or, with ``weight=None``,
            one row per relevant text of the corpus (counted).
        weight : str or None, default "weight"
            The weight column.
        persons : {"new", "these"}, default "new"
            ``"new"``: the target's persons are new persons from the random effects'
            distribution (its credible interval is about the population); ``"these"``:
            they are the sampled persons, named in the `groups` column.
        groups : str, optional
            With ``persons="these"``, the target's column of person ids.
        confidence_level : float, optional
            The credible level (default the fit's).

        Returns
        -------
        CredibleInterval
            Estimand ``"population"`` (new persons; without `groups` the metric's name:
            texts only) or ``"sampled_persons"``.
        """
        import pandas as pd

        level = self._level(confidence_level)
        if not isinstance(target, pd.DataFrame) or target.empty:
            raise ValueError("`target` must be a non-empty DataFrame of covariate patterns.")
        x = self.design.matrix(target.reset_index(drop=True), "`target`")
        if weight is None:
            weights = np.ones(len(target))
        else:
            if weight not in target.columns:
                raise ValueError(
                    f"`target` has no weight column {weight!r} (pass weight=None to count rows)."
                )
            weights = pd.to_numeric(target[weight], errors="coerce").to_numpy(float)
            if not np.all(np.isfinite(weights)) or np.any(weights < 0) or weights.sum() <= 0:
                raise ValueError(
                    f"`target` column {weight!r} must hold non-negative numbers, not all zero."
                )
        registry_persons = ("new", "these")
        if persons not in registry_persons:
            raise ValueError(f"`persons` must be one of {list(registry_persons)}; got {persons!r}.")
        if persons == "new":
            draws = self.metric_draws(x, weights)
            return interval_of_draws(self._estimand, draws, "eti", level)
        if not self.nested or groups is None or groups not in target.columns:
            raise ValueError(
                "`persons='these'` needs a model fit with `groups` and the target's column of "
                "person ids as `groups`."
            )
        index = self._person_index(target[groups].to_numpy(dtype=object))
        draws = self._these_persons_draws(x, weights, index)
        return interval_of_draws("sampled_persons", draws, "eti", level)

    def _person_index(self, ids: np.ndarray) -> np.ndarray:
        assert self.persons is not None
        lookup = {str(p): i for i, p in enumerate(self.persons)}
        unknown = sorted({str(i) for i in ids} - set(lookup))
        if unknown:
            raise ValueError(f"`target` names persons the model was not fit to: {unknown[:5]}.")
        return np.array([lookup[str(i)] for i in ids])

    def _these_persons_draws(
        self, x: np.ndarray, weights: np.ndarray, index: np.ndarray
    ) -> np.ndarray:
        share = weights / weights.sum()

        def rates(m: str) -> np.ndarray:
            eta = self._beta(m) @ x.T
            eta = eta + self._draws(f"{m}_sigma")[:, None] * self._draws(f"{m}_z")[:, index]
            if self.slopes:
                w = self._slope_columns(x)
                v = self._draws(f"{m}_v")[:, index, :]  # (S, C, q)
                eta = eta + np.einsum("cq,sq,scq->sc", w, self._draws(f"{m}_tau"), v)
            return special.expit(eta)

        if self.margins == (self.metric,):
            return rates(self.metric) @ share
        pi, recall, spec = (rates(m) for m in _THREE)
        return _three_margin_metric(self.metric, pi, recall, spec, share)

    def posterior_predictive_check(self, rng: Any = None) -> pd.DataFrame:
        """Compare each person's observed successes with the model's predictions.

        Returns
        -------
        pandas.DataFrame
            Per margin and person: ``successes``, ``trials``, the posterior predictive
            ``predicted`` mean and its 95% ``low``/``high`` ends, and ``outside`` (the
            observed count outside them). ``attrs["p_value"]`` per margin is the
            posterior predictive p-value of the persons' chi-square discrepancy (near 0
            or 1: the model misfits the persons).
        """
        import pandas as pd

        gen = check_rng(rng)
        frames, p_values = [], {}
        for m in self.margins:
            data = self.data[m]
            eta = self._beta(m) @ data["X"].T
            if self.nested:
                eta = (
                    eta
                    + self._draws(f"{m}_sigma")[:, None] * self._draws(f"{m}_z")[:, data["person"]]
                )
                if self.slopes:
                    w = self._slope_columns(data["X"])
                    v = self._draws(f"{m}_v")[:, data["person"], :]
                    eta = eta + np.einsum("cq,sq,scq->sc", w, self._draws(f"{m}_tau"), v)
            p = special.expit(eta)  # (S, rows)
            replicated = gen.binomial(data["trials"].astype(np.int64), p)
            person = data["person"] if self.nested else np.zeros(len(data["trials"]), int)
            units = int(person.max(initial=-1)) + 1
            onehot = (person[:, None] == np.arange(units)).astype(float)
            observed = data["successes"] @ onehot
            trials = data["trials"] @ onehot
            expected = (p * data["trials"]) @ onehot  # (S, units)
            predicted = replicated @ onehot
            variance = np.maximum(expected * (1 - expected / np.maximum(trials, 1)), 1e-9)
            chi_obs = ((observed - expected) ** 2 / variance).sum(-1)
            chi_rep = ((predicted - expected) ** 2 / variance).sum(-1)
            p_values[m] = float(np.mean(chi_rep >= chi_obs))
            low, high = np.quantile(predicted, [0.025, 0.975], axis=0)
            ids = self.persons if self.persons is not None else np.array(["all"])
            frames.append(
                pd.DataFrame(
                    {
                        "margin": m,
                        "person": ids[:units],
                        "successes": observed,
                        "trials": trials,
                        "predicted": predicted.mean(0),
                        "low": low,
                        "high": high,
                        "outside": (observed < low) | (observed > high),
                    }
                )
            )
        out = pd.concat(frames, ignore_index=True)
        out = out[out["trials"] > 0].reset_index(drop=True)
        out.attrs["p_value"] = p_values
        return out

    def plot_effects(self, confidence_level: float | None = None) -> Figure:
        """Draw the forest of :meth:`effects` (the metric's differences, one row each)."""
        level = self._level(confidence_level)
        return plot_effect_table(self.effects(confidence_level=level), self.metric, level)

    @cached_property
    def model(self) -> pm.Model:
        """Return the PyMC model with this fit's data, to extend or sample again."""
        from ..models.performance import performance_model as build

        return build(
            self.data,
            persons=_bucket(0 if self.persons is None else len(self.persons)),
            terms=dict.fromkeys(self.margins, self.design.columns),
            slopes=dict.fromkeys(self.margins, list(self.slopes)) if self.slopes else None,
            prior=self.prior,
            nested=self.nested,
        )


def plot_effect_table(effects: pd.DataFrame, metric: str, confidence_level: float) -> Figure:
    """Draw a forest of effects (:meth:`PerformanceFit.effects`' table) on the metric's scale.

    One row per effect, its posterior median and credible interval; the vertical line is
    no difference.
    """
    from ..plotting import forest

    if effects.empty:
        raise ValueError("the model has no covariate: there is no effect to draw.")
    ax = forest(
        effects["estimate"].to_numpy(float),
        effects["low"].to_numpy(float),
        effects["high"].to_numpy(float),
        labels=[f"{t}: {c}" for t, c in zip(effects["term"], effects["contrast"], strict=True)],
        sort=False,
        interval_label=f"{confidence_level:.0%} credible interval",
        estimate_label="posterior median",
        xlabel=f"difference in {metric} (new persons)",
    )
    ax.axvline(0.0, color="0.4", linewidth=0.8, zorder=0)
    return ax.figure  # type: ignore[return-value]


def _structure(
    margins: Sequence[str], p: int, slopes: Sequence[str], persons: int, nested: bool, prior: Any
) -> dict[str, Any]:
    return {
        "prior": "weakly_informative",
        "margins": tuple(margins),
        "columns": int(p),
        "slopes": len(slopes),
        "persons": int(persons),
        "nested": bool(nested),
        "scales": tuple(sorted(prior.items())),
    }


def _compiled(structure: dict[str, Any], prior: dict[str, float]) -> Any:
    """Return the nutpie model of this structure, from the compile cache or compiled."""
    from .compile_cache import compiled_model

    margins, p, q = structure["margins"], structure["columns"], structure["slopes"]

    def build() -> Any:
        from ..models.performance import performance_model as builder

        dummy = {
            "successes": np.zeros(2),
            "trials": np.ones(2),
            "X": np.ones((2, p)),
            "person": np.zeros(2, dtype=np.int64),
            "W": np.ones((2, q)),
        }
        return builder(
            dict.fromkeys(margins, dummy),
            persons=structure["persons"],
            terms=dict.fromkeys(margins, [f"x{j}" for j in range(p)]),
            slopes=dict.fromkeys(margins, [f"w{k}" for k in range(q)]) if q else None,
            prior=prior,
            nested=structure["nested"],
        )

    return compiled_model("performance", structure, build, source="performance")


def performance_model(
    y_true: Any,
    y_pred: Any,
    metric: str,
    *,
    groups: Any = None,
    covariates: pd.DataFrame | None = None,
    formula: str | None = None,
    random_slopes: Sequence[str] | None = None,
    prior: dict[str, float] | None = None,
    sampler: str = "auto",
    draws: int = 2000,
    tune: int = 1000,
    chains: int = 4,
    positive: Any = None,
    confidence_level: float = 0.95,
    rng: Any = None,
) -> PerformanceFit:
    """Fit a hierarchical logistic model of a metric's per-text success on covariates.

    Parameters
    ----------
    y_true, y_pred : array_like
        Reference and classifier labels, one per text.
    metric : str
        A binary metric: recall, specificity, precision, npv and accuracy are one margin;
        the others are made of prevalence, recall and specificity (module notes).
    groups : array_like, optional
        Person ids, one per text: a random intercept per person.
    covariates : pandas.DataFrame, optional
        One row per text: the covariates (person-level ones constant within a person).
        Numeric columns are numeric terms, text columns categorical ones.
    formula : str, optional
        The terms, ``"a + b + C(c)"`` (default every column of `covariates`).
    random_slopes : sequence of str, optional
        Design columns (a numeric term's name, or ``name[level]``) with a random slope
        per person (needs `groups`).
    prior : dict, optional
        Overrides of the prior scales (:data:`perfci.models.performance.PRIOR_SCALES`).
    sampler : {"auto", "nutpie", "pymc"}, default "auto"
        ``"auto"`` is nutpie (compiled once per model structure, cached on disk).
    draws, tune, chains : int
        MCMC settings (2,000 draws: the person SD's funnel left 8-17% of atlas-performance's
        fits with 1,000 draws below a bulk ESS of 400).
    positive : object, optional
        The positive label.
    confidence_level : float, default 0.95
        The default level of the fit's intervals.
    rng : seed or numpy.random.Generator, optional
        The sampler's seed.

    Returns
    -------
    PerformanceFit
        With :meth:`~PerformanceFit.coefficients`, :meth:`~PerformanceFit.effects`,
        :meth:`~PerformanceFit.poststratify`, :meth:`~PerformanceFit.population`, a
        posterior predictive check, ``.idata`` and ``.model``.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> fit = pc.bayes.performance_model(texts["human"], texts["model"], "recall",
    ...                                  groups=texts["person"], covariates=texts[["site"]],
    ...                                  rng=1)
    >>> list(fit.coefficients()["term"])
    ['Intercept', 'site[clinic_b]', 'sd(person)']
    >>> list(fit.effects("site")["contrast"])
    ['clinic_b vs clinic_a']
    """
    import pandas as pd

    from ..counting import normalize_labels

    registry.BINARY_METRIC.check(metric)
    if sampler not in ("auto", "nutpie", "pymc"):
        raise ValueError(f"`sampler` must be one of ['auto', 'nutpie', 'pymc']; got {sampler!r}.")
    for name, value in (("draws", draws), ("tune", tune), ("chains", chains)):
        check_positive_int(name, value)
    level = float(check_confidence_level(confidence_level, scalar=True))
    labels = normalize_labels(
        {"y_true": y_true, "y_pred": y_pred},
        positive=positive,
        names={"y_true": "`y_true`", "y_pred": "`y_pred`"},
    )
    truth = np.asarray(labels.values["y_true"] == labels.positive)
    pred = np.asarray(labels.values["y_pred"] == labels.positive)
    n = truth.size
    if covariates is None:
        if formula is not None:
            raise ValueError("`formula` names columns of `covariates`: give `covariates`.")
        table = pd.DataFrame(index=range(n))
    else:
        if not isinstance(covariates, pd.DataFrame):
            raise ValueError("`covariates` must be a DataFrame, one row per text.")
        if len(covariates) != n:
            raise ValueError(
                f"`covariates` must have one row per text of `y_true` ({n}); got {len(covariates)}."
            )
        table = covariates.reset_index(drop=True)
    design = design_of(table, formula, [] if covariates is None else None)
    x = design.matrix(table)
    if groups is not None:
        ids, person = factorize_sorted(as_label_array("groups", groups))
        if person.shape != (n,):
            raise ValueError(f"`groups` must hold one person id per text of `y_true` ({n}).")
        nested = True
    else:
        ids, person, nested = None, np.zeros(n, dtype=np.int64), False
    slopes = tuple(random_slopes or ())
    for s in slopes:
        if s not in design.columns[1:]:
            raise ValueError(
                f"`random_slopes` must name columns of the design {design.columns[1:]}; got {s!r}."
            )
    if slopes and not nested:
        raise ValueError("`random_slopes` are per person: give `groups`.")
    scales = {**_prior_scales(), **(prior or {})}
    margins = margins_of(metric)
    data: dict[str, dict[str, np.ndarray]] = {}
    for m in margins:
        mask, success = _margin_texts(m, truth, pred)
        if not mask.any():
            raise ValueError(f"no text is relevant to the {m} margin of {metric}: nothing to fit.")
        rows, who, hits, trials = patterns(x[mask], person[mask], success)
        data[m] = {"X": rows, "person": who, "successes": hits, "trials": trials}
        if slopes:
            data[m]["W"] = rows[:, [design.columns.index(s) for s in slopes]]
    persons = _bucket(0 if ids is None else len(ids))
    structure = _structure(margins, len(design.columns), slopes, persons, nested, scales)
    seed = int(check_rng(rng).integers(2**31 - 1))
    chosen = "nutpie" if sampler == "auto" else sampler
    if chosen == "nutpie":
        given = {f"{m}_{key}": value for m, d in data.items() for key, value in d.items()}
        if not nested:
            given = {k: v for k, v in given.items() if not k.endswith("_person")}
        compiled = _compiled(structure, scales).with_data(**given)
        trace = run_mcmc("nutpie", compiled, draws, tune, chains, seed)
    else:
        from ..models.performance import performance_model as build

        model = build(
            data,
            persons=persons,
            terms=dict.fromkeys(margins, design.columns),
            slopes=dict.fromkeys(margins, list(slopes)) if slopes else None,
            prior=scales,
            nested=nested,
        )
        trace = run_mcmc("pymc", model, draws, tune, chains, seed)
    names = [f"{m}_beta" for m in margins] + ([f"{m}_sigma" for m in margins] if nested else [])
    diag, reasons = diagnostics(trace, names)
    return PerformanceFit(
        metric=metric,
        margins=margins,
        design=design,
        slopes=slopes,
        idata=trace,
        diagnostics=diag,
        flagged=bool(reasons),
        reasons=reasons,
        persons=None if ids is None else np.asarray(ids, dtype=object),
        confidence_level=level,
        sampler=chosen,
        data=data,
        prior=scales,
    )


def _prior_scales() -> dict[str, float]:
    from ..models.performance import PRIOR_SCALES

    return dict(PRIOR_SCALES)
