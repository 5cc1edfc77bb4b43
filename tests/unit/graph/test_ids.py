"""Id resolution (qualified, bare, ambiguous, unknown, old whitespace forms) and whitespace-free output ids."""

from __future__ import annotations

import contextlib

import pytest
from click.testing import CliRunner

from scholargraph.errors import UsageError
from scholargraph.graph.ids import IdResolver, Resolution, output_id
from scholargraph.graph.snapshot import GraphSnapshot


def snapshot(aliases=None) -> GraphSnapshot:
    papers = [{"id": "10.1145/abc.def", "year": 2020}, {"id": "aminer:7", "year": 2021},
              {"id": "s2:deadbeef", "year": 2021}, {"id": "bibtex:smith:2020", "year": 2019}]
    authorships = [("s2author:1737249", "s2:deadbeef", 1), ("aminer:42", "aminer:7", 1),
                   ("openalex:42", "aminer:7", 2), ("name:ahmed_t_elthakeb", "10.1145/abc.def", 1),
                   ("orcid:0000-0002-1825-0097", "10.1145/abc.def", 2)]
    snap = GraphSnapshot.build(papers, authorships)
    if aliases:
        snap.extra["aliases"] = aliases
    return snap


def test_qualified_and_bare_ids_resolve():
    r = IdResolver.for_snapshot(snapshot()).resolve("author", ["s2author:1737249", "1737249",
                                                               "0000-0002-1825-0097"])
    assert r.ids == {"s2author:1737249": "s2author:1737249", "1737249": "s2author:1737249",
                     "0000-0002-1825-0097": "orcid:0000-0002-1825-0097"}
    assert r.unknown == [] and r.warning("--candidates") is None
    assert r.node_ids() == ["s2author:1737249", "orcid:0000-0002-1825-0097"]  # each once, in order
    assert r.given_forms() == {"s2author:1737249": "1737249", "orcid:0000-0002-1825-0097": "0000-0002-1825-0097"}


def test_paper_ids_in_any_spelling():
    r = IdResolver.for_snapshot(snapshot()).resolve("paper", [
        "https://doi.org/10.1145/ABC.DEF", "7", "aminer:7", " deadbeef ", "smith:2020"])
    assert r.ids == {"https://doi.org/10.1145/ABC.DEF": "10.1145/abc.def", "7": "aminer:7", "aminer:7": "aminer:7",
                     "deadbeef": "s2:deadbeef", "smith:2020": "bibtex:smith:2020"}


def test_a_papers_other_source_ids_resolve_through_its_aliases():
    r = IdResolver.for_snapshot(snapshot({"openalex:W9": "10.1145/abc.def"})).resolve("paper", ["openalex:W9", "W9"])
    assert r.ids == {"openalex:W9": "10.1145/abc.def", "W9": "10.1145/abc.def"}


def test_the_old_whitespace_form_of_a_name_id_resolves_to_the_new_one():
    r = IdResolver.for_snapshot(snapshot()).resolve("author", ["name:ahmed t elthakeb", "name:Ahmed T. Elthakeb"])
    assert set(r.ids.values()) == {"name:ahmed_t_elthakeb"} and len(r.ids) == 2


def test_an_ambiguous_bare_id_is_unknown_and_says_which_nodes_it_could_be():
    r = IdResolver.for_snapshot(snapshot()).resolve("author", ["42", "aminer:42"])
    assert r.ids == {"aminer:42": "aminer:42"}
    assert r.ambiguous == {"42": ["aminer:42", "openalex:42"]}
    warning = r.warning("--pool")
    assert "1 of 2 author ids" in warning and "42 (ambiguous: aminer:42, openalex:42)" in warning
    with pytest.raises(UsageError, match="names more than one author"):
        IdResolver.for_snapshot(snapshot()).resolve("author", ["42"]).require("--pool")


def test_unknown_ids_warn_with_their_count_and_five_examples():
    given = ["s2author:1737249"] + [f"999{i}" for i in range(7)]
    r = IdResolver.for_snapshot(snapshot()).resolve("author", given)
    assert r.unknown == given[1:]
    warning = r.warning("--candidates")
    assert warning.startswith("warning: --candidates: 7 of 8 author ids are not in the graph")
    assert "9990, 9991, 9992, 9993, 9994 and 2 more" in warning and "9995" not in warning
    assert r.require("--candidates") is r  # some are known: not an error


def test_none_known_is_a_usage_error_with_exit_code_2_and_the_expected_form():
    r = IdResolver.for_snapshot(snapshot()).resolve("author", ["1", "2"])
    with pytest.raises(UsageError) as err:
        r.require("--candidates")
    assert err.value.exit_code == 2
    message = str(err.value)
    assert "none of the 2 author ids given is in the graph" in message
    assert "s2author:1737249" in message and "bare id" in message  # the expected form, with an example
    assert Resolution("author", []).require("--pool").ids == {}  # nothing given: nothing to complain about


def test_the_store_lookup_answers_what_the_snapshot_does_not():
    asked = []

    def lookup(kind, forms):
        asked.append((kind, dict(forms)))
        return {"s2author:55": ["orcid:0000-0002-1825-0097"]} if "s2author:55" in forms else {}

    r = IdResolver.for_snapshot(snapshot(), lookup=lookup).resolve("author", ["s2author:1737249", "s2author:55"])
    assert r.ids["s2author:55"] == "orcid:0000-0002-1825-0097"
    assert asked[0] == ("author", {"s2author:55": ["s2author:55"]})  # only the ids the snapshot lacks


def test_without_a_snapshot_the_store_answers_direct_forms_first_then_bare_ones():
    def lookup(kind, forms):
        nodes = {"topic:3", "s2author:1737249"}
        return {g: [f for f in fs if f in nodes] for g, fs in forms.items() if any(f in nodes for f in fs)}

    resolver = IdResolver(lookup=lookup)
    assert resolver.resolve("topic", ["3"]).ids == {"3": "topic:3"}
    assert resolver.resolve("author", ["1737249"]).ids == {"1737249": "s2author:1737249"}
    assert resolver.resolve("author", ["1737249"], bare=False).ids == {}


def test_output_ids_never_contain_whitespace():
    assert output_id("name:ahmed t elthakeb") == "name:ahmed_t_elthakeb"
    assert output_id("s2author:1737249") == "s2author:1737249"
    assert output_id("a\tb\nc") == "a_b_c"


def test_query_command_exits_2_for_an_id_no_node_has(monkeypatch):
    from scholargraph import cli, graph_cli

    class FakeStore:
        def lookup_ids(self, kind, forms):
            return {}

        def run_library_query(self, name, params):  # pragma: no cover - must not be reached
            raise AssertionError("queried with an unknown id")

    monkeypatch.setattr(graph_cli, "open_store", lambda settings, quiet: contextlib.nullcontext(FakeStore()))
    result = CliRunner().invoke(cli.main, ["query", "author_profile", "-p", "authorId=1737249"])
    assert result.exit_code == 2
    assert "-p authorId: no author in the graph has the id 1737249" in result.output
    assert "s2author:1737249" in result.output  # the expected form
