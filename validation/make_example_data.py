"""Generate the bundled example data set ``src/perfci/data/example_texts.csv``.

Run from the repository root: ``python validation/make_example_data.py``.

The data are simulated, shaped like a typical validation study of a text classifier in
psychology: 40 therapists (``person``) with 15 to 35 coded utterances each (about 25),
from two clinics (``site``, a subgroup for fairness checks). A human coder marked whether
each utterance is a *reflection* (``human``, 0/1; about a quarter are), and two LLM
prompts coded the same utterances (``model`` and ``model_b``). Both prompts see the same
utterances, so their errors are correlated: each utterance has a latent difficulty shared
by both, and each therapist a style that makes their reflections easier or harder to
recognise (so texts are nested in persons, with an ICC of roughly 0.1 for recall).
Prompt B misses a few more reflections than prompt A and over-calls a little less. A
three-class code of the utterance's function (``human_topic``, ``model_topic``:
"question", "reflection", "other") gives a multi-class example. ``score`` and
``score_b`` are the two prompts' probabilities that an utterance is a reflection
(``model == (score >= 0.5)``, and likewise for B), for the ROC AUC. ``run1``, ``run2``
and ``run3`` are three runs of prompt A at a temperature above 0 (``run1`` is ``model``):
each later run keeps the first run's draw on most utterances and redraws the rest, and
its rates are shifted on the logit scale (run 2 a little more lenient, run 3 a little
stricter), so the runs differ systematically as well as at random. ``human_b`` is a
second human coder who coded a random 60% of the utterances (empty elsewhere), agreeing
with the first except on some hard utterances.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import special

rng = np.random.default_rng(20261130)
n_persons = 40
texts = rng.integers(15, 36, size=n_persons)
person = np.repeat(np.arange(n_persons), texts)
n = person.size
site = np.where(np.arange(n_persons) < 22, "clinic_a", "clinic_b")[person]

# Therapist-level prevalence of reflections and therapist style (logit scale).
prevalence = rng.beta(5, 15, size=n_persons)[person]
style = rng.normal(0.0, 0.8, size=n_persons)[person]
human = rng.random(n) < prevalence

difficulty = rng.normal(0.0, 1.0, size=n)  # shared by both prompts
hit_a = special.expit(2.6 + style + 1.2 * difficulty)
hit_b = special.expit(2.1 + style + 1.2 * difficulty)
false_alarm_a = special.expit(-3.4 + 0.9 * difficulty)
false_alarm_b = special.expit(-3.8 + 0.9 * difficulty)
u = rng.random(n)  # one uniform for both prompts: they agree unless their rates differ
model_a = np.where(human, u < hit_a, u < false_alarm_a)
model_b = np.where(human, u < hit_b, u < false_alarm_b)

topics = np.array(["question", "reflection", "other"])
topic_true = np.where(human, 1, rng.choice([0, 2], size=n, p=[0.4, 0.6]))
confused = rng.random(n) < special.expit(-2.0 + 0.8 * difficulty)
topic_pred = np.where(confused, rng.choice(3, size=n), topic_true)

# Scores: each prompt's probability that the utterance is a reflection, consistent with
# its label (label 1 exactly where the score is at least 0.5). The label was drawn as
# u < rate, so logit(rate) - logit(u) is positive exactly for label 1; a per-utterance
# scale (drawn here, after every draw above, so that the columns above do not change)
# makes the scores less extreme than the labels' margins alone, and rounding to four
# decimals gives ties, as real model probabilities printed to a file have.
scale = rng.uniform(0.5, 1.0, size=n)


def score_of(label, rate):
    margin = special.logit(rate) - special.logit(u)
    score = np.round(special.expit(scale * margin), 4)
    # rounding must not carry a score across the threshold
    return np.where(label, np.maximum(score, 0.5), np.minimum(score, 0.4999))


score_a = score_of(model_a, np.where(human, hit_a, false_alarm_a))
score_b = score_of(model_b, np.where(human, hit_b, false_alarm_b))
assert np.array_equal(model_a, score_a >= 0.5) and np.array_equal(model_b, score_b >= 0.5)

# Repeated runs of prompt A and a second coder, drawn after everything above so that the
# columns above do not change.
rate_a = np.where(human, hit_a, false_alarm_a)
runs = [model_a]
for shift in (0.4, -0.3):
    redraw = rng.random(n) < 0.15  # utterances on which this run samples anew
    u_run = np.where(redraw, rng.random(n), u)
    runs.append(u_run < special.expit(special.logit(rate_a) + shift))
coded = rng.random(n) < 0.6
disagree = rng.random(n) < special.expit(-4.5 + 1.0 * np.abs(difficulty))
human_b = np.where(disagree, ~human, human).astype(float)
human_b[~coded] = np.nan

frame = pd.DataFrame(
    {
        "person": [f"T{i + 1:02d}" for i in person],
        "site": site,
        "text_id": np.arange(1, n + 1),
        "human": human.astype(int),
        "model": model_a.astype(int),
        "model_b": model_b.astype(int),
        "human_topic": topics[topic_true],
        "model_topic": topics[topic_pred],
        "score": score_a,
        "score_b": score_b,
        "run1": runs[0].astype(int),
        "run2": runs[1].astype(int),
        "run3": runs[2].astype(int),
        "human_b": pd.array(human_b, dtype="Int64"),
    }
)
out = Path(__file__).resolve().parents[1] / "src" / "perfci" / "data" / "example_texts.csv"
frame.to_csv(out, index=False)
print(f"wrote {out} ({n} texts, {n_persons} persons)")
