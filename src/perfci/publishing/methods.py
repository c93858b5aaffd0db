"""The methods paragraph of a report, written from the methods its rows name.

:func:`methods_paragraph` reads the ``method`` labels of a table of :func:`perfci.report`
(and of :func:`perfci.compare`'s results), and puts each in words with its references:
the interval, the design and degrees-of-freedom adjustment, the bootstrap's scheme,
resamples and pseudo count, the estimand and the sources of variation, the Bayesian
model, the level, the versions and the seed. A label it has no words for is quoted as
it is, so the paragraph never says more than was done.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import policy
from .._core import registry
from .tables import ANALYTIC, all_texts, is_bayes, level_text, parse_label, prior_of, split

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["REFERENCES", "Choices", "methods_paragraph"]

#: The references a methods paragraph may cite, keyed by a short name; each is the text
#: of the same reference on perfci's documentation pages (docs/methods.md, docs/bayes.md,
#: docs/scores.md) or in the docstring of the function that implements the method.
REFERENCES: dict[str, str] = {
    "agresti": (
        'Agresti, A. and Coull, B. A. (1998). Approximate is better than "exact" for '
        "interval estimation of binomial proportions. The American Statistician, 52(2), "
        "119–126."
    ),
    "anglin": (
        "Anglin, K. Estimating Uncertainty in Classifier Performance with Applications to "
        "Large Language Models and Nested Data. arXiv:2606.26422."
    ),
    "brown": (
        "Brown, L. D., Cai, T. T. and DasGupta, A. (2001). Interval estimation for a "
        "binomial proportion. Statistical Science, 16(2), 101–133."
    ),
    "clopper": (
        "Clopper, C. J. and Pearson, E. S. (1934). The use of confidence or fiducial limits "
        "illustrated in the case of the binomial. Biometrika, 26(4), 404–413."
    ),
    "dean": (
        "Dean, N. and Pagano, M. (2015). Evaluating confidence interval methods for "
        "binomial proportions in clustered surveys. Journal of Survey Statistics and "
        "Methodology, 3(4), 484–503."
    ),
    "efron": (
        "Efron, B. and Tibshirani, R. J. (1993). An Introduction to the Bootstrap. "
        "Monographs on Statistics and Applied Probability 57. New York: Chapman & Hall."
    ),
    "eldridge": (
        "Eldridge, S. M., Ashby, D. and Kerry, S. (2006). Sample size for cluster randomized "
        "trials: effect of coefficient of variation of cluster size and analysis method. "
        "International Journal of Epidemiology, 35(5), 1292–1300."
    ),
    "field": (
        "Field, C. A. and Welsh, A. H. (2007). Bootstrapping clustered data. Journal of the "
        "Royal Statistical Society: Series B (Statistical Methodology), 69(3), 369–390."
    ),
    "kish": "Kish, L. (1965). Survey Sampling. New York: Wiley.",
    "korn": (
        "Korn, E. L. and Graubard, B. I. (1998). Confidence intervals for proportions with "
        "small expected number of positive counts estimated from survey data. Survey "
        "Methodology, 24, 193–201."
    ),
    "lumley": (
        "Lumley, T. (2004). Analysis of complex survey samples. Journal of Statistical "
        "Software, 9(1), 1–19."
    ),
    "saravanan": (
        "Saravanan, V., Berman, G. J. and Sober, S. J. (2020). Application of the "
        "hierarchical bootstrap to multi-level data in neuroscience. Neurons, Behavior, "
        "Data analysis, and Theory, 3(5)."
    ),
    "wilson": (
        "Wilson, E. B. (1927). Probable inference, the law of succession, and statistical "
        "inference. Journal of the American Statistical Association, 22(158), 209–212."
    ),
    "newcombe": (
        "Newcombe, R. G. (1998). Interval estimation for the difference between independent "
        "proportions: comparison of eleven methods. Statistics in Medicine 17(8), 873-890."
    ),
    "newcombe_paired": (
        "Newcombe, R. G. (1998). Improved confidence intervals for the difference between "
        "binomial proportions based on paired data. Statistics in Medicine 17(22), "
        "2635-2650."
    ),
    "durkalski": (
        "Durkalski, V. L., Palesch, Y. Y., Lipsitz, S. R. and Rust, P. F. (2003). Analysis "
        "of clustered matched-pair data. Statistics in Medicine 22(15), 2417-2428."
    ),
    "mcnemar": (
        "McNemar, Q. (1947). Note on the sampling error of the difference between "
        "correlated proportions or percentages. Psychometrika 12(2), 153-157."
    ),
    "delong": (
        "DeLong, E. R., DeLong, D. M. and Clarke-Pearson, D. L. (1988). Comparing the areas "
        "under two or more correlated receiver operating characteristic curves: a "
        "nonparametric approach. Biometrics 44(3), 837-845."
    ),
    "obuchowski": (
        "Obuchowski, N. A. (1997). Nonparametric analysis of clustered ROC curve data. "
        "Biometrics 53(2), 567-578."
    ),
    "bda3": (
        "Gelman, A., Carlin, J. B., Stern, H. S., Dunson, D. B., Vehtari, A. and Rubin, "
        "D. B. (2013). Bayesian Data Analysis, 3rd ed. Boca Raton: CRC Press."
    ),
    "carpenter": (
        "Carpenter, B. (2016). Hierarchical partial pooling for repeated binary trials. "
        "Stan case study."
    ),
    "vehtari": (
        "Vehtari, A., Gelman, A., Simpson, D., Carpenter, B. and Bürkner, P.-C. (2021). "
        "Rank-normalization, folding, and localization: an improved R-hat for assessing "
        "convergence of MCMC. Bayesian Analysis, 16(2), 667–718."
    ),
}


class _Citations:
    """Numbers references in the order a text first cites them."""

    def __init__(self) -> None:
        self.order: list[str] = []

    def __call__(self, *keys: str) -> str:
        numbers = []
        for key in keys:
            if key not in self.order:
                self.order.append(key)
            numbers.append(self.order.index(key) + 1)
        return "[" + ", ".join(str(n) for n in sorted(set(numbers))) + "]"

    def keyword(self, text: str, found: Mapping[str, str]) -> str:
        """Cite the references whose keyword (``found``'s keys) `text` contains."""
        keys = [key for word, key in found.items() if word in text]
        return f" {self(*keys)}" if keys else ""

    @property
    def references(self) -> tuple[str, ...]:
        """The cited references, numbered in the order cited."""
        return tuple(f"[{i + 1}] {REFERENCES[key]}" for i, key in enumerate(self.order))


def _listing(items: Iterable[Any]) -> str:
    """Join items as ``a``, ``a and b``, ``a, b and c``: each once, in order."""
    names = list(dict.fromkeys(str(i) for i in items))
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


_DESIGN_TEXT = {
    "icc": (
        "the one-way ANOVA intra-class correlation (ICC) of the metric's outcomes within "
        "persons and Kish's design effect DEFF = 1 + ICC (B − 1), B the mean number of "
        "relevant texts per person",
        ("kish", "anglin"),
    ),
    "icc_weighted": (
        "the one-way ANOVA intra-class correlation (ICC) of the metric's outcomes within "
        "persons and Kish's design effect DEFF = 1 + ICC (B_w − 1), with the size-weighted "
        "number of relevant texts per person B_w = Σ n_i² / N",
        ("kish", "eldridge"),
    ),
    "cluster_robust": (
        "the design effect of the cluster-robust (linearization) variance of the ratio "
        "estimator, as R's survey package computes it for a one-stage cluster sample",
        ("lumley",),
    ),
    "persons": (
        "the worst-case design effect of an ICC of 1 (each person counts once, "
        "n_eff = (Σ n_i)² / Σ n_i²), which perfci uses where the data cannot show how much "
        "persons differ",
        (),
    ),
}
_DF_TEXT = {
    "dean_pagano": (
        "Dean and Pagano's degrees-of-freedom adjustment n_eff (z / t_(m−1))² for m persons",
        ("dean",),
    ),
    "korn_graubard": (
        "Korn and Graubard's degrees-of-freedom adjustment n_eff (t_(N−1) / t_(m−1))² for "
        "N texts and m persons",
        ("korn",),
    ),
}
_SCHEME_TEXT = {
    "iid": ("texts drawn independently", ()),
    "cluster": ("persons drawn with replacement, each with all their texts", ("field",)),
    "hierarchical": (
        "persons drawn with replacement and then texts drawn within each drawn person",
        ("field", "saravanan"),
    ),
}
#: Keywords of method labels without options, and the references they cite.
_KEYWORDS = {
    "DeLong": "delong",
    "Obuchowski": "obuchowski",
    "jackknife": "efron",
    "bootstrap": "efron",
    "cluster-robust": "lumley",
    "Newcombe": "newcombe",
}
_PAIRED_KEYWORDS = {
    "Newcombe": "newcombe_paired",
    "bootstrap": "efron",
    "cluster-robust": "lumley",
    "Dean-Pagano": "dean",
    "McNemar": "mcnemar",
    "Durkalski": "durkalski",
    "design-based": "lumley",
    "DeLong": "delong",
    "Obuchowski": "obuchowski",
}


#: The design-based intervals of a weighted or stratified sample, in words.
_WEIGHTED_TEXT = {
    "poststratified": (
        "built from the posterior of the corpus metric under a Dirichlet-multinomial model of "
        "each stratum, poststratified by the stratum sizes, each end from the posterior of a "
        "prior that puts one text in the stratum's cell that moves the metric toward that "
        "end (Clopper and Pearson's construction carried to strata), which covered at "
        "least 0.94 in perfci's simulations of samples stratified by prediction",
        ("clopper",),
    ),
    "logit": (
        "the logit-scale interval of the design-based estimate, with its Taylor-linearized "
        "variance and the design's degrees of freedom",
        ("lumley",),
    ),
    "beta": (
        "Korn and Graubard's interval at the design's effective sample size",
        ("korn", "lumley"),
    ),
    "wald": (
        "the Wald interval of the design-based estimate, with its Taylor-linearized variance "
        "and the design's degrees of freedom",
        ("lumley",),
    ),
    "regularized_logit": (
        "the logit-scale interval of the design-based estimate, its linearized variance "
        "regularized by half a pseudo text in each cell a stratum can hold",
        ("lumley",),
    ),
}


def _weighted_sentence(label: str, rows: pd.DataFrame, cite: _Citations) -> str | None:
    """Return the sentence of a design-based row's label, or None for another label."""
    found = re.match(r"^(\w+) \(weighted: (.*)\)$", label)
    if found is None or found.group(1) not in _WEIGHTED_TEXT:
        return None
    text, refs = _WEIGHTED_TEXT[found.group(1)]
    metrics = _listing(rows["metric"])
    several = rows["metric"].nunique() > 1
    return (
        f"For {metrics} the {'intervals are' if several else 'interval is'} {text} {cite(*refs)}."
    )


@dataclass(frozen=True)
class Choices:
    """What the methods paragraph says about how the report was asked for.

    Attributes
    ----------
    n_resamples : int
        The bootstrap resamples of the report's rows.
    seed : str
        How the random draws were seeded, as a clause.
    given : tuple of str
        The options the analyst set instead of leaving them to the policy.
    bayes_sampler : str or None
        The MCMC sampler of the Bayesian rows (None without Bayesian rows or when no row
        was sampled by MCMC).
    """

    n_resamples: int
    seed: str
    given: tuple[str, ...]
    bayes_sampler: str | None


def _proportion_sentence(
    name: str, options: Mapping[str, str], rows: pd.DataFrame, nested: bool, cite: _Citations
) -> str:
    readable, refs = ANALYTIC[name]
    metrics = _listing(rows["metric"])
    design = options.get("design", "None")
    several = rows["metric"].nunique() > 1
    head = (
        f"For {metrics} ({'proportions' if several else 'a proportion'}) the "
        f"{'intervals are' if several else 'interval is the'} {readable} "
        f"{'intervals' if several else 'interval'} {cite(*refs)}"
    )
    if design == "None":
        one_each = nested and bool((rows["persons"] == rows["relevant_n"]).all())
        if one_each:
            return (
                head + " on the pooled counts: each person has at most one relevant text, so "
                "the texts are a simple random sample."
            )
        return head + (" on the pooled counts, without a design adjustment." if nested else ".")
    text, design_refs = _DESIGN_TEXT.get(design, (f"the design adjustment {design}", ()))
    sentence = (
        head + " on the effective sample size n_eff = N / DEFF of the nested design, with "
        f"{text}{' ' + cite(*design_refs) if design_refs else ''}"
    )
    df_adjust = options.get("df_adjust", "None")
    if df_adjust in _DF_TEXT:
        df_text, df_refs = _DF_TEXT[df_adjust]
        sentence += f", and {df_text} {cite(*df_refs)}"
    else:
        sentence += ", without a degrees-of-freedom adjustment"
    if design == policy.NESTED_DESIGN == "icc_weighted":
        sentence += (
            "; perfci uses B_w rather than the paper's mean number of texts per person, which "
            "under-states the design effect when persons contribute unequal numbers of texts"
        )
    return sentence + "."


def _bootstrap_sentence(
    options: Mapping[str, str], rows: pd.DataFrame, choices: Choices, cite: _Citations
) -> str:
    metrics = _listing(rows["metric"])
    proportions = set(rows["metric"]) & set(registry.PROPORTION_METRIC.names)
    interval = (
        "bias-corrected and accelerated (BCa) bootstrap intervals"
        if options.get("interval") == "bca"
        else "percentile bootstrap intervals"
    )
    several = rows["metric"].nunique() > 1
    if not several:
        interval = "the " + interval.replace("intervals", "interval")
    not_proportions = (
        ", which are not single proportions," if several else ", which is not a single proportion,"
    )
    sentence = (
        f"For {metrics}{'' if proportions else not_proportions} the "
        f"{'intervals are' if several else 'interval is'} {interval} {cite('efron')} from "
        f"{choices.n_resamples:,} resamples of the confusion-matrix counts"
    )
    pseudo = options.get("pseudo_count", "0")
    if pseudo not in ("0", "None"):
        sentence += (
            f", with a pseudo count of λ = {pseudo} added to each cell before resampling "
            f"{cite('anglin')}"
        )
    scheme = options.get("scheme", "")
    text, refs = _SCHEME_TEXT.get(scheme, (f"the {scheme} scheme", ()))
    sentence += f", {text}{' ' + cite(*refs) if refs else ''}"
    if scheme == "hierarchical":
        sentence += (
            "; perfci uses the hierarchical rather than the paper's cluster bootstrap, which "
            "under-covered in its simulations of per-person confusion matrices with rare "
            "positives and unequal numbers of texts"
        )
    return sentence + "."


def _bayes_sentence(label: str, rows: pd.DataFrame, nested: bool, cite: _Citations) -> str:
    metrics = _listing(rows["metric"])
    sampler = label.rsplit("(", 1)[-1].split(",")[0].strip() if "(" in label else ""
    fitted = {
        "grid": "computed exactly by two-dimensional quadrature",
        "nutpie": "sampled by MCMC with nutpie",
        "pymc": "sampled by MCMC with PyMC's NUTS sampler",
    }.get(sampler, f"computed with {sampler}")
    if sampler in ("nutpie", "pymc"):
        fitted += f" and checked by R-hat, effective sample sizes and divergences {cite('vehtari')}"
    other = prior_of(label)
    if label.startswith("bayes beta-binomial, population") and other:
        help_ = registry.PRIOR.help_of(other).replace("kappa", "κ")
        return (
            f"for {metrics}, the same model under the alternative prior {help_}, as a check "
            f"of the prior's influence, its posterior {fitted}"
        )
    if label.startswith("bayes beta-binomial, population"):
        from ..bayes import fit_proportion_counts

        # the prior report(bayes=True) fits with: the fit's default
        default = inspect.signature(fit_proportion_counts).parameters["prior"].default
        prior = registry.PRIOR.help_of(default).replace("kappa", "κ")
        return (
            f"for {metrics}, the text-weighted rate of the population of persons (the quantity "
            "the frequentist interval is about) under a hierarchical beta-binomial model, "
            f"person rates Beta(μκ, (1 − μ)κ) with μ ~ Beta(1, 1) and {prior} "
            f"{cite('bda3', 'carpenter')}, its posterior {fitted}"
        )
    if label.startswith("bayes hierarchical margins, population"):
        return (
            f"for {metrics}, the metric of the text-weighted pooled cells of the population of "
            "persons under a hierarchical model of the confusion matrix by margins (each "
            "person's prevalence, recall and specificity a hierarchical beta-binomial with its "
            "own mean μ ~ Beta(1, 1) and concentration κ), its posterior computed exactly by "
            "two-dimensional quadrature of each margin"
        )
    confusion = re.match(r"bayes (\w+) prior, (closed form|draws)", label)
    if confusion:
        name, how = confusion.groups()
        help_ = registry.CONFUSION_PRIOR.help_of(name) if name in registry.CONFUSION_PRIOR else name
        exact = "in closed form" if how == "closed form" else "from independent posterior draws"
        return (
            f"for {metrics}, the exact posterior of the confusion-matrix cells under the "
            f"{name} prior ({help_}), its interval {exact}"
        )
    return f"for {metrics}, {label}"


def methods_paragraph(
    table: pd.DataFrame,
    comparisons: pd.DataFrame | None,
    summary: Mapping[str, Any],
    names: Mapping[str, str],
    confidence_level: float,
    choices: Choices,
    versions: Mapping[str, str],
) -> tuple[str, tuple[str, ...]]:
    """Write the methods paragraph of a report from the methods its rows name.

    :class:`perfci.ValidationReport` calls it; it is here for a paragraph of one's own.

    Parameters
    ----------
    table : pandas.DataFrame
        A table of :func:`perfci.report`; every row's ``method`` label is put in words.
    comparisons : pandas.DataFrame or None
        The table of a paired comparison (:func:`perfci.compare`), if any.
    summary : mapping
        ``texts``, ``persons`` and ``texts_per_person`` of the data (None where there
        are no persons).
    names : mapping
        The input names the paragraph quotes, e.g. ``{"y_true": "human"}``.
    confidence_level : float
        The level of the intervals.
    choices : Choices
        Resamples, seed, the options set by hand, and the MCMC sampler.
    versions : mapping
        Package versions to cite (``{"perfci": "0.1"}``).

    Returns
    -------
    paragraph : str
        The paragraph, with numbered citations ``[1]``.
    references : tuple of str
        The references cited, in the order of their numbers (:data:`REFERENCES`).

    Examples
    --------
    >>> import perfci as pc
    >>> from perfci.publishing.methods import Choices, methods_paragraph
    >>> texts = pc.load_example()
    >>> table = pc.report(texts["human"], texts["model"], metrics=["recall"])
    >>> text, references = methods_paragraph(
    ...     table, None, {"texts": 1069, "persons": None, "texts_per_person": None},
    ...     {"y_true": "human", "y_pred": "model"}, 0.95,
    ...     Choices(2000, "no seed was set", (), None), {"perfci": "0.1"},
    ... )
    >>> "Agresti-Coull" in text and len(references) > 0
    True
    """
    cite = _Citations()
    level = level_text(confidence_level)
    _, differences = split(table)
    main = all_texts(table)
    bayesian = main["method"].map(is_bayes).astype(bool)
    frequentist, bayes_rows = main[~bayesian], main[bayesian]
    nested = summary["persons"] is not None
    truth, pred = names["y_true"], names["y_pred"]
    weighted = summary.get("design") is not None
    sentences = [
        f"We compared the labels of the classifier ({pred}) with the reference labels "
        f"({truth}) on {summary['texts']:,} texts"
        + (
            f" from {summary['persons']:,} persons ({names['groups']}; "
            f"{summary['texts_per_person'][0]:,} to {summary['texts_per_person'][2]:,} texts "
            "each)"
            if nested
            else ""
        )
        + "."
    ]
    if weighted:
        sentences.append(
            f"The texts are a weighted sample ({summary['design']}): every estimate is a "
            "ratio of totals weighted by the inverse of each text's inclusion probability, "
            f"which stand for {summary['corpus_texts']:,.0f} corpus texts, and every "
            f"interval is design-based {cite('lumley')}."
        )
    if frequentist.empty:
        sentences.append(
            "No interval could be computed: every metric was left out of the report (its "
            "warnings say why)."
        )
        return " ".join(sentences), cite.references
    random_draws = False
    for label, group in frequentist.groupby("method", sort=False):
        name, options = parse_label(str(label))
        design_based = _weighted_sentence(str(label), group, cite)
        if design_based is not None:
            random_draws |= str(label).startswith("poststratified")
            sentences.append(design_based)
        elif name in ANALYTIC:
            sentences.append(_proportion_sentence(name, options, group, nested, cite))
        elif name == "bootstrap" and options:
            random_draws = True
            sentences.append(_bootstrap_sentence(options, group, choices, cite))
        else:
            random_draws |= "bootstrap" in str(label)
            sentences.append(
                f"For {_listing(group['metric'])} the method is: "
                f"{label}{cite.keyword(str(label), _KEYWORDS)}."
            )
    if weighted:
        sentences.append(
            "Each interval is about the value of its metric in "
            + (
                "the population of persons that the sampled persons were drawn from, the "
                "persons being the sampling units within strata."
                if summary.get("clustered")
                else "the corpus the sample was drawn from (a finite population of texts)."
            )
        )
    elif nested:
        texts_only = frequentist[frequentist["sources"].astype(str) == "texts"]
        sentence = (
            f"Each interval is about the text-weighted value of its metric in the population "
            f"of persons that these {summary['persons']:,} persons were sampled from, new "
            "persons included, so that it includes the variation of both texts and persons"
        )
        if len(texts_only):
            sentence += (
                f"; those of {_listing(texts_only['metric'])} are about the population of texts "
                "and include the variation of texts only"
            )
        sentences.append(sentence + ".")
    else:
        sentences.append(
            "Each interval is about the value of its metric in the population of texts that "
            "the labelled texts are a random sample of."
        )
    if len(bayes_rows):
        parts = [
            _bayes_sentence(str(label), group, nested, cite)
            for label, group in bayes_rows.groupby("method", sort=False)
        ]
        random_draws |= choices.bayes_sampler is not None
        sentences.append(
            f"Beside them the table gives {level} equal-tailed Bayesian credible intervals: "
            + "; ".join(parts)
            + "."
        )
    if len(differences):
        reference = _listing(differences["reference"])
        parts = [
            f"{label}{cite.keyword(str(label), _KEYWORDS)} for {_listing(group['metric'])}"
            for label, group in differences.groupby("method", sort=False)
        ]
        random_draws |= any("bootstrap" in str(label) for label in differences["method"])
        sentences.append(
            f"Differences between subgroups of {names['by']} ({_listing(differences['by'])} "
            f"minus {reference}) have the intervals perfci recommends for them: "
            + "; ".join(parts)
            + "."
        )
    if comparisons is not None and len(comparisons):
        a, b = names["y_pred"], names["pred_b"]
        parts = [
            f"{label}{cite.keyword(str(label), _PAIRED_KEYWORDS)} for {_listing(group['metric'])}"
            for label, group in comparisons.groupby("method", sort=False)
        ]
        tests = [
            f"{test}{cite.keyword(str(test), _PAIRED_KEYWORDS)}"
            for test in dict.fromkeys(comparisons["test"].astype(str))
        ]
        random_draws |= any("bootstrap" in str(label) for label in comparisons["method"])
        sentences.append(
            f"The paired differences between {a} and {b} on the same texts ({a} minus {b}) "
            "have the paired intervals perfci recommends: "
            + "; ".join(parts)
            + f"; the tests of equal performance are the {_listing(tests)} tests."
        )
    chosen = (
        "perfci's recommended choices, which follow the paper that perfci implements "
        f"{cite('anglin')} except where perfci's simulations of stress designs (unequal "
        "numbers of texts per person, ICC up to 0.5, rare constructs, rates near 1) found "
        "an interval that covers better"
    )
    if choices.given:
        chosen += f", with {_listing(choices.given)} set by the analyst"
    sentences.append(f"The methods are {chosen}.")
    software = ", ".join(f"{k} {v}" for k, v in versions.items() if k != "perfci")
    sentence = (
        f"All intervals are two-sided at the {level} level and were computed with perfci "
        f"{versions['perfci']} ({software})"
    )
    if random_draws:
        sentence += f"; {choices.seed}"
    sentences.append(sentence + ".")
    return " ".join(sentences), cite.references
