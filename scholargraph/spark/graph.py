"""Graph features as Spark DataFrame computations over a Parquet snapshot (graph/parquet.py's layout).

The same definitions as the in-process pipeline (graph/snapshot.py, graph/networks.py, graph/pagerank.py):
- the snapshot's papers are the papers table; a citation counts once, when both ends are papers and it is not
  a self-citation; an authorship counts once per (author, paper); authors are those of the authors table and
  of the authorships, venues those of the venues table and of the papers;
- ACN `[a, b]` = papers a and b wrote together (a != b, both directions); ACCN `[a, b]` = (paper of a, paper of
  b) citation pairs (a != b); VCCN `[u, v]` = citations from venue u to venue v (u != v);
- nCitation = in-snapshot citations of a paper; avgCitation = mean nCitation of a venue's papers;
- PageRank: networkx's power iteration (row-normalised by weight, dangling mass spread uniformly, uniform
  teleport, stop when the L1 change < n * tol), here one DataFrame join and one aggregate per iteration.
Nodes are keyed by their string ids throughout: no global index has to be built (or fit in one process).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from scholargraph.graph.pagerank import PageRankNotConverged

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

TABLES = ("papers", "authors", "venues", "authorships", "citations")


@dataclass
class SparkGraph:
    """The snapshot's tables as DataFrames, cleaned to the snapshot's definitions (see the module docstring)."""

    papers: DataFrame  # id, year, stub, venue_id (+ title, abstract when exported with text)
    authors: DataFrame  # id
    venues: DataFrame  # id
    authorships: DataFrame  # author_id, paper_id (distinct, papers of the snapshot only)
    citations: DataFrame  # citing_id, cited_id (distinct, both ends papers, no self-citations)


def read_graph(spark: SparkSession, snapshot_dir: Path | str) -> SparkGraph:
    """The Parquet snapshot at `snapshot_dir` (read on the executors: a cluster reads it from shared storage)."""
    from pyspark.sql import functions as F

    base = str(snapshot_dir).rstrip("/")
    raw = {name: spark.read.parquet(f"{base}/{name}") for name in TABLES}
    papers = raw["papers"].dropDuplicates(["id"])
    ids = papers.select(F.col("id").alias("paper_id"))
    authorships = (raw["authorships"].select("author_id", "paper_id").dropDuplicates()
                   .join(ids, "paper_id", "left_semi"))
    citations = (raw["citations"].select("citing_id", "cited_id").where(F.col("citing_id") != F.col("cited_id"))
                 .dropDuplicates()
                 .join(ids.withColumnRenamed("paper_id", "citing_id"), "citing_id", "left_semi")
                 .join(ids.withColumnRenamed("paper_id", "cited_id"), "cited_id", "left_semi"))
    authors = raw["authors"].select("id").union(authorships.select(F.col("author_id").alias("id"))).distinct()
    venues = (raw["venues"].select("id")
              .union(papers.where(F.col("venue_id").isNotNull()).select(F.col("venue_id").alias("id"))).distinct())
    return SparkGraph(papers=papers, authors=authors, venues=venues, authorships=authorships, citations=citations)


# --- networks ---------------------------------------------------------------------------------------------


def _weighted_pairs(pairs: DataFrame) -> DataFrame:
    """(src, dst, weight): how often each pair occurs among `pairs`' rows, self-pairs dropped."""
    from pyspark.sql import functions as F

    return (pairs.where(F.col("src") != F.col("dst"))
            .groupBy("src", "dst").agg(F.count(F.lit(1)).cast("double").alias("weight")))


def coauthor_edges(g: SparkGraph) -> DataFrame:
    """ACN as directed rows (src, dst, weight): both directions of every co-author pair, weight = papers."""
    from pyspark.sql import functions as F

    a = g.authorships.select(F.col("author_id").alias("src"), "paper_id")
    b = g.authorships.select(F.col("author_id").alias("dst"), "paper_id")
    return _weighted_pairs(a.join(b, "paper_id"))


def author_citation_edges(g: SparkGraph) -> DataFrame:
    """ACCN rows (src, dst, weight): (paper of src) -> (paper of dst) citation pairs, src != dst."""
    from pyspark.sql import functions as F

    citing = g.authorships.select(F.col("author_id").alias("src"), F.col("paper_id").alias("citing_id"))
    cited = g.authorships.select(F.col("author_id").alias("dst"), F.col("paper_id").alias("cited_id"))
    return _weighted_pairs(g.citations.join(citing, "citing_id").join(cited, "cited_id"))


def venue_citation_edges(g: SparkGraph) -> DataFrame:
    """VCCN rows (src, dst, weight): citations from a paper in venue src to one in venue dst, src != dst."""
    from pyspark.sql import functions as F

    placed = g.papers.where(F.col("venue_id").isNotNull())
    citing = placed.select(F.col("id").alias("citing_id"), F.col("venue_id").alias("src"))
    cited = placed.select(F.col("id").alias("cited_id"), F.col("venue_id").alias("dst"))
    return _weighted_pairs(g.citations.join(citing, "citing_id").join(cited, "cited_id"))


