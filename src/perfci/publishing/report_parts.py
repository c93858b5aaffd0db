"""The parts of a validation report that are computed, not drawn: seeds, versions, data.

:func:`perfci.validation_report` builds its :class:`~perfci.publishing.report.ValidationReport`
from these: the words for how the draws were seeded (:func:`seed_words`,
:func:`seed_clause`), the versions of the libraries (:func:`library_versions`), the data
summary and the sample design (:func:`data_summary`, :func:`design_summary`), each
person's rate (:func:`person_rate_table`) and the paired comparison of two classifiers
(:func:`paired_comparisons`), and the confusion matrices (:func:`confusion_matrices`,
:func:`matrix_of`).
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
    "binary_labels",
    "confusion_matrices",
    "data_summary",
    "design_summary",
    "library_versions",
    "matrix_of",
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


def binary_labels(classes: Any, positive: Any) -> tuple[str, str]:
    """Return the names of the rows of a binary confusion matrix: positive, then negative."""
    shown = [c.item() if isinstance(c, np.generic) else c for c in np.asarray(classes).ravel()]
    others = [c for c in shown if c != positive]
    name = positive.item() if isinstance(positive, np.generic) else positive
    return str(name), str(others[0]) if len(others) == 1 else f"not {name}"


def matrix_of(
    counts: Any, labels: Sequence[str], reference: str, classifier: str
) -> dict[str, Any]:
    """Return one confusion matrix of :func:`perfci.confusion`'s counts, summed over persons.

    Rows are the reference's labels, columns the classifier's; a binary matrix is
    ``[[tp, fn], [fp, tn]]`` under the labels (positive, negative).
    """
    binary = counts.classes is None
    if binary:
        tp, fp, fn, tn = (int(v) for v in np.asarray(counts.counts).reshape(-1, 4).sum(0))
        matrix = [[tp, fn], [fp, tn]]
    else:
        cells = np.asarray(counts.matrix)
        cells = cells.reshape(-1, *cells.shape[-2:]).sum(0)
        matrix = cells.astype(int).tolist()
    return {
        "reference": reference,
        "classifier": classifier,
        "labels": [str(label) for label in labels],
        "binary": binary,
        "matrix": matrix,
    }


def confusion_matrices(
    counts: Any, y_true: Any, y_pred: Any, positive: Any, names: dict[str, str]
) -> tuple[dict[str, Any], ...]:
    """Return the confusion matrix of the report's counts, with the labels' names.

    `counts` are :func:`perfci.confusion`'s of `y_true` and `y_pred`; the labels are read
    once more by :func:`perfci.counting.normalize_labels` only for their names.
    """
    from ..counting import normalize_labels

    if counts.classes is not None:
        labels = [str(c.item() if isinstance(c, np.generic) else c) for c in counts.classes]
    else:
        given = normalize_labels({"y_true": y_true, "y_pred": y_pred}, positive=positive)
        labels = list(binary_labels(given.classes, counts.positive))
    return (matrix_of(counts, labels, names["y_true"], names["y_pred"]),)


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
