"""Checks of :func:`perfci.report`'s options that depend on one another."""

from __future__ import annotations

from typing import Any

from .recommended import RECOMMENDED

__all__ = ["refuse_ignored_report_options"]


def refuse_ignored_report_options(
    design: Any, df_adjust: Any, has_groups: bool, bayes: Any, bayes_sampler: Any
) -> None:
    """Refuse report options that would be ignored: they are mistakes, not defaults.

    `design` and `df_adjust` adjust for texts nested in persons, so they need `groups`
    (as :func:`perfci.metric_ci` says); `bayes_sampler` chooses the sampler of the
    Bayesian rows, so it needs ``bayes=True``.
    """
    if not has_groups:
        for name, value in (("design", design), ("df_adjust", df_adjust)):
            if value is not None and not (isinstance(value, str) and value == RECOMMENDED):
                raise ValueError(
                    f"`{name}` adjusts for texts nested in persons; it needs `groups` (person ids)."
                )
    if not bayes and not (isinstance(bayes_sampler, str) and bayes_sampler == "auto"):
        raise ValueError(
            f"`bayes_sampler` ({bayes_sampler!r}) chooses the sampler of the Bayesian rows: "
            "it needs `bayes=True`."
        )
