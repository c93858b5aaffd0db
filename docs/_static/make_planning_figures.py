"""Make the figures of the planning page: the shapes of the paper's figures 3 and 7.

Run from the repository root::

    .venv/bin/python docs/_static/make_planning_figures.py

It writes ``docs/_static/half_width_fig3.png`` (exact expected half-widths of the 95%
Agresti-Coull and the 90% regularized bootstrap intervals against the relevant n,
independent texts) and ``docs/_static/half_width_fig7.png`` (half-width of the 95%
Agresti-Coull interval on the df-adjusted effective sample size against the relevant n
at a metric of 0.90, nested texts, one panel per ICC), each with the target half-width
0.05 and the n where each curve reaches it.
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import perfci as pc  # noqa: E402
from perfci.plotting import save_figure, style  # noqa: E402

HERE = Path(__file__).resolve().parent


def figure_3(path: Path) -> None:
    """Half-width against the relevant n for independent texts (the paper's figure 3).

    Left: the expected half-width of the 95% Agresti-Coull interval. Right: that of the
    90% pseudo-count regularized bootstrap (lambda = 1), the setting of the paper's
    Table 3. Both with the target half-width 0.05 and the n where each curve reaches it.

    Parameters
    ----------
    path : pathlib.Path
        The PNG file to write.
    """
    n = np.arange(10, 501)
    values = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    curves = pc.half_width_curves(
        n, values, confidence_level=0.9, method="percentile", pseudo_count=1
    )
    with style():  # titles set here take the style's sizes too
        fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), sharey=True, layout="constrained")
        pc.plot_half_width_curves(pc.half_width_curves(n, values), ax=axes[0], target=0.05)
        axes[0].set_title("95% Agresti-Coull")
        pc.plot_half_width_curves(curves, ax=axes[1], target=0.05)
        axes[1].set_title("90% regularized bootstrap (λ = 1), as in Table 3")
        axes[1].set_ylabel("")
        for ax in axes:
            ax.set_ylim(0, 0.3)
        fig.suptitle("Independent texts: expected half-width by relevant n")
    save_figure(fig, path, close=True)


def figure_7(path: Path) -> None:
    """Half-width against the relevant n for nested texts (the paper's figure 7).

    Parameters
    ----------
    path : pathlib.Path
        The PNG file to write.
    """
    iccs = [0.05, 0.1, 0.2]
    curves = pc.half_width_curves(
        np.arange(20, 1001, 5), [0.9], icc=iccs, texts_per_person=[1, 3, 10, 30, 50]
    )
    with style():
        fig, axes = plt.subplots(1, len(iccs), figsize=(10, 3.2), sharey=True, layout="constrained")
        for ax, icc in zip(axes, iccs, strict=True):
            pc.plot_half_width_curves(curves.sel(icc=icc, metric_value=0.9), ax=ax, target=0.05)
            ax.axvline(400, color="grey", linewidth=0.8, linestyle=":")
            ax.set_title(f"ICC = {icc:g}")
            ax.set_ylim(0, 0.2)
        for ax in axes[1:]:
            ax.set_ylabel("")
        fig.suptitle("Nested texts: 95% Agresti-Coull on the df-adjusted n_eff, metric 0.90")
    save_figure(fig, path, close=True)


if __name__ == "__main__":
    figure_3(HERE / "half_width_fig3.png")
    figure_7(HERE / "half_width_fig7.png")
