"""Make the figures of the planning page: the shapes of the paper's figures 3 and 7.

Run from the repository root::

    .venv/bin/python docs/_static/make_planning_figures.py

It writes ``docs/_static/half_width_fig3.png`` (exact expected half-widths of the 95%
Agresti-Coull and the 90% regularized bootstrap intervals against the relevant n,
independent texts) and ``docs/_static/half_width_fig7.png`` (half-width of the 95%
Agresti-Coull interval on the df-adjusted effective sample size against the relevant n
at a metric of 0.90, nested texts, one panel per ICC).
"""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import perfci as pc  # noqa: E402

HERE = Path(__file__).resolve().parent


def figure_3(path: Path) -> None:
    """Half-width against the relevant n for independent texts (the paper's figure 3).

    Left: the expected half-width of the 95% Agresti-Coull interval. Right: that of the
    90% pseudo-count regularized bootstrap (lambda = 1), the setting of the paper's
    Table 3, with the planned sizes for a half-width of 0.05 marked.

    Parameters
    ----------
    path : pathlib.Path
        The PNG file to write.
    """
    n = np.arange(10, 501)
    values = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    pc.plot_half_width_curves(pc.half_width_curves(n, values), ax=axes[0])
    axes[0].set_title("95% Agresti-Coull", fontsize="medium")
    curves = pc.half_width_curves(
        n, values, confidence_level=0.9, method="percentile", pseudo_count=1
    )
    pc.plot_half_width_curves(curves, ax=axes[1])
    axes[1].set_title("90% regularized bootstrap (λ = 1), as in Table 3", fontsize="medium")
    axes[1].set_ylabel("")
    for value in (0.8, 0.9):
        plan = pc.plan_sample_size(
            value, 0.05, confidence_level=0.9, method="percentile", pseudo_count=1
        )
        axes[1].plot(plan.relevant_n, plan.half_width, "ko", markersize=4)
        axes[1].annotate(
            str(plan.relevant_n),
            (plan.relevant_n, plan.half_width),
            textcoords="offset points",
            xytext=(-4, -14),
            fontsize="small",
        )
    for ax in axes:
        ax.axhline(0.05, color="grey", linewidth=0.8, linestyle=":")
        ax.set_ylim(0, 0.3)
    fig.suptitle("Independent texts: expected half-width by relevant n")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


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
    fig, axes = plt.subplots(1, len(iccs), figsize=(11, 3.8), sharey=True)
    for ax, icc in zip(axes, iccs, strict=True):
        pc.plot_half_width_curves(curves.sel(icc=icc, metric_value=0.9), ax=ax)
        ax.axvline(400, color="grey", linewidth=0.8, linestyle=":")
        ax.set_title(f"ICC = {icc:g}", fontsize="medium")
        ax.set_ylim(0, 0.2)
    for ax in axes[1:]:
        ax.set_ylabel("")
    fig.suptitle("Nested texts: 95% Agresti-Coull on the df-adjusted n_eff, metric 0.90")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    figure_3(HERE / "half_width_fig3.png")
    figure_7(HERE / "half_width_fig7.png")
