r"""Agreement between annotators: Cohen's kappa, Fleiss' kappa and Krippendorff's alpha.

Several human annotators code the same texts, not always all of them; the texts may be
nested in persons. :func:`annotator_agreement` gives one agreement statistic with its
interval; :func:`agreement_report` sets a machine coder (an LLM, a fine-tuned model)
beside the humans: each pair of humans, all humans, the machine against each human and
against the humans' majority label.

Counts first. Every statistic is a function of counts of cells of texts (a pair of codes
for Cohen's kappa, the per-text category counts for Fleiss' kappa and Krippendorff's
alpha: :mod:`perfci.agreement_statistics`). A bootstrap resample of texts is then one
multinomial draw of these cell counts, of persons a draw of how often each person's
cell counts are taken, through the one resampling engine
(:mod:`perfci._core.resampling`): no loop over texts or resamples.

Beside this module: the reading of codes (:mod:`perfci.agreement_codes`), the
statistics (:mod:`perfci.agreement_statistics`) and the interval of one statistic with
its result, :class:`AgreementCI` (:mod:`perfci.agreement_intervals`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._core import registry
from ._core.labels import as_label_array, check_aligned, majority_vote
from ._core.resampling import default_resamples
from ._core.validation import UNSET, Unset
from .agreement_codes import Codes, read_codes

# The result and the interval of one statistic have their own module; AgreementCI is
# still importable from here.
from .agreement_intervals import (
    AgreementCI,
    AgreementOptions,
    agreement_interval,
    agreement_options_iv,
    resolve_statistic,
)

__all__ = [
    "AGREEMENT_METHODS",
    "AGREEMENT_STATISTICS",
    "LEVELS_OF_MEASUREMENT",
    "AgreementCI",
    "agreement_report",
    "annotator_agreement",
]

#: Statistics of :func:`annotator_agreement`
#: (:data:`perfci._core.registry.AGREEMENT_STATISTIC`).
AGREEMENT_STATISTICS: tuple[str, ...] = registry.AGREEMENT_STATISTIC.names
#: Interval methods of :func:`annotator_agreement`
#: (:data:`perfci._core.registry.AGREEMENT_METHOD`).
AGREEMENT_METHODS: tuple[str, ...] = registry.AGREEMENT_METHOD.names
#: Levels of measurement of Krippendorff's alpha
#: (:data:`perfci._core.registry.LEVEL_OF_MEASUREMENT`).
LEVELS_OF_MEASUREMENT: tuple[str, ...] = registry.LEVEL_OF_MEASUREMENT.names


def annotator_agreement(
    codes: Any,
    *,
    groups: Any = None,
    statistic: str = "auto",
    method: str = "bootstrap",
    confidence_level: float = 0.95,
    level_of_measurement: str = "nominal",
    categories: Any = None,
    scheme: str | None = None,
    interval: str | Unset = UNSET,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
    batch: int | None = None,
) -> AgreementCI:
    r"""Agreement between annotators (Cohen's or Fleiss' kappa, Krippendorff's alpha).

    Parameters
    ----------
    codes : array_like or pandas.DataFrame
        The codes, one row per text and one column per annotator (a DataFrame's column
        names name the annotators); NaN, None or ``pd.NA`` where an annotator did not
        code a text. Labels are read as everywhere in perfci
        (:func:`perfci.counting.normalize_labels`): numbers and text never mix, and
        ``1``, ``1.0``, ``True`` and ``"1"`` are one binary code.
    groups : array_like, optional
        Person ids, one per text: texts nested in persons, the persons sampled from a
        population of persons.
    statistic : {"auto", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha"}
        ``"auto"`` (default): Cohen's kappa for two annotators who both coded every text
        with nominal codes, else Krippendorff's alpha (see the notes).
    method : {"bootstrap", "asymptotic"}, default "bootstrap"
        The bootstrap of the counts of texts by their codes; or, for Cohen's kappa, the
        large-sample standard error (clustered over persons with `groups`).
    confidence_level : float, default 0.95
        Confidence level.
    level_of_measurement : {"nominal", "ordinal", "interval", "ratio"}, default "nominal"
        How far apart two codes are, for Krippendorff's alpha (the kappas are nominal).
        ``"interval"`` and ``"ratio"`` need numeric codes; ``"ordinal"`` with text codes
        needs `categories` in order.
    categories : sequence, optional
        The possible codes, in order (for ``"ordinal"``); default: the codes that occur,
        sorted. Every code must be among them. Codes nobody used change nothing.
    scheme : {"iid", "cluster", "hierarchical"}, optional
        Bootstrap scheme. Default :func:`perfci.policy.recommended_scheme`: iid without
        groups (or with one text per person), hierarchical with them.
    interval : {"percentile", "bca"}, optional
        Bootstrap interval; percentile when unset.
    n_resamples : int, optional
        Bootstrap resamples; 2000 when unset (more above a 99% level), at least ``ceil(2 / (1 -
        confidence_level))`` (40 at 95%: each tail of the interval holds a resample). Passing it (or
        `interval`) with a method other than the bootstrap is an error, also at its default value.
    rng : numpy.random.Generator, int or None
        Random generator or seed of the bootstrap.
    batch : int, optional
        Resamples drawn at once, bounding memory; the result does not depend on it.

    Returns
    -------
    AgreementCI
        Estimate, interval, standard error, what the statistic used (texts, texts left
        out, annotators, persons) and `sources`, what the interval's uncertainty includes.

    Raises
    ------
    ValueError
        For an unknown name or an option of the wrong type; fewer `n_resamples` than the
        bootstrap interval at the level needs; a bootstrap option with
        ``method="asymptotic"``, or ``"asymptotic"`` for a statistic other than Cohen's
        kappa; `codes` that are not a table, with fewer than 2 annotators, no text, no
        code at all, infinity, numbers beside text or score-like numbers; codes outside
        `categories`; a level other than nominal for the kappas; interval or ratio levels
        with text codes (ratio: negative codes); ordinal text codes without `categories`;
        Cohen's kappa of other than two annotators; Fleiss' kappa of texts with unequal
        numbers of codes; no text that enters the statistic (not coded twice); `groups`
        not one id per text; a cluster scheme without `groups`, or fewer than 2 persons
        for it or for the clustered asymptotic interval.

    Warns
    -----
    UndefinedMetricWarning
        When the statistic is undefined: the texts that enter it hold one code only
        (kappa and alpha are 0/0). The estimate and the interval are NaN. For the
        bootstrap, when more than 10% of the resamples hold one code only (they are
        dropped).
    DegenerateIntervalWarning
        When the interval has zero width: every resample gives the same value (perfect
        agreement, say), or every text the same influence on Cohen's kappa.

    Notes
    -----
    *Cohen's kappa* [1]_ of two annotators on the n texts both coded, with :math:`p_{ab}`
    the share of texts coded a by the first and b by the second, :math:`p_o = \sum_a
    p_{aa}` and :math:`p_e = \sum_a p_{a\cdot} p_{\cdot a}`: :math:`\kappa = (p_o -
    p_e) / (1 - p_e)`. Texts either annotator did not code are left out
    (`n_texts_unused`).

    *Fleiss' kappa* [2]_ of N texts with m codes each (the annotators may differ from
    text to text), :math:`n_{ij}` annotators giving text i code j: :math:`P_i =
    (\sum_j n_{ij}^2 - m) / (m(m - 1))`, :math:`\bar P` their mean, :math:`p_j =
    \sum_i n_{ij} / (N m)`, :math:`P_e = \sum_j p_j^2`, :math:`\kappa = (\bar P - P_e) /
    (1 - P_e)`. Missing codes: texts with no code are left out; every other text must
    have the same number of codes, at least 2, else it is an error (Krippendorff's alpha
    takes missing codes).

    *Krippendorff's alpha* [3]_ [4]_: a text u with :math:`m_u \ge 2` codes, :math:`n_{uc}`
    of them c, adds :math:`(n_{uc} n_{uk} - [c = k] n_{uc}) / (m_u - 1)` to the
    coincidence :math:`o_{ck}`; with :math:`n_c = \sum_k o_{ck}` and :math:`n =
    \sum_c n_c` (the pairable codes), :math:`\alpha = 1 - (n - 1) \sum_{c,k}
    o_{ck}\delta^2_{ck} / \sum_{c,k} n_c n_k \delta^2_{ck}`. Nominal
    :math:`\delta^2_{ck} = [c \ne k]`; ordinal :math:`(\sum_{g=c}^{k} n_g - (n_c +
    n_k)/2)^2`; interval :math:`(c - k)^2`; ratio :math:`((c - k)/(c + k))^2`. A text
    coded once holds no pair and adds nothing: it is left out (`n_texts_unused`) and not
    resampled. This equals the ``krippendorff`` package's ``alpha`` (tests, to 1e-10).

    *Why "auto" chooses so*: for two annotators who coded every text, Cohen's kappa is
    the statistic readers know (and what :func:`perfci.metric_ci` reports as ``kappa``);
    with a third annotator or missing codes it no longer applies, and Krippendorff's alpha
    is the one statistic that takes any number of annotators, missing codes and ordinal
    or interval codes. Fleiss' kappa is never chosen: it needs an equal number of codes
    per text, and where it applies alpha differs from it only by a small-sample factor.

    *Bootstrap*: the texts that enter the statistic are counted by cell (a pair of codes
    for Cohen; the category counts for Fleiss and Krippendorff), and a resample of texts
    is a multinomial draw of the cell counts; the cluster and hierarchical schemes draw
    persons (then texts within them) as :func:`perfci.bootstrap_ci` does. Resamples in
    which the statistic is undefined (one code only) are dropped and counted. This
    resamples texts, as a study samples them, rather than the pairable values of Hayes
    and Krippendorff's bootstrap [5]_, which treats the pairs of codes as independent
    even where they share a text. The annotators are not resampled: the interval is about
    these annotators.

    *Asymptotic* (Cohen's kappa): the large-sample variance of Fleiss, Cohen and Everitt
    [6]_ (what statsmodels' ``cohens_kappa`` reports as ``var_kappa``), which equals
    :math:`\sum_t \psi_t^2 / n^2` with the influence of a text in cell (a, b),
    :math:`\psi_{ab} = \{([a = b] - p_o)(1 - p_e) - (p_{\cdot a} + p_{b\cdot} - 2
    p_e)(1 - p_o)\} / (1 - p_e)^2`; the interval is :math:`\hat\kappa \pm
    z\,\widehat{\mathrm{se}}`, clipped to [-1, 1]. With `groups` (and more texts than
    persons) the variance is the linearization with persons as clusters,
    :math:`\frac{I}{I-1}\sum_i (\sum_{t \in i} \psi_t)^2 / n^2`, and the quantile t on
    :math:`G^* - 1` df (Kish's effective number of persons over their texts), as
    :func:`perfci.auc_ci` does for the AUC.

    *Degenerate cases*: fewer than 2 annotators, no text coded twice, or no code at all
    is an error; one code only (every code the same) gives NaN with a warning, as does a
    table where both annotators of Cohen's kappa used one and the same code; perfect
    agreement with two or more codes gives an estimate of 1 and a zero-width interval
    with a :class:`~perfci.DegenerateIntervalWarning`.

    References
    ----------
    .. [1] Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational
       and Psychological Measurement 20(1), 37-46.
    .. [2] Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters.
       Psychological Bulletin 76(5), 378-382.
    .. [3] Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability.
       Annenberg School for Communication, University of Pennsylvania.
    .. [4] Krippendorff, K. (2019). Content Analysis: An Introduction to Its Methodology,
       4th ed., ch. 12. Sage.
    .. [5] Hayes, A. F. and Krippendorff, K. (2007). Answering the call for a standard
       reliability measure for coding data. Communication Methods and Measures 1(1),
       77-89.
    .. [6] Fleiss, J. L., Cohen, J. and Everitt, B. S. (1969). Large sample standard
       errors of kappa and weighted kappa. Psychological Bulletin 72(5), 323-327.

    Examples
    --------
    Three annotators, one of whom (cy) coded about half of the texts:

    >>> import numpy as np
    >>> import pandas as pd
    >>> import perfci as pc
    >>> rng = np.random.default_rng(3)
    >>> truth = rng.integers(0, 3, size=200)
    >>> def coder():
    ...     return np.where(rng.random(200) < 0.8, truth, rng.integers(0, 3, size=200))
    >>> codes = pd.DataFrame({"ana": coder(), "ben": coder(), "cy": coder()}).astype(float)
    >>> codes.loc[rng.random(200) < 0.5, "cy"] = np.nan
    >>> ci = pc.annotator_agreement(codes, rng=1)  # bootstrap ends: shown to 2 decimals
    >>> print(f"{ci.statistic}: {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}]")
    krippendorff_alpha: 0.725 [0.65, 0.79]

    Cohen's kappa of ana and ben, with the asymptotic interval:

    >>> ci = pc.annotator_agreement(codes[["ana", "ben"]], method="asymptotic")
    >>> print(f"{ci.statistic}: {ci.estimate:.3f} [{ci.low:.3f}, {ci.high:.3f}], se {ci.se:.4f}")
    cohen_kappa: 0.722 [0.642, 0.803], se 0.0412
    """
    check_aligned(codes=codes, groups=groups)
    options, generator = agreement_options_iv(
        method, confidence_level, level_of_measurement, scheme, interval, n_resamples, rng, batch
    )
    registry.AGREEMENT_STATISTIC.check(statistic)
    data, _ = read_codes(
        "codes", codes, level=level_of_measurement, categories=categories, groups=groups
    )
    chosen = resolve_statistic(statistic, data, level_of_measurement, method)
    return agreement_interval(data, chosen, options, generator)


def agreement_report(
    human_codes: Any,
    machine_labels: Any,
    *,
    groups: Any = None,
    method: str = "bootstrap",
    confidence_level: float = 0.95,
    categories: Any = None,
    scheme: str | None = None,
    interval: str | Unset = UNSET,
    n_resamples: int | Unset = UNSET,
    rng: Any = None,
    batch: int | None = None,
) -> pd.DataFrame:
    r"""Tabulate a machine coder's agreement with the humans beside the humans' own.

    The table a reader needs to judge an LLM (or any classifier) as a coder: how well the
    humans agree with each other, and how well the machine agrees with each human and
    with the humans' majority label. A machine that agrees with the humans about as well
    as they agree with each other codes about as reliably as another human would.

    Parameters
    ----------
    human_codes : array_like or pandas.DataFrame
        The humans' codes, one row per text and one column per human (a DataFrame's
        column names name them), at least two humans; NaN, None or ``pd.NA`` where a
        human did not code a text.
    machine_labels : array_like
        The machine's label of every text (no missing values), in the humans' coding.
    groups : array_like, optional
        Person ids, one per text (texts nested in persons).
    method : {"bootstrap", "asymptotic"}, default "bootstrap"
        The interval of every Cohen's kappa row (see :func:`annotator_agreement`); the
        Krippendorff's alpha row is always bootstrapped (alpha has no asymptotic interval
        here), and its `method` column says so.
    confidence_level : float, default 0.95
        Confidence level of each row's interval (the rows are not a simultaneous band).
    categories : sequence, optional
        The possible codes; default: those that occur in either argument.
    scheme, interval, n_resamples, batch
        Bootstrap options, as in :func:`annotator_agreement`.
    rng : numpy.random.Generator, int or None
        Random generator or seed: row r of the table uses
        ``np.random.default_rng(rng).spawn(rows)[r]``.

    Returns
    -------
    pandas.DataFrame
        One row per comparison, in this order: each pair of humans (``role``
        ``"human_pair"``, Cohen's kappa on the texts both coded), all humans
        (``"humans"``, Krippendorff's alpha, nominal), the machine against each human
        (``"machine_human"``, Cohen's kappa on the texts that human coded) and against
        the majority label (``"machine_majority"``). Columns ``comparison``, ``role``,
        ``statistic``, ``estimate``, ``low``, ``high``, ``se``, ``n_texts``,
        ``n_texts_unused``, ``persons``, ``method`` (what computed the interval) and
        ``sources`` (as :attr:`AgreementCI.sources`); ``DataFrame.attrs`` holds
        ``confidence_level``.

    Raises
    ------
    ValueError
        As :func:`annotator_agreement`; also for fewer than 2 humans, machine labels
        that are missing, not one per text, or in a coding that never matches the humans'.

    Warns
    -----
    UndefinedMetricWarning
        For a row whose statistic is undefined (a pair of humans with no text in common,
        or one code only): its estimate and interval are NaN.

    Notes
    -----
    *The majority label* of a text is the code given by more of the humans who coded it
    than any other code (a plurality; for a text coded by one human, that human's code).
    A text whose most frequent codes tie (one human says yes and one no) has no
    majority label and is left out of the ``machine_majority`` row (its
    ``n_texts_unused`` counts them, with the texts no human coded). Leaving out the
    texts the humans split on leaves the texts that are easier to agree on, so that row
    tends to be higher than agreement with any one human would be on all texts.

    Each row's interval comes from its own bootstrap (or variance); the rows share texts,
    so their intervals are not independent, and a difference between two rows needs its
    own paired interval, which this table does not give.

    Examples
    --------
    >>> import numpy as np
    >>> import perfci as pc
    >>> import pandas as pd
    >>> rng = np.random.default_rng(5)
    >>> truth = rng.integers(0, 2, size=300)
    >>> def coder(accuracy):
    ...     return np.where(rng.random(300) < accuracy, truth, 1 - truth)
    >>> humans = pd.DataFrame({"ana": coder(0.9), "ben": coder(0.9), "cy": coder(0.9)})
    >>> humans = humans.astype(float)
    >>> humans.loc[rng.random(300) < 0.6, "cy"] = np.nan  # cy coded 40% of the texts
    >>> table = pc.agreement_report(humans, coder(0.85), rng=1)
    >>> table[["comparison", "estimate", "low", "high", "n_texts"]].round(3)  # doctest: +ELLIPSIS
                comparison  estimate    low   high  n_texts
    0           ana vs ben     0.693    ...      300
    1            ana vs cy     0.568    ...      121
    2            ben vs cy     0.600    ...      121
    3           all humans     0.650    ...      300
    4       machine vs ana     0.547    ...      300
    5       machine vs ben     0.572    ...      300
    6        machine vs cy     0.486    ...      121
    7  machine vs majority     0.666    ...      270
    >>> bool(((table["low"] < table["estimate"]) & (table["estimate"] < table["high"])).all())
    True

    (The ends are bootstrap quantiles, elided above: their digits depend on the random
    stream.)

    The 30 texts that ana and ben split on, and cy did not code, have no majority label.
    """
    check_aligned(human_codes=human_codes, machine_labels=machine_labels, groups=groups)
    options, generator = agreement_options_iv(
        method, confidence_level, "nominal", scheme, interval, n_resamples, rng, batch
    )
    if isinstance(machine_labels, pd.DataFrame):
        raise ValueError(
            "`machine_labels` must be one-dimensional: one label per text; got a DataFrame."
        )
    machine = as_label_array("machine_labels", machine_labels)
    data, extra = read_codes(
        "human_codes",
        human_codes,
        level="nominal",
        categories=categories,
        groups=groups,
        prefix="human",
        extra={"machine_labels": machine},
    )
    n = data.index.shape[0]
    machine_index = extra["machine_labels"]
    if machine_index.size != n:
        raise ValueError(
            f"`machine_labels` must have one label per text of `human_codes` ({n}); got "
            f"{machine_index.size}."
        )
    humans = data.index.shape[1]
    names = data.annotators
    rows: list[tuple[str, str, str, Codes]] = []
    for a in range(humans):
        for b in range(a + 1, humans):
            pair = data.pair(data.index[:, [a, b]], (names[a], names[b]))
            rows.append((f"{names[a]} vs {names[b]}", "human_pair", "cohen_kappa", pair))
    rows.append(("all humans", "humans", "krippendorff_alpha", data))
    for a in range(humans):
        pair = data.pair(np.column_stack([machine_index, data.index[:, a]]), ("machine", names[a]))
        rows.append((f"machine vs {names[a]}", "machine_human", "cohen_kappa", pair))
    majority = majority_vote(data.index, data.categories.size)
    pair = data.pair(np.column_stack([machine_index, majority]), ("machine", "the majority label"))
    rows.append(("machine vs majority", "machine_majority", "cohen_kappa", pair))
    streams = generator.spawn(len(rows))
    records = []
    for (comparison, role, statistic, codes), stream in zip(rows, streams, strict=True):
        row_options = options
        if statistic != "cohen_kappa" and options.method != "bootstrap":
            row_options = AgreementOptions(
                "bootstrap",
                options.level,
                "nominal",
                None,
                "percentile",
                default_resamples(options.level),
                None,
            )
        result = agreement_interval(codes, statistic, row_options, stream, single=False)
        records.append(
            {
                "comparison": comparison,
                "role": role,
                "statistic": statistic,
                "estimate": result.estimate,
                "low": result.low,
                "high": result.high,
                "se": result.se,
                "n_texts": result.n_texts,
                "n_texts_unused": result.n_texts_unused,
                "persons": result.persons,
                "method": result.description,
                "sources": result.sources,
            }
        )
    table = pd.DataFrame(records)
    table["persons"] = pd.array(table["persons"].tolist(), dtype="Int64")
    table.attrs["confidence_level"] = options.level
    return table
