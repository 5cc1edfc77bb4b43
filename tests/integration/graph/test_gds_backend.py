"""PageRank backends agree: SciPy (networkx's algorithm) in process vs Neo4j Graph Data Science on the server."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import spearmanr

from scholargraph.graph.features import FeatureOptions, run_features
from scholargraph.graph.neo4j_store import Neo4jStore
from scholargraph.ingest.loader import ingest
from scholargraph.server import local_server
from scholargraph.synth import SynthParams, generate


@pytest.mark.long(reason="starts a server of its own with the GDS plugin")
def test_networkx_and_gds_pagerank_agree(spare_settings, tmp_path):
    settings = replace(spare_settings, plugins="apoc,gds", heap="1g")
    generate(SynthParams(papers=600, seed=3, reviewer_queries=2, citation_queries=2), tmp_path / "w")
    local_server.start(settings, quiet=True)
    try:
        with Neo4jStore(settings.uri, password=settings.password) as store:
            assert store.has_gds()
            store.apply_schema()
            ingest(store, "aminer", [str(tmp_path / "w" / "corpus.aminer.jsonl")], quarantine_path=tmp_path / "q",
                   checkpoint_dir=tmp_path / "c", quiet=True)
            options = FeatureOptions(only=("networks", "pagerank"), tol=1e-10, max_iter=200)
            props = {"Paper": ["pagerank"], "Author": ["pagerank_coauthor", "pagerank_citation"],
                     "Venue": ["pagerank_citation"]}

            def read_all():
                return {(label, p): dict(zip(*[store.read_nodes(label, [p])[0], store.read_nodes(label, [p])[1][p]]))
                        for label, names in props.items() for p in names}

            run_features(store, tmp_path / "m", options)
            scipy_scores = read_all()
            run_features(store, tmp_path / "m", replace(options, backend="gds"), force=True)
            gds_scores = read_all()
        for key, ours in scipy_scores.items():
            ids = sorted(ours)
            a = np.array([ours[i] for i in ids])
            b = np.array([gds_scores[key][i] for i in ids])
            assert spearmanr(a, b).statistic >= 0.999, key
            assert np.allclose(a, b, atol=1e-4), key
    finally:
        local_server.stop(settings)
