"""The harness's figures and tables; they live in :mod:`perfci.harness.figures`."""

from .harness.figures import (
    FIGURES,
    SuiteLayout,
    coverage_frame,
    coverage_table,
    make_figures,
    plot_suite,
    suite_layout,
)

__all__ = [
    "FIGURES",
    "SuiteLayout",
    "coverage_frame",
    "coverage_table",
    "make_figures",
    "plot_suite",
    "suite_layout",
]
