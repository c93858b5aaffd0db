"""Markers for doctest items, which cannot carry a decorator."""

import pytest

# Doctests that fit MCMC models (seconds each); `make test-fast` skips them.
SLOW_DOCTESTS = ("bayes.md", "perfci.bayes.fitting.fit_confusion")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow doctests `slow`."""
    for item in items:
        if item.nodeid.endswith(SLOW_DOCTESTS):
            item.add_marker(pytest.mark.slow)
