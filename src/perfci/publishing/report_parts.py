"""The parts of a validation report that are computed, not drawn: seeds, versions, data.

:func:`perfci.validation_report` builds its :class:`~perfci.publishing.report.ValidationReport`
from these: the words for how the draws were seeded (:func:`seed_words`,
:func:`seed_clause`), the versions of the libraries (:func:`library_versions`), the data
summary and the sample design (:func:`data_summary`, :func:`design_summary`), each
person's rate (:func:`person_rate_table`) and the paired comparison of two classifiers
(:func:`paired_comparisons`).
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import __version__, policy
from .tables import ANALYTIC, parse_label

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..auc_comparison import RocAucComparison
    from ..paired import Comparison

__all__ = [
    "data_summary",
    "design_summary",
    "library_versions",
    "paired_comparisons",
    "person_rate_table",
    "seed_clause",
    "seed_words",
]


def seed_words(rng: Any) -> str:
    """Say how the random draws were seeded, from the `rng` the caller passed."""
    if rng is None:
        return "no seed"
    if isinstance(rng, int | np.integer):
        return f"seed {int(rng)}"
    if isinstance(rng, np.random.SeedSequence):
        return f"seed sequence entropy {rng.entropy}"
    if isinstance(rng, np.random.Generator | np.random.BitGenerator):
        return "a random generator passed by the analyst"
    return f"seed {np.asarray(rng).ravel().tolist()}"


def seed_clause(seed: str) -> str:
    """Return the methods paragraph's clause on the seed."""
    if seed == "no seed":
        return "no seed was set, so a rerun draws other random resamples"
    if seed.startswith("a random generator"):
        return "the random draws came from a generator passed by the analyst (no seed recorded)"
    return f"the random draws used {seed}"


def library_versions(mcmc: str | None) -> dict[str, str]:
    """Return perfci's version and those of the libraries its results depend on."""
    shown = {"numpy": "NumPy", "scipy": "SciPy", "pandas": "pandas", "matplotlib": "matplotlib"}
    if mcmc is not None:
        shown |= {"pymc": "PyMC", mcmc: mcmc} if mcmc != "pymc" else {"pymc": "PyMC"}
    out = {"perfci": __version__}
    for package, name in shown.items():
        try:
            out[name] = metadata.version(package)
        except metadata.PackageNotFoundError:  # pragma: no cover - a broken install
            out[name] = "unknown"
    return out


def data_summary(counts: Any) -> dict[str, Any]:
    """Return the texts, persons and positives of :func:`perfci.confusion`'s counts."""
    nested = counts.groups is not None
    if counts.classes is None:
        cells = np.asarray(counts.counts)
        per_person = cells.sum(-1) if nested else None
        total = cells.sum(0) if nested else cells
        labels = {
            "positive": counts.positive.item()
            if isinstance(counts.positive, np.generic)
            else counts.positive,
            "reference_positives": int(total[0] + total[2]),
            "classifier_positives": int(total[0] + total[1]),
            "classes": None,
        }
    else:
        per_person = np.asarray(counts.matrix).sum((-2, -1)) if nested else None
        labels = {
            "positive": None,
            "reference_positives": None,
            "classifier_positives": None,
            "classes": [c.item() if isinstance(c, np.generic) else c for c in counts.classes],
        }
    sizes = None if per_person is None else per_person[per_person > 0]
    return {
        "texts": counts.n_texts,
        "persons": None if sizes is None else int(sizes.size),
        "texts_per_person": None
        if sizes is None
        else (int(sizes.min()), float(np.median(sizes)), int(sizes.max())),
        **labels,
    }


def design_summary(
    y_true: Any, y_pred: Any, positive: Any, groups: Any, design_args: dict[str, Any]
) -> dict[str, Any]:
    """Return the sample design's description and the corpus texts the weights stand for."""
    from ..sample_design import design_cells
    from ..weighted_tables import design_given

    if not design_given(**design_args):
        return {"design": None, "corpus_texts": None, "clustered": False, "design_inputs": ()}
    cells = design_cells(y_true, y_pred, positive=positive, groups=groups, **design_args)
    return {
        "design": cells.description,
        "corpus_texts": float(cells.weighted.sum()),
        "clustered": cells.clustered,
        "design_inputs": tuple(k for k, v in design_args.items() if v is not None),
    }


def person_rate_table(
    counts: Any, metric: str, label: str, level: float
) -> tuple[pd.DataFrame, str]:
    """Return each person's rate of `metric`, with the analytic interval of its row."""
    import pandas as pd

    from ..analytic import proportion_ci
    from ..metrics import proportion_counts

    name, _ = parse_label(label)
    method = name if name in ANALYTIC else policy.PROPORTION_METHOD
    x, n = proportion_counts(counts.counts, metric)
    keep = n > 0
    ci = proportion_ci(x[keep], n[keep], method=method, confidence_level=level)
    rates = pd.DataFrame(
        {
            "person": counts.groups[keep],
            "successes": x[keep],
            "trials": n[keep],
            "estimate": np.asarray(ci.estimate, dtype=float),
            "low": np.asarray(ci.low, dtype=float),
            "high": np.asarray(ci.high, dtype=float),
        }
    )
    return rates, method


def paired_comparisons(
    y_true: Any,
    y_pred: Any,
    pred_b: Any,
    groups: Any,
    metrics: Sequence[str],
    positive: Any,
    level: float,
    generator: np.random.Generator,
    design_args: dict[str, Any],
) -> tuple[pd.DataFrame, list[str]]:
    """Compare two classifiers by :func:`perfci.compare`, one child stream per metric."""
    import pandas as pd

    from ..comparison import compare

    rows, left_out = [], []
    for metric, child in zip(metrics, generator.spawn(len(metrics)), strict=True):
        try:
            result = compare(
                y_true,
                y_pred,
                pred_b,
                metric,
                groups=groups,
                positive=positive,
                confidence_level=level,
                rng=child,
                **design_args,
            )
        except ValueError as exc:  # undefined for one of them; the others still compare
            left_out.append(f"the comparison of {metric} was left out: {str(exc).rstrip('.')}")
            continue
        result = cast(
            "Comparison | RocAucComparison", result
        )  # labels of one run each: a paired comparison
        rows.append(
            {
                "metric": metric,
                "estimate_a": float(result.estimate_a),
                "estimate_b": float(result.estimate_b),
                "difference": float(result.difference),
                "low": float(result.low),
                "high": float(result.high),
                "method": result.method,
                "test": result.test,
                "p_value": float(result.p_value),
                "n_texts": int(result.n_texts),
                "persons": result.persons,
            }
        )
    columns = ["metric", "estimate_a", "estimate_b", "difference", "low", "high", "method"]
    return pd.DataFrame(rows, columns=[*columns, "test", "p_value", "n_texts", "persons"]), left_out
