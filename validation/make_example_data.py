"""Generate the bundled example data set ``src/perfci/data/example_texts.csv``.

Run from the repository root: ``python validation/make_example_data.py``. The data are
simulated (no real texts): 40 persons (for example, teachers whose utterances were coded)
with 4 to 30 texts each, a human code and two classifiers' codes for a binary construct,
and a three-class topic coded by the human and by the first classifier. Person-level
recall and false-positive rates vary, so texts are nested in persons as in the paper's
section 4.
"""

from pathlib import Path

import numpy as np
import pandas as pd

rng = np.random.default_rng(20261130)
n_persons = 40
texts = rng.integers(4, 31, size=n_persons)
person = np.repeat(np.arange(1, n_persons + 1), texts)
site = np.where(person % 2 == 0, "urban", "rural")
n = person.size

prevalence = rng.beta(2, 6, size=n_persons)[person - 1]
human = rng.random(n) < prevalence
recall_a = rng.beta(18, 2.5, size=n_persons)[person - 1]
fpr_a = rng.beta(1, 25, size=n_persons)[person - 1]
model_a = np.where(human, rng.random(n) < recall_a, rng.random(n) < fpr_a)
# A second classifier that misses a little more and over-calls a little less.
model_b = np.where(human, rng.random(n) < recall_a - 0.06, rng.random(n) < fpr_a * 0.7)

topics = np.array(["praise", "question", "other"])
topic_true = rng.choice(3, size=n, p=[0.2, 0.3, 0.5])
flip = rng.random(n) < 0.15
topic_pred = np.where(flip, rng.choice(3, size=n), topic_true)

frame = pd.DataFrame(
    {
        "person": [f"P{i:02d}" for i in person],
        "site": site,
        "text_id": np.arange(1, n + 1),
        "human": human.astype(int),
        "model": model_a.astype(int),
        "model_b": model_b.astype(int),
        "human_topic": topics[topic_true],
        "model_topic": topics[topic_pred],
    }
)
out = Path(__file__).resolve().parents[1] / "src" / "perfci" / "data" / "example_texts.csv"
frame.to_csv(out, index=False)
print(f"wrote {out} ({n} texts, {n_persons} persons)")
