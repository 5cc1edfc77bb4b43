"""`ingest --bulk` (Neo4j's offline importer) against the transactional path, on a real managed Neo4j.

The two loads of the same inputs must give the same graph, compared by a canonical dump (every node's
labels and properties, every relationship by type, ends and properties; load timestamps by presence).
The bulk path stops and restarts its server, so these tests run on a server of their own (`bulk_settings`,
one for the session: tests/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from scholargraph.cli import main
from scholargraph.synth import SynthParams, generate
from scholargraph.synth.params import CORPUS_FILES
from tests.conftest import REPO, open_test_store

FIXTURES = REPO / "tests" / "fixtures" / "ingest"


def _env(settings) -> dict[str, str]:
    return {"SCHOLARGRAPH_HOME": str(settings.home), "SCHOLARGRAPH_NEO4J_PORT": str(settings.neo4j_port),
            "SCHOLARGRAPH_NEO4J_HTTP_PORT": "0",
            "SCHOLARGRAPH_NEO4J_URI": "", "SCHOLARGRAPH_NEO4J_PASSWORD": "", "SCHOLARGRAPH_HEAP": settings.heap,
            "SCHOLARGRAPH_PAGECACHE": settings.pagecache, "SCHOLARGRAPH_JVM_OPTIONS": settings.jvm_options}


def ingest_cli(settings, fmt: str, paths, *extra: str):
    return CliRunner().invoke(main, ["--quiet", "ingest", fmt, *map(str, paths), "--max-bad-ratio", "1",
                                     *extra], env=_env(settings))


def reset(settings) -> None:
    with open_test_store(settings) as store:
        store.reset()


def dump(settings) -> list[str]:
    with open_test_store(settings) as store:
        return sorted(store.dump_lines())


def loads_agree(settings, fmt: str, paths, transactional_after=None) -> list[str]:
    """Load `paths` transactionally, then in bulk (each into an empty database); the dumps must agree.
    `transactional_after` = (fmt, paths) ingested without --bulk after each load."""
    dumps, summaries = [], []
    for extra in ((), ("--bulk",)):
        reset(settings)
        result = ingest_cli(settings, fmt, paths, *extra)
        assert result.exit_code == 0, result.output
        if transactional_after:
            again = ingest_cli(settings, *transactional_after)
            assert again.exit_code == 0, again.output
        dumps.append(dump(settings))
        # The loader's summary (records, papers, edges, stubs, quarantine) is the same either way.
        summaries.append([line for line in result.output.splitlines()
                          if line.strip().split(" ")[0] in ("records", "papers", "edges", "stubs", "quarantine")])
    transactional, bulk = dumps
    missing = sorted(set(transactional) - set(bulk))[:5]
    extra_lines = sorted(set(bulk) - set(transactional))[:5]
    assert transactional == bulk, f"only transactional: {missing}\nonly bulk: {extra_lines}"
    assert summaries[0] == summaries[1]
    return bulk


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_aminer_fixtures_bulk_equals_transactional(bulk_settings):
    lines = loads_agree(bulk_settings, "aminer", [FIXTURES / "aminer_v10.jsonl", FIXTURES / "aminer_v12.json"])
    assert any('"stub": true' in line for line in lines)  # a cited paper outside the dump
    assert any(line.startswith('["rel", "CITES"') for line in lines)


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_s2_fixtures_bulk_equals_transactional(bulk_settings):
    # Papers, then abstract and citation rows that only fill in (partial records).
    loads_agree(bulk_settings, "s2", [FIXTURES / name for name in
                                      ("s2_papers.jsonl", "s2_abstracts.jsonl", "s2_citations.jsonl",
                                       "s2_graph.json")])


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_openalex_affiliations_bulk_equal_transactional(bulk_settings):
    lines = loads_agree(bulk_settings, "openalex", [FIXTURES / "openalex_works.jsonl"])
    assert any('"affiliations": ["2018|Impactstory"]' in line for line in lines)  # with the paper's year


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_bibtex_fixture_bulk_equals_transactional(bulk_settings):
    lines = loads_agree(bulk_settings, "bibtex", [FIXTURES / "sample.bib"])
    assert any("PaperAlias" in line for line in lines) or any('"doi"' in line for line in lines)


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_alias_folds_bulk_equal_transactional(bulk_settings, tmp_path):
    """References by source id before the record arrives with its DOI: the stub is folded into the DOI
    node, its citers move over, a self-reference through the alias is dropped; a record seen again
    without its DOI in the same batch is folded at once, its own edges dropped (as the queries do)."""
    def work(wid, doi=None, refs=(), title=None, year=2019):
        return {"id": f"https://openalex.org/{wid}", "doi": doi and f"https://doi.org/{doi}",
                "title": title or f"Work {wid}", "publication_year": year,
                "authorships": [{"author_position": "first",
                                 "author": {"id": f"https://openalex.org/A{wid}", "display_name": f"Ann {wid}"}}],
                "referenced_works": [f"https://openalex.org/{r}" for r in refs]}
    rows = [work("W1", refs=["W2", "W3"]), work("W4", refs=["W2"]),
            work("W2", doi="10.1234/two", refs=["W1", "W2"]),  # W2 cites itself by source id
            work("W5", doi="10.1234/FIVE", refs=["W2", "W9"]), work("W5", refs=["W1"], title="Again")]
    path = tmp_path / "works.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n")
    lines = loads_agree(bulk_settings, "openalex", [path])
    assert not any('"id": "openalex:W2"' in line and line.startswith('["node", ["Paper"]') for line in lines)
    assert any('"id": "openalex:W2"' in line and "PaperAlias" in line for line in lines)
    cites = [json.loads(line) for line in lines if line.startswith('["rel", "CITES"')]
    assert ["openalex:W1", "10.1234/two"] in [[c[3], c[5]] for c in cites]
    assert not any(c[3] == c[5] for c in cites)


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_synthetic_world_bulk_equals_transactional(bulk_settings, tmp_path):
    out = tmp_path / "world"
    generate(SynthParams(papers=1500, seed=5, reviewer_queries=3, citation_queries=5), out)
    lines = loads_agree(bulk_settings, "aminer", [out / CORPUS_FILES["aminer"]])
    assert sum(line.startswith('["rel", "CITES"') for line in lines) > 5000


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_transactional_ingest_on_a_bulk_loaded_graph(bulk_settings, tmp_path):
    """Later incremental ingests work on a bulk-loaded graph exactly as on a transactional one."""
    loads_agree(bulk_settings, "s2", [FIXTURES / "s2_papers.jsonl"],
                transactional_after=("openalex", [FIXTURES / "openalex_works.jsonl"]))


def test_bulk_refuses_a_database_with_data(bulk_settings):
    reset(bulk_settings)
    assert ingest_cli(bulk_settings, "aminer", [FIXTURES / "aminer_v10.jsonl"]).exit_code == 0
    before = dump(bulk_settings)
    result = ingest_cli(bulk_settings, "bibtex", [FIXTURES / "sample.bib"], "--bulk")
    assert result.exit_code == 2
    assert "empty database" in result.output and "without --bulk" in result.output
    assert "Traceback" not in result.output
    assert dump(bulk_settings) == before  # nothing touched


@pytest.mark.long(reason="an offline import stops and restarts its server")
def test_bulk_quarantines_bad_records_and_keeps_files_on_request(bulk_settings, tmp_path):
    reset(bulk_settings)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(Path(FIXTURES / "aminer_v10.jsonl").read_text() + '{"id": "x", "title": \n')
    quarantine = tmp_path / "q.jsonl"
    result = ingest_cli(bulk_settings, "aminer", [bad], "--bulk", "--quarantine", str(quarantine),
                        "--import-dir", str(tmp_path / "imp"), "--keep-import-files")
    assert result.exit_code == 0, result.output
    entries = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert any(e["line"] == 5 and e["file"].endswith("bad.jsonl") for e in entries)
    assert "quarantine 3" in result.output
    kept = list((tmp_path / "imp").glob("bulk-*/csv/papers.csv"))
    assert len(kept) == 1 and kept[0].read_text().startswith(":ID(Paper),id,title")
