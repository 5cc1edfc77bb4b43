"""Test worlds for the Spark engine: a synthetic snapshot and its tables in the Parquet snapshot layout."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from scholargraph.graph.snapshot import NO_VENUE, NO_YEAR, GraphSnapshot


def synthetic_snapshot(out: Path, papers: int, seed: int, with_text: bool = False) -> GraphSnapshot:
    from scholargraph.ingest.offline import snapshot_from_files
    from scholargraph.synth import SynthParams, generate

    generate(SynthParams(papers=papers, seed=seed), out)
    return snapshot_from_files("aminer", [str(out / "corpus.aminer.jsonl")], with_text=with_text)


def write_snapshot_tables(s: GraphSnapshot, out: Path) -> Path:
    """The five tables of `s` as one part file each (what `export parquet` writes for the same graph)."""
    titles, abstracts = s.text_fields()
    tables = {
        "papers": {"id": s.paper_ids,
                   "year": [None if y == NO_YEAR else int(y) for y in s.paper_year],
                   "stub": [bool(b) for b in s.paper_stub],
                   "venue_id": [None if v == NO_VENUE else s.venue_ids[v] for v in s.paper_venue],
                   "title": list(titles), "abstract": list(abstracts)},
        "authors": {"id": s.author_ids, "name": list(s.author_names or [None] * s.n_authors)},
        "venues": {"id": s.venue_ids, "name": list(s.venue_names or [None] * s.n_venues)},
    }
    coo = s.authorship.tocoo()
    tables["authorships"] = {"author_id": [s.author_ids[a] for a in coo.row],
                             "paper_id": [s.paper_ids[p] for p in coo.col],
                             "position": [int(x) for x in coo.data]}
    cit = s.citations.tocoo()
    tables["citations"] = {"citing_id": [s.paper_ids[i] for i in cit.row],
                           "cited_id": [s.paper_ids[j] for j in cit.col]}
    types = {"year": pa.int32(), "position": pa.int32(), "stub": pa.bool_()}
    for name, cols in tables.items():
        (out / name).mkdir(parents=True)
        arrays = {k: pa.array(v, type=types.get(k, pa.string())) for k, v in cols.items()}
        pq.write_table(pa.table(arrays), out / name / "part-00000.parquet")
    return out
