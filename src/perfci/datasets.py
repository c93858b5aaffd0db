"""Bundled example data."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_example"]


def load_example() -> pd.DataFrame:
    """Load the bundled example: 764 simulated texts nested in 40 persons.

    Returns
    -------
    pandas.DataFrame
        One row per text with columns ``person`` (person id), ``site`` (``"rural"`` or
        ``"urban"``, a subgroup), ``text_id``, ``human`` (the reference code, 0/1),
        ``model`` and ``model_b`` (two classifiers' codes, 0/1), and ``human_topic`` /
        ``model_topic`` (a three-class code by the human and by the first classifier).

    Notes
    -----
    The data are simulated, with person-level recall and false-positive rates that
    vary between persons, so texts are nested in persons. The script that made them is
    ``validation/make_example_data.py``.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> texts.shape
    (764, 8)
    >>> pc.confusion(texts["human"], texts["model"]).counts
    array([160,  37,  25, 542])
    """
    with resources.files("perfci").joinpath("data/example_texts.csv").open() as f:
        return pd.read_csv(f)