def citation_edges(g: SparkGraph) -> DataFrame:
    """The paper citation network as rows (src, dst, weight 1)."""
    from pyspark.sql import functions as F

    return g.citations.select(F.col("citing_id").alias("src"), F.col("cited_id").alias("dst"),
                              F.lit(1.0).alias("weight"))


def paper_citation_counts(g: SparkGraph) -> DataFrame:
    """(id, n_citation) of every paper: in-snapshot citations received, 0 when none."""
    from pyspark.sql import functions as F

    counts = g.citations.groupBy(F.col("cited_id").alias("id")).agg(F.count(F.lit(1)).alias("n"))
    return (g.papers.select("id").join(counts, "id", "left")
            .select("id", F.coalesce(F.col("n"), F.lit(0)).cast("long").alias("n_citation")))


def venue_avg_citation(g: SparkGraph, counts: DataFrame) -> DataFrame:
    """(id, avg_citation) of every venue: the mean nCitation of its papers, null for a venue without any."""
    from pyspark.sql import functions as F

    placed = (g.papers.where(F.col("venue_id").isNotNull()).select("id", "venue_id").join(counts, "id")
              .groupBy(F.col("venue_id").alias("id")).agg(F.avg("n_citation").alias("avg_citation")))
    return g.venues.join(placed, "id", "left")


# --- PageRank ---------------------------------------------------------------------------------------------


@dataclass
class PageRankResult:
    scores: DataFrame  # id, score
    iterations: int
    error: float  # L1 change of the last iteration
    seconds_per_iteration: list[float] = field(default_factory=list)


def pagerank(nodes: DataFrame, edges: DataFrame, damping: float = 0.85, max_iter: int = 100, tol: float = 1e-6,
             strict: bool = True) -> PageRankResult:
    """PageRank of `nodes` (column id) over weighted `edges` (src, dst, weight), as graph/pagerank.py computes
    it: x starts uniform; x' = damping * (x P + sum(x[dangling]) / n) + (1 - damping) / n; stop when
    sum |x' - x| < n * tol (then x' is returned). Raises PageRankNotConverged after `max_iter` iterations
    when `strict` (with the last iterate collected into `.last`), else returns the last iterate.

    Each iteration is one join of the edges with the ranks, one aggregate (the L1 change and the dangling
    mass of the new ranks, in one pass) and a local checkpoint that cuts the lineage, so the plan stays one
    iteration deep however many iterations run."""
    import time

    import numpy as np
    from pyspark.sql import functions as F

    edges = edges.where(F.col("weight") > 0).groupBy("src", "dst").agg(F.sum("weight").alias("weight"))
    out = edges.groupBy("src").agg(F.sum("weight").alias("out"))
    transition = (edges.join(out, "src").select("src", "dst", (F.col("weight") / F.col("out")).alias("p"))
                  .localCheckpoint(eager=True))
    ranks = (nodes.select("id").distinct().join(out.select(F.col("src").alias("id"), F.lit(False).alias("linked")),
                                                "id", "left")
             .select("id", F.col("linked").isNull().alias("dangling")))
    n = ranks.count()
    if n == 0:
        return PageRankResult(scores=ranks.select("id", F.lit(0.0).alias("score")), iterations=0, error=0.0)
    ranks = ranks.withColumn("x", F.lit(1.0 / n)).localCheckpoint(eager=True)
    dangling_mass = float(ranks.where("dangling").agg(F.sum("x")).first()[0] or 0.0)
    teleport = (1.0 - damping) / n
    err = float("inf")
    timings: list[float] = []
    for iteration in range(1, max_iter + 1):
        t0 = time.perf_counter()
        contrib = (transition.join(ranks.select(F.col("id").alias("src"), "x"), "src")
                   .groupBy(F.col("dst").alias("id")).agg(F.sum(F.col("p") * F.col("x")).alias("c")))
        base = dangling_mass / n
        new = (ranks.join(contrib, "id", "left")
               .select("id", "dangling", F.col("x").alias("x_old"),
                       (F.lit(damping) * (F.coalesce(F.col("c"), F.lit(0.0)) + F.lit(base)) + F.lit(teleport))
                       .alias("x"))
               .localCheckpoint(eager=True))
        stats = new.agg(F.sum(F.abs(F.col("x") - F.col("x_old"))).alias("err"),
                        F.sum(F.when(F.col("dangling"), F.col("x")).otherwise(0.0)).alias("dm")).first()
        err, dangling_mass = float(stats["err"]), float(stats["dm"] or 0.0)
        ranks = new.drop("x_old")
        timings.append(time.perf_counter() - t0)
        if err < n * tol:
            return PageRankResult(ranks.select("id", F.col("x").alias("score")), iteration, err, timings)
    if strict:
        last = np.array([row["x"] for row in ranks.select("x").collect()], dtype=np.float64)
        raise PageRankNotConverged(max_iter, err, tol, last)
    return PageRankResult(ranks.select("id", F.col("x").alias("score")), max_iter, err, timings)
