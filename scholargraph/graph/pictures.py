"""Small subgraphs drawn as PNG pictures: a suggested reviewer's evidence, a rising star's collaborators.

The models build a `SmallGraph` (plain nodes and edges, with a kind each) from what they already hold;
`draw` lays it out and writes the image. Kinds pick the colour and shape, so a picture reads the same
whichever model drew it; the legend names only the kinds that appear.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

# kind -> (colour, marker, size) of nodes, and (colour, style) of edges
NODE_STYLE: dict[str, tuple[str, str, float]] = {
    "submission": ("#d62728", "*", 900.0),
    "reviewer": ("#1f77b4", "s", 700.0),
    "evidence paper": ("#7fb3d5", "o", 500.0),
    "bridge paper": ("#f5b041", "o", 500.0),
    "topic": ("#58d68d", "D", 420.0),
    "rising star": ("#d62728", "*", 1100.0),
    "co-author": ("#7fb3d5", "o", 420.0),
}
LineStyle = Literal["solid", "dashed", "dotted"]
EDGE_STYLE: dict[str, tuple[str, LineStyle]] = {
    "authored": ("#1f77b4", "solid"),
    "semantic": ("#7f8c8d", "dashed"),
    "has topic": ("#27ae60", "dotted"),
    "cites": ("#c0392b", "solid"),
    "co-authored": ("#5d6d7e", "solid"),
}
DIRECTED = {"cites"}


@dataclass
class SmallGraph:
    """Nodes {id: (label, kind)} and edges (source, target, kind, weight); `layers` places node kinds in
    columns, left to right, for a layered picture (empty: a force layout around the first node)."""

    title: str
    nodes: dict[str, tuple[str, str]] = field(default_factory=dict)
    edges: list[tuple[str, str, str, float]] = field(default_factory=list)
    layers: dict[str, int] = field(default_factory=dict)

    def add_node(self, node_id: str, label: str, kind: str) -> None:
        self.nodes.setdefault(node_id, (label, kind))

    def add_edge(self, source: str, target: str, kind: str, weight: float = 1.0) -> None:
        if source in self.nodes and target in self.nodes and source != target:
            self.edges.append((source, target, kind, float(weight)))

    def kinds(self) -> set[str]:
        return {kind for _, kind in self.nodes.values()}


def _positions(graph: SmallGraph, nx) -> dict[str, tuple[float, float]]:
    g = nx.Graph()
    g.add_nodes_from(graph.nodes)
    g.add_weighted_edges_from((s, t, w) for s, t, _, w in graph.edges)
    if graph.layers:
        for node, (_, kind) in graph.nodes.items():
            g.nodes[node]["layer"] = graph.layers.get(kind, max(graph.layers.values()) + 1)
        return nx.multipartite_layout(g, subset_key="layer")
    first = next(iter(graph.nodes))
    return nx.spring_layout(g, seed=0, weight="weight", pos={first: (0.0, 0.0)}, fixed=[first] if len(g) > 1
                            else None, k=1.2 / max(len(g), 1) ** 0.5)


def draw(graph: SmallGraph, path: str | Path, caption: str = "") -> Path:
    """Lay the graph out and write it as a PNG (edge width by weight, a legend of the kinds shown)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.lines import Line2D

    if not graph.nodes:
        raise ValueError("nothing to draw: the graph has no nodes")
    pos = _positions(graph, nx)
    fig, ax = plt.subplots(figsize=(11, 7.5))
    top = max((w for *_, w in graph.edges), default=1.0) or 1.0
    for s, t, kind, w in graph.edges:
        colour, style = EDGE_STYLE.get(kind, ("#999999", "solid"))
        # Citations point from the citing paper. In a layered picture an edge inside one column, or one that
        # skips a column, bends: straight, it would run through the nodes between its ends.
        bend = 0.0
        if graph.layers:
            span = abs(graph.layers.get(graph.nodes[s][1], 0) - graph.layers.get(graph.nodes[t][1], 0))
            bend = 0.35 if span == 0 else 0.12 if span > 1 else 0.0
            if kind in DIRECTED and span > 0:
                bend = -bend  # the other way round from a similarity edge between the same two nodes
        ax.annotate("", xy=pos[t], xytext=pos[s], zorder=1,
                    arrowprops={"arrowstyle": "-|>" if kind in DIRECTED else "-", "color": colour,
                                "linestyle": style, "linewidth": 0.8 + 3.2 * w / top, "alpha": 0.75,
                                "shrinkA": 9, "shrinkB": 9, "mutation_scale": 14,
                                "connectionstyle": f"arc3,rad={bend}"})
    for node, (label, kind) in graph.nodes.items():
        colour, marker, size = NODE_STYLE.get(kind, ("#bbbbbb", "o", 400.0))
        x, y = pos[node]
        ax.scatter([x], [y], s=size, c=colour, marker=marker, edgecolors="#333333", linewidths=0.8, zorder=2)
        ax.annotate("\n".join(textwrap.wrap(label, 28)[:3]), (x, y), xytext=(0, -14), textcoords="offset points",
                    ha="center", va="top", fontsize=7.5, zorder=3)
    shown_nodes = [k for k in NODE_STYLE if k in graph.kinds()]
    shown_edges = [k for k in EDGE_STYLE if any(kind == k for *_, kind, _ in graph.edges)]
    handles = [Line2D([], [], marker=NODE_STYLE[k][1], color="w", markerfacecolor=NODE_STYLE[k][0],
                      markeredgecolor="#333333", markersize=10, label=k) for k in shown_nodes]
    handles += [Line2D([], [], color=EDGE_STYLE[k][0], linestyle=EDGE_STYLE[k][1], label=k) for k in shown_edges]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    ax.set_title(graph.title, fontsize=11)
    if caption:
        fig.text(0.01, 0.01, "\n".join(textwrap.wrap(caption, 170)[:2]), fontsize=8, color="#444444")
    ax.margins(0.12)
    ax.axis("off")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
