"""Markers for doctest items, which cannot carry a decorator; the session's cache folder."""

import os

import pytest

# Doctests that fit MCMC models or run suites (seconds each); `make test-fast` skips them.
SLOW_DOCTESTS = ("bayes.md", "validation.md", "perfci.bayes.fitting.fit_confusion_counts")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow doctests `slow`."""
    for item in items:
        if item.nodeid.endswith(SLOW_DOCTESTS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True, scope="session")
def _compile_cache_of_the_session(tmp_path_factory):
    """Compiled nutpie models go to a folder of the test session, not the user's cache.

    Set in ``os.environ``, so the processes a test starts use it too.
    """
    before = {name: os.environ.get(name) for name in ("PERFCI_CACHE_DIR", "PERFCI_NO_CACHE")}
    os.environ["PERFCI_CACHE_DIR"] = str(tmp_path_factory.mktemp("perfci-cache"))
    os.environ.pop("PERFCI_NO_CACHE", None)
    yield
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
