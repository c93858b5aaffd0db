"""The harness's figures and tables; they live in :mod:`perfci.harness.figures`."""

from .harness.figures import coverage_table, make_figures

__all__ = ["coverage_table", "make_figures"]
