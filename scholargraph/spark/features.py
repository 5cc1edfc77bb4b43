"""`features --engine spark`: the networks, citation counts, PageRank, LDA topics and text vectors computed by
Spark over a Parquet snapshot and written back through the connector; the citation vectors (FastRP) stay in
process, over the same snapshot (docs/scale-out.md says why).

run_features (graph/features.py) keeps everything else: the skip when nothing changed, the ScoringRun, the
models on disk. This engine is what it calls for the "networks", "pagerank" and "topics" steps and the text
encoding (FeatureEngine).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scholargraph.config import Settings
from scholargraph.graph import parquet
from scholargraph.graph.features import ENCODE_CHUNK, FeatureOptions, encode_papers, topic_nodes
from scholargraph.graph.snapshot import GraphSnapshot
from scholargraph.graph.store import GraphStore
from scholargraph.graph.topics import TopicModel, fit_sample_fraction
from scholargraph.spark import graph as sg
from scholargraph.spark import neo4j_io
from scholargraph.spark import topics as st
from scholargraph.spark.session import neo4j_options, spark_session
from scholargraph.spark.vectors import encode_to_neo4j

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class SparkFeatureEngine:
    """Exports the graph (as of T when asked) to `work_dir` once per run, then computes there.

    `snapshot_dir`, when given, is an existing export to compute on instead (a cluster reads it from shared
    storage); it is then not exported again, and its manifest must have the run's `as_of`."""

    spark: SparkSession
    store: GraphStore
    connector_options: dict[str, str]
    work_dir: Path
    snapshot_dir: Path | None = None
    keep_snapshot: bool = False
    quiet: bool = True
    export_workers: int = parquet.EXPORT_WORKERS  # id ranges the export reads at once (graph/parquet.py)
    name: str = "spark"
    timings: dict[str, float] = field(default_factory=dict)
    pagerank_iterations: dict[str, int] = field(default_factory=dict)
    network_rows: dict[str, int] = field(default_factory=dict)
    encode_stats: dict[str, float] = field(default_factory=dict)  # of the last text-vectors step (spark/vectors.py)
    _exported: dict[int | None, Path] = field(default_factory=dict)  # as_of -> this run's export
    _manifests: dict[int | None, dict] = field(default_factory=dict)

    # --- the snapshot -----------------------------------------------------------------------------------

    def snapshot_path(self, as_of: int | None) -> Path:
        """The Parquet snapshot of this run, exported on first use."""
        if self.snapshot_dir is not None:
            manifest = parquet.read_manifest(self.snapshot_dir)
            if manifest.get("as_of") != as_of:
                from scholargraph.errors import UsageError

                raise UsageError(f"the snapshot at {self.snapshot_dir} is as of {manifest.get('as_of')}, "
                                 f"not {as_of}: export one with `scholargraph export parquet DIR"
                                 f"{'' if as_of is None else f' --as-of {as_of}'}`")
            self._manifests[as_of] = manifest
            return self.snapshot_dir
        if as_of not in self._exported:
            t0 = time.perf_counter()
            target = self.work_dir / ("current" if as_of is None else f"as-of-{as_of}")
            shutil.rmtree(target, ignore_errors=True)
            self._manifests[as_of] = parquet.export_parquet(self.store, target, as_of=as_of, with_text=True,
                                                            quiet=self.quiet, workers=self.export_workers)
            self._exported[as_of] = target
            self.timings["export"] = time.perf_counter() - t0
        return self._exported[as_of]

    @property
    def watermark(self) -> int | None:
        """The server time read before the current graph's export was pulled (None before it)."""
        manifest = self._manifests.get(None)
        return None if manifest is None else manifest.get("watermark")

    def read_snapshot(self, as_of: int | None, with_text: bool = True) -> GraphSnapshot:
        """The same snapshot in process, for the steps that stay here (topics, vectors, model scoring)."""
        path = self.snapshot_path(as_of)
        t0 = time.perf_counter()
        snapshot = parquet.read_snapshot(path, with_text=with_text)
        self.timings["read snapshot"] = time.perf_counter() - t0
        return snapshot

    def close(self) -> None:
        """Remove this run's exports (unless keep_snapshot); a later call exports afresh."""
        if not self.keep_snapshot:
            for path in self._exported.values():
                shutil.rmtree(path, ignore_errors=True)
        self._exported.clear()
        self._manifests.clear()

    # --- the steps --------------------------------------------------------------------------------------

    def network_features(self, options: FeatureOptions, version: str, log: Callable[[str], None]
                         ) -> tuple[dict[str, int], dict[str, int]]:
        """Compute and write the requested network steps; returns (write counts, sizes of the graph)."""
        from pyspark.sql import functions as F

        as_of = options.as_of
        g = sg.read_graph(self.spark, self.snapshot_path(as_of))
        sfx = "" if as_of is None else f"_as_of_{as_of}"
        counts: dict[str, int] = {}
        opts = self.connector_options

        def timed(name: str, fn: Callable[[], Any]) -> Any:
            t0 = time.perf_counter()
            result = fn()
            self.timings[name] = time.perf_counter() - t0
            log(f"{name} (spark): {self.timings[name]:.1f}s")
            return result

        # Cached: every step below reads them, and Parquet would be decoded again for each.
        g.papers = g.papers.select("id", "venue_id").persist()
        g.authorships.persist()
        g.citations.persist()
        sizes = {"papers": g.papers.count(), "authors": g.authors.count(), "venues": g.venues.count()}
        acn = sg.coauthor_edges(g).persist()
        accn = sg.author_citation_edges(g).persist()
        vccn = sg.venue_citation_edges(g).persist()
        cites = sg.paper_citation_counts(g).persist()
        rows = timed("networks", lambda: [df.count() for df in (acn, accn, vccn)])
        self.network_rows = dict(zip(("ACN", "ACCN", "VCCN"), rows))  # directed rows (ACN: both directions)
        if as_of is None and "networks" in options.only:
            derived = (("COAUTHOR", acn, "Author", True), ("CITES_AUTHOR", accn, "Author", False),
                       ("CITES_VENUE", vccn, "Venue", False))
            for rel, edges, label, symmetric in derived:
                # An undirected co-author edge is stored once, from the smaller id to the larger.
                rows = edges.where(F.col("src") < F.col("dst")) if symmetric else edges
                rows = rows.select("src", "dst", F.col("weight").cast("long").alias("weight"))
                counts[rel] = timed(f"write {rel}", lambda rows=rows, rel=rel, label=label:
                                    neo4j_io.write_edges(rows, opts, rel, label, version))
                self.store.delete_stale_edges(rel, version)
        counts["Paper.nCitation"] = timed("write nCitation", lambda: neo4j_io.write_node_properties(
            cites.withColumnRenamed("n_citation", "n_citation" + sfx), opts, "Paper"))
        if sizes["venues"]:
            avg = sg.venue_avg_citation(g, cites).withColumnRenamed("avg_citation", "avg_citation" + sfx)
            timed("write avgCitation", lambda: neo4j_io.write_node_properties(avg, opts, "Venue"))
        if "pagerank" in options.only:
            pr = {"damping": options.damping, "max_iter": options.max_iter, "tol": options.tol,
                  "strict": options.strict}
            networks = (("papers", g.papers, sg.citation_edges(g)), ("ACN", g.authors, acn),
                        ("ACCN", g.authors, accn), ("VCCN", g.venues, vccn))
            scores = {}
            for name, nodes, edges in networks:
                if name == "VCCN" and not sizes["venues"]:
                    continue
                result = timed(f"PageRank {name}", lambda nodes=nodes, edges=edges: sg.pagerank(nodes, edges, **pr))
                self.pagerank_iterations[name] = result.iterations
                scores[name] = result.scores
            counts["Paper.pagerank"] = timed("write Paper.pagerank", lambda: neo4j_io.write_node_properties(
                scores["papers"].withColumnRenamed("score", "pagerank" + sfx), opts, "Paper"))
            authors = (scores["ACN"].withColumnRenamed("score", "pagerank_coauthor" + sfx)
                       .join(scores["ACCN"].withColumnRenamed("score", "pagerank_citation" + sfx), "id"))
            counts["Author.pagerank"] = timed("write Author.pagerank",
                                              lambda: neo4j_io.write_node_properties(authors, opts, "Author"))
            if "VCCN" in scores:
                timed("write Venue.pagerank", lambda: neo4j_io.write_node_properties(
                    scores["VCCN"].withColumnRenamed("score", "pagerank_citation" + sfx), opts, "Venue"))
        for frame in (acn, accn, vccn, cites, g.papers, g.authorships, g.citations):
            frame.unpersist()
        return counts, sizes

    def topic_features(self, options: FeatureOptions, topic_model: TopicModel | None, version: str,
                       log: Callable[[str], None]) -> tuple[TopicModel, dict[str, int]]:
        """The current graph's topics on Spark (spark/topics.py): `topic_model` reused when given, else MLlib's
        online LDA trained on the snapshot's texts; every paper's mixture and HAS_TOPIC edges and every author's
        topic diversity and authority written through the connector."""
        from pyspark.sql import functions as F

        g = sg.read_graph(self.spark, self.snapshot_path(None))
        opts = self.connector_options
        t0 = time.perf_counter()
        if topic_model is None:
            papers = g.papers
            if options.topic_sample is not None:
                n_papers = papers.count()
                fraction = fit_sample_fraction(options.topic_sample, n_papers)
                if fraction is not None:
                    papers = st.fit_sample(papers, fraction, options.seed)
                    log(f"LDA fit sample (spark): about {options.topic_sample:,} of {n_papers:,} papers")
            topic_model, stages = st.fit_topic_model(
                self.spark, papers, TopicModel(num_topics=options.num_topics, random_state=options.seed), log)
            self.timings.update({f"LDA {name}": seconds for name, seconds in stages.items()})
            self.timings["LDA fit"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        frame, saved = st.paper_topics(self.spark, g.papers, topic_model, self.work_dir.parent / "models")
        theta = frame.persist()
        counts: dict[str, int] = {}
        try:
            vectors = theta.select("id", F.col("theta").cast("array<float>").alias("topic_vector"))
            counts["Paper.topicVector"] = neo4j_io.write_node_properties(vectors, opts, "Paper")
            self.store.upsert_topics(topic_nodes(topic_model, version))
            counts["HAS_TOPIC"] = neo4j_io.write_edges(st.topic_edges(theta, options.topic_threshold), opts,
                                                       "HAS_TOPIC", "Paper", version, dst_label="Topic")
            self.store.delete_stale_edges("HAS_TOPIC", version)
            authors = st.author_topic_features(g, theta, sg.paper_citation_counts(g))
            counts["Author.topicFeatures"] = neo4j_io.write_node_properties(authors, opts, "Author")
        finally:
            theta.unpersist()
            st.remove_saved(saved)
        self.timings["LDA infer and write"] = time.perf_counter() - t0
        log(f"topics (spark): {counts['Paper.topicVector']:,} papers, {counts['HAS_TOPIC']:,} HAS_TOPIC edges, "
            f"{self.timings['LDA infer and write']:.1f}s")
        return topic_model, counts

    def encode_papers(self, snapshot: GraphSnapshot, encoder, mask: np.ndarray | None = None, quiet: bool = True,
                      sink: Any = None, chunk: int = ENCODE_CHUNK) -> np.ndarray | None:
        """Text vectors on Spark (spark/vectors.py), written through the connector as each partition finishes;
        `snapshot` is this run's export read in process (the same paper order). Without `sink` the caller
        wants the array (an as-of run): encoded in process."""
        if sink is None:
            return encode_papers(snapshot, encoder, mask, quiet=quiet, chunk=chunk)
        idx = np.arange(snapshot.n_papers) if mask is None else np.flatnonzero(mask)
        stats = encode_to_neo4j(self.spark, self.snapshot_path(None) / "papers", encoder,
                                [snapshot.paper_ids[int(i)] for i in idx], self.connector_options,
                                self.work_dir.parent / "encoders", chunk)
        self.encode_stats = stats
        return None


@contextmanager
def chosen_engine(settings: Settings, store: GraphStore, engine: str, master: str | None = None,
                  snapshot_dir: Path | None = None, keep_snapshot: bool = False, quiet: bool = True
                  ) -> Iterator[SparkFeatureEngine | None]:
    """What `--engine` names: the Spark engine for "spark" (see spark_feature_engine), None (in process)
    otherwise. Starts no Spark for "in-process"; pyspark is imported only here, when chosen."""
    if engine != "spark":
        yield None
        return
    with spark_feature_engine(settings, store, master, snapshot_dir, keep_snapshot, quiet=quiet) as spark_engine:
        yield spark_engine


@contextmanager
def spark_feature_engine(settings: Settings, store: GraphStore, master: str | None = None,
                         snapshot_dir: Path | None = None, keep_snapshot: bool = False,
                         quiet: bool = True) -> Iterator[SparkFeatureEngine]:
    """A SparkSession and the engine on it for one command; the run's export is removed afterwards unless
    `keep_snapshot` (it sits under SCHOLARGRAPH_HOME/spark/snapshots). A given `snapshot_dir` is verified
    first (every part there, every page's checksum, the manifest's row counts): Spark reads the parts without
    checking them, so a missing or damaged one would otherwise become wrong features, silently."""
    if snapshot_dir is not None:
        parquet.verify_snapshot(snapshot_dir)  # before Spark starts: nothing is computed or written
    with spark_session(settings, master, quiet=quiet) as spark:
        engine = SparkFeatureEngine(spark, store, neo4j_options(settings, store.uri),
                                    work_dir=settings.home / "spark" / "snapshots", snapshot_dir=snapshot_dir,
                                    keep_snapshot=keep_snapshot, quiet=quiet)
        try:
            yield engine
        finally:
            engine.close()
