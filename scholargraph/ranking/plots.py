"""PNG charts of evaluation tables (matplotlib, headless)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np


def grouped_bars(panels: Sequence[tuple[str, Mapping[str, Mapping[str, float]]]], metrics: Sequence[str],
                 labels: Sequence[str], path: str) -> str:
    """One panel per (title, {system: {metric: value}}): a group of bars per metric, a bar per system.
    Each panel's scale follows its own best value, so panels with low ceilings stay readable."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(panels), 1, figsize=(13, 3.8 * len(panels)), squeeze=False)
    from matplotlib.colors import ListedColormap

    colors = cast(Sequence, cast(ListedColormap, plt.get_cmap("tab20")).colors)  # tab20: a list of 20 colours
    for ax, (title, results) in zip(axes[:, 0], panels):
        names = list(results)
        x = np.arange(len(metrics))
        width = 0.84 / max(len(names), 1)
        top = 0.0
        for i, name in enumerate(names):
            values = [float(results[name].get(m, 0.0)) for m in metrics]
            top = max(top, *values)
            ax.bar(x + i * width - 0.42 + width / 2, values, width, label=name, color=colors[i % len(colors)])
        ax.set_xticks(x, list(labels))
        ax.set_ylim(0, min(1.0, top * 1.12) if top > 0 else 1.0)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
