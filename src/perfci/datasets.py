"""Bundled example data."""

from __future__ import annotations

from importlib import resources

import pandas as pd

__all__ = ["load_example"]


def load_example() -> pd.DataFrame:
    """Load the bundled example: 1,069 simulated utterances nested in 40 therapists.

    Returns
    -------
    pandas.DataFrame
        One row per utterance with columns ``person`` (therapist id, about 25
        utterances each, 15 to 34), ``site`` (``"clinic_a"`` or ``"clinic_b"``, a subgroup),
        ``text_id``, ``human`` (the human code: is the utterance a reflection, 0/1),
        ``model`` and ``model_b`` (two LLM prompts' codes, 0/1), ``human_topic`` /
        ``model_topic`` (a three-class code, "question", "reflection" or "other", by the
        human and by the first prompt), and ``score`` / ``score_b`` (each prompt's
        probability that the utterance is a reflection, to four decimals: ``model`` is 1
        exactly where ``score`` is at least 0.5, and likewise for B); ``run1``, ``run2``,
        ``run3`` (three runs of the first prompt at a temperature above 0, ``run1`` being
        ``model``: repeated runs) and ``human_b`` (a second human coder's code of a random
        60% of the utterances, missing, ``pd.NA``, elsewhere).

    Notes
    -----
    The data are simulated: therapists differ in how many of their utterances are
    reflections and in how easy their reflections are to recognise (texts are nested in
    persons), and the two prompts share each utterance's difficulty, so their errors are
    correlated as with two prompts scored on the same texts. The script that made them,
    with every parameter, is ``validation/make_example_data.py``.

    Examples
    --------
    >>> import perfci as pc
    >>> texts = pc.load_example()
    >>> texts.shape
    (1069, 14)
    >>> pc.confusion(texts["human"], texts["model"]).counts
    array([221,  40,  30, 778])
    >>> bool(((texts["score"] >= 0.5) == texts["model"]).all())
    True
    """
    with resources.files("perfci").joinpath("data/example_texts.csv").open() as f:
        return pd.read_csv(f, dtype={"human_b": "Int64"})
