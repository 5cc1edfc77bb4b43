"""Property tests: arbitrary bytes and mutated valid records never crash a parser or normalize()."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scholargraph.errors import InvalidRecord
from scholargraph.graph.records import PaperBundle, RawRecord
from scholargraph.ingest.normalize import FORMATS, Dropped, iter_raw, normalize

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ingest"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
JSON_FIXTURES = {"aminer": ["aminer_v10.jsonl", "aminer_v12.json"], "openalex": ["openalex_works.jsonl"],
                 "s2": ["s2_graph.json", "s2_papers.jsonl", "s2_abstracts.jsonl", "s2_citations.jsonl"]}


def valid_records(fmt: str) -> list[dict]:
    return [r.data for name in JSON_FIXTURES[fmt] for r in iter_raw(fmt, str(FIXTURES / name)) if r.data]


def account(fmt: str, path: str) -> list[tuple[RawRecord, str]]:
    """Parse and normalize everything; each record must end in exactly one of the three outcomes."""
    outcomes = []
    for raw in iter_raw(fmt, path):
        assert isinstance(raw, RawRecord)
        assert (raw.data is None) != (raw.error is None)
        assert raw.data is None or isinstance(raw.data, dict)
        assert isinstance(raw.line, int) and raw.line >= 0
        try:
            bundle = normalize(fmt, raw)
        except InvalidRecord as exc:
            assert exc.reason and exc.line == raw.line and isinstance(exc.raw, str)
            outcomes.append((raw, "invalid"))
        except Dropped as exc:
            assert exc.reason
            outcomes.append((raw, "dropped"))
        else:
            assert isinstance(bundle, PaperBundle) and bundle.paper.id
            assert bundle.paper.partial or bundle.paper.title
            assert all(s.paper_id == bundle.paper.id for s in bundle.authorships)
            assert len({c.cited_id for c in bundle.citations if c.citing_id == bundle.paper.id}) == \
                sum(1 for c in bundle.citations if c.citing_id == bundle.paper.id)
            outcomes.append((raw, "ok"))
    return outcomes


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("fmt", FORMATS)
@FUZZ
@given(data=st.binary(max_size=2000), packing=st.sampled_from(["plain", "gzip", "cut-gzip"]))
def test_arbitrary_bytes(scratch, fmt, data, packing):
    if packing != "plain":
        data = gzip.compress(data)
        if packing == "cut-gzip":
            data = data[: len(data) // 2]
    path = scratch / f"bytes.{fmt}"
    path.write_bytes(data)
    account(fmt, str(path))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**12) | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)


@st.composite
def mutated(draw, records: list[dict]) -> dict:
    record = json.loads(json.dumps(draw(st.sampled_from(records))))
    for _ in range(draw(st.integers(1, 4))):
        keys = sorted(record)
        action = draw(st.sampled_from(["replace", "delete", "nested"]))
        if not keys:
            break
        key = draw(st.sampled_from(keys))
        if action == "replace":
            record[key] = draw(JSON_VALUES)
        elif action == "delete":
            del record[key]
        elif isinstance(record[key], list) and record[key]:
            index = draw(st.integers(0, len(record[key]) - 1))
            record[key][index] = draw(JSON_VALUES)
        elif isinstance(record[key], dict) and record[key]:
            record[key][draw(st.sampled_from(sorted(record[key])))] = draw(JSON_VALUES)
    return record


@pytest.mark.parametrize("fmt", ["aminer", "openalex", "s2"])
@FUZZ
@given(data=st.data())
def test_mutated_json_records_are_each_accounted_for(scratch, fmt, data):
    records = data.draw(st.lists(mutated(valid_records(fmt)), min_size=1, max_size=6))
    path = scratch / f"mutated.{fmt}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    outcomes = account(fmt, str(path))
    # JSON lines: one outcome per line, in order (S2 response wrappers may expand a line).
    lines = [raw.line for raw, _ in outcomes]
    assert lines == sorted(lines) and set(lines) <= set(range(1, len(records) + 1))
    if fmt != "s2":
        assert [raw.data for raw, _ in outcomes] == records


@FUZZ
@given(items=st.lists(st.one_of(st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
                                st.text(alphabet=st.characters(blacklist_characters="\n\r"), max_size=30)),
                      min_size=1, max_size=12))
def test_garbage_lines_never_swallow_good_ones(scratch, items):
    items = [{"first": True}] + items  # a readable first line: the file is read as JSON lines
    path = scratch / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(x) if isinstance(x, dict) else x for x in items) + "\n",
                    encoding="utf-8", errors="surrogatepass")
    by_line = {}
    for raw, _ in account("aminer", str(path)):
        assert raw.line not in by_line
        by_line[raw.line] = raw
    for number, item in enumerate(items, start=1):
        if isinstance(item, dict):
            assert by_line[number].data == item


BIBTEX_NOISE = st.text(alphabet='{}"@,=#%\\\n ()aZ09\'`~$&-²é٣', max_size=6)


@FUZZ
@given(data=st.data())
def test_mutated_bibtex_is_accounted_for(scratch, data):
    text = (FIXTURES / "sample.bib").read_text()
    for _ in range(data.draw(st.integers(1, 6))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 20)))
        text = text[:start] + data.draw(BIBTEX_NOISE) + text[end:]
    path = scratch / "mutated.bib"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    outcomes = account("bibtex", str(path))
    assert len(outcomes) <= text.count("@")
