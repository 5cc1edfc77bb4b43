"""`reviewers profile` through the CLI and a real Neo4j: a reviewer's expertise settings, set with ids as the
dump gives them, survive a re-ingest of the same dump and are still honoured (and shown) by recommend."""

from __future__ import annotations

import json

import pytest

from tests.cli import run as cli
from tests.conftest import cli_env, open_test_store

FIELDS = {"a": "zorblat quenfir mavotel", "b": "plonko vendrix caluth"}


def write_dump(path) -> None:
    """AMiner records: two fields, three authors each with four papers (2001-2004), at venues KDD and ICML."""
    lines = []
    for field, words in FIELDS.items():
        for k in range(3):
            for year in range(2001, 2005):
                lines.append({"id": f"{field}{k}-{year}", "title": f"{words} {field}{k}", "abstract": f"{words} study",
                              "year": year, "venue": {"raw": "KDD" if year < 2003 else "ICML"},
                              "authors": [{"name": f"Author {field.upper()} {k}", "id": f"{field}{k}"}]})
    lines.append({"id": "sub", "title": FIELDS["a"], "abstract": f"{FIELDS['a']} study", "year": 2004,
                  "venue": {"raw": "ICML"}, "authors": [{"name": "Sub Mitter", "id": "sub"}]})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


@pytest.mark.long(reason="ingest, features, training and recommendations through the CLI")
def test_settings_survive_a_reingest_and_shape_the_suggestions(neo4j_settings, tmp_path):
    env = cli_env(neo4j_settings, tmp_path / "home")
    dump = tmp_path / "dump.aminer.jsonl"
    write_dump(dump)
    with open_test_store(neo4j_settings) as store:
        store.apply_schema()
        store.reset()
        try:
            cli(env, "ingest", "aminer", str(dump))
            cli(env, "reviewers", "train", "--min-papers", "2", "--training-queries", "10", "--steps", "10")
            # Bare ids, as the dump gives them; the 2001 paper excluded, KDD (by name) weighted down.
            out = cli(env, "reviewers", "profile", "set", "a1", "--exclude", "a1-2001", "--since", "2002",
                      "--weight", "venue:KDD=0.5").stdout
            assert "aminer:a1: 1 paper excluded; since 2002; venue:venue:kdd x0.5" in out
            bad = cli(env, "reviewers", "profile", "set", "a1", "--exclude", "nope-1999", check=False)
            assert bad.returncode == 2 and "--exclude" in bad.stderr and "nope-1999" in bad.stderr
            assert "Traceback" not in bad.stderr

            cli(env, "ingest", "aminer", str(dump))  # the same dump again
            shown = [json.loads(x) for x in cli(env, "reviewers", "profile", "show", "aminer:a1", "--format",
                                                "jsonl").stdout.splitlines()]
            assert [(p["paper_id"], p["weight"], p["left_out"]) for p in shown] == [
                ("aminer:a1-2001", 0.0, "excluded"), ("aminer:a1-2002", 0.5, None),
                ("aminer:a1-2003", 1.0, None), ("aminer:a1-2004", 1.0, None)]

            rows = [json.loads(x) for x in cli(env, "reviewers", "recommend", "--paper", "sub", "--k", "6",
                                               "--format", "jsonl").stdout.splitlines()]
            by_reviewer = {r["reviewer_id"]: r for r in rows}
            a1 = by_reviewer["aminer:a1"]
            assert a1["expertise_settings"]["excluded"] == ["aminer:a1-2001"]
            assert a1["expertise_settings"]["since"] == 2002
            assert "aminer:a1-2001" not in {p["paper_id"] for p in a1["papers"]}
            assert "expertise_settings" not in by_reviewer["aminer:a2"]
            table = cli(env, "reviewers", "recommend", "--paper", "sub", "--k", "6").stdout
            assert "expertise settings: 1 paper excluded; since 2002; venue:venue:kdd x0.5" in table
        finally:
            store.reset()
