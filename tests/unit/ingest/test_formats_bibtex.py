"""The streaming BibTeX parser: entries, macros, LaTeX to Unicode, names, errors and resync."""

from __future__ import annotations

import gzip

import pytest

from scholargraph.ingest import sources
from scholargraph.ingest.formats.bibtex import iter_raw, latex_to_unicode, split_names


def parse(tmp_path, text: str | bytes, name: str = "x.bib"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return list(iter_raw(str(path)))


def test_sample_file(fixtures_dir):
    records = list(iter_raw(str(fixtures_dir / "sample.bib")))
    by_key = {r.data["ID"]: r for r in records if r.data}
    first = by_key["10.1145/1111.2222"]
    assert first.line == 7
    assert first.data["ENTRYTYPE"] == "inproceedings"
    assert first.data["author"] == ["Béatrice Dupont", "Jörg Müller", "François Garçon", "Hans Straße",
                                    "Søren Ørsted"]
    assert first.data["title"] == "Café & Crème: Text–Retrieval at 100% Scale"
    assert first.data["booktitle"] == "Proceedings of the ACM SIGIR Conference 2020"  # @string + '#'
    assert first.data["month"] == "June"
    assert first.data["pages"] == "1–10"
    assert first.data["doi"] == "10.1145/1111.2222"
    assert first.data["abstract"] == \
        "We study “quoted” text—with emphasis, α values and naïve tildes like this."
    second = by_key["dblp:journals/x/Smith19"].data
    assert second["author"] == ["John Smith", "Jan van der Berg", "Barnes and Noble, Inc."]
    assert second["title"] == 'A "Quoted" Title with Nested Braces'
    assert second["journal"] == "ACM Transactions"  # @string(...) form, concatenated with a braced part
    assert second["year"] == "2019"
    assert by_key["parens-key"].data["title"] == "The TeXbook"
    assert by_key["parens-key"].data["ENTRYTYPE"] == "book"
    errors = [r for r in records if r.error]
    assert [(r.line, r.error) for r in errors] == [(35, "unbalanced braces: value of 'title' not closed")]
    assert errors[0].excerpt.startswith("@inproceedings{broken1,")
    # Parsing resumed at the next entry; @comment/@preamble/@string produced no records.
    assert [r.data["ID"] for r in records if r.data] == [
        "10.1145/1111.2222", "dblp:journals/x/Smith19", "10.1145/3333.4444", "after-broken",
        "no-authors-here", "bad-year", "parens-key"]


@pytest.mark.parametrize("chunk_size", [1, 2, 5, 13, 64])
def test_results_do_not_depend_on_chunking(fixtures_dir, monkeypatch, chunk_size):
    expected = list(iter_raw(str(fixtures_dir / "sample.bib")))
    monkeypatch.setattr(sources, "CHUNK_SIZE", chunk_size)
    assert list(iter_raw(str(fixtures_dir / "sample.bib"))) == expected


@pytest.mark.parametrize("raw, text", [
    (r"B\'{e}atrice", "Béatrice"),
    (r"B\'eatrice", "Béatrice"),
    (r"{\"u}ber", "über"),
    (r"\"{O}zt\"{u}rk", "Öztürk"),
    (r"Fran\c{c}ois \c c", "François ç"),
    (r"Stra\ss e", "Straße"),
    (r"{\O}rsted B\o{}rge J\o rgensen", "Ørsted Børge Jørgensen"),
    (r"Garc\'{\i}a", "García"),
    (r"\v{S}koda \u{a} \H{o} \k{a} \r{a} \~{n} \^{o} \`{e} \={a} \.{z}", "Škoda ă ő ą å ñ ô è ā ż"),
    (r"{\L}{\'o}d{\'z} \aa\ \AE{}", "Łódź å Æ"),
    (r"R\&D costs 10\% \$5 a\_b \#1", "R&D costs 10% $5 a_b #1"),
    (r"pages 1--10 and ---", "pages 1–10 and —"),
    (r"``quoted''", "“quoted”"),
    (r"{T}he {{Nested}} {Braces}", "The Nested Braces"),
    (r"a~b", "a b"),
    (r"$\alpha$-test with $N=64$ and $\le$ 3", "α-test with N=64 and ≤ 3"),
    (r"\textit{italic} and \emph{em} and {\bf bold}", "italic and em and bold"),
    (r"10\texttimes{} faster, $O(n \log n)$", "10× faster, O(n log n)"),
    ("Q&amp;A and &lt;tags&gt;", "Q&A and <tags>"),
    ("  spread \n\t over   lines  ", "spread over lines"),
    (r"literal \{braces\}", "literal {braces}"),
    (r"trailing backslash \\", "trailing backslash"),
    ("plain", "plain"),
])
def test_latex_to_unicode(raw, text):
    assert latex_to_unicode(raw) == text


@pytest.mark.parametrize("raw, names", [
    ("Hinton, Geoffrey", ["Geoffrey Hinton"]),
    ("Smith, John and Doe, Jane", ["John Smith", "Jane Doe"]),
    ("John Smith and Jane Doe AND Max Mustermann", ["John Smith", "Jane Doe", "Max Mustermann"]),
    ("van der Berg, Jan", ["Jan van der Berg"]),
    ("King, Jr, Martin Luther", ["Martin Luther King Jr"]),
    ("{Barnes and Noble} and Smith, A.", ["Barnes and Noble", "A. Smith"]),
    (r"M{\"u}ller, J{\"o}rg and others", ["Jörg Müller"]),
    ("Alexander\n  Anderson and\n Brandon", ["Alexander Anderson", "Brandon"]),
    ("", []),
])
def test_split_names(raw, names):
    assert split_names(raw) == names


def test_stray_closing_brace_fails_the_entry_and_the_next_one_parses(tmp_path):
    text = "@article{a,\ntitle = {One}},\nyear = {2020}\n}\n\n@article{b,\ntitle = {Two}\n}\n"
    records = parse(tmp_path, text)
    assert records[0].error == "unbalanced braces: fields after the entry's closing brace"
    assert records[1].data["title"] == "Two" and records[1].line == 6


def test_missing_comma_and_missing_equals_are_errors(tmp_path):
    records = parse(tmp_path, "@article{a,\ntitle = {One}\nyear = {2020}}\n@article{b,\ntitle {Two}}\n"
                              "@article{c, title = {Three}}\n")
    assert [r.error.split(":")[0] if r.error else r.data["ID"] for r in records] == [
        "malformed BibTeX", "malformed BibTeX", "c"]


def test_entry_not_closed_at_end_of_file(tmp_path):
    records = parse(tmp_path, "@article{a, title = {Fine}}\n@article{b, title = {Never closed}")
    assert records[0].data["title"] == "Fine"
    assert records[1].error == "unbalanced braces: entry not closed" and records[1].line == 2


def test_at_sign_inside_a_value_does_not_start_an_entry(tmp_path):
    text = "@article{a,\nabstract = {Mail\n@someone or see\n  @ home},\ntitle = {T}\n}\n"
    records = parse(tmp_path, text)
    assert len(records) == 1 and records[0].data["abstract"] == "Mail @someone or see @ home"


def test_invalid_utf8_fails_only_its_entry(tmp_path):
    text = b"@article{a, title = {Caf\xe9}}\n@article{b, title = {Caf\xc3\xa9}}\n"
    records = parse(tmp_path, text)
    assert records[0].error.startswith("invalid UTF-8") and records[0].line == 1
    assert records[1].data["title"] == "Café"


def test_crlf_quoted_values_numbers_undefined_macros_and_duplicates(tmp_path):
    text = '@misc{k,\r\n  title = "A {"}B{"} " # {C},\r\n  year = 2021,\r\n  note = undefinedmacro,\r\n' \
           '  title = {Second title ignored}\r\n}\r\n'
    (record,) = parse(tmp_path, text)
    assert record.data == {"ENTRYTYPE": "misc", "ID": "k", "title": 'A "B" C', "year": "2021", "note": ""}


def test_non_ascii_digits_and_stray_characters_are_errors_not_crashes(tmp_path):
    records = parse(tmp_path, "@misc{a, year = \u00b2}\n@misc{b, year = \u0663}\n@misc{c, year = 7}\n")
    assert [r.error.split(":")[0] if r.error else r.data["year"] for r in records] == [
        "malformed BibTeX", "malformed BibTeX", "7"]


def test_prolog_comments_and_empty_files(tmp_path):
    assert parse(tmp_path, "") == []
    assert parse(tmp_path, "% just a comment\nsome free text = with equals\n") == []
    records = parse(tmp_path, "free text first\n@article{a, title = {T}}")
    assert [r.data["ID"] for r in records] == ["a"] and records[0].line == 2


def test_gzip_and_truncated_gzip(tmp_path):
    entry = "@inproceedings{k%d,\nauthor = {A, B},\ntitle = {Title %d with padding},\nyear = {2020}\n}\n\n"
    body = "".join(entry % (i, i) for i in range(5000)).encode()
    packed = gzip.compress(body)
    assert len(parse(tmp_path, packed, "whole.bib.gz")) == 5000
    records = parse(tmp_path, packed[: len(packed) // 2], "cut.bib.gz")
    good = [r for r in records if r.data]
    assert len(good) > 500 and [r.data["ID"] for r in good] == [f"k{i}" for i in range(len(good))]
    assert records[-1].error.startswith("read error: truncated")
    assert all(r.error is None for r in records[:-2])


def test_long_prolog_and_runaway_entry_keep_memory_bounded(tmp_path, monkeypatch):
    from scholargraph.ingest.formats import bibtex

    monkeypatch.setattr(sources, "CHUNK_SIZE", 64)
    monkeypatch.setattr(bibtex, "MAX_ENTRY_CHARS", 500)
    text = "comment line\n" * 200 + "@article{open, title = {never closed\n" + "more text\n" * 100 + \
        "@article{next, title = {Next}}\n"
    records = parse(tmp_path, text)
    assert records[0].line == 201
    assert records[0].error.startswith("unbalanced braces: entry not closed within")
    assert [(r.line, r.data["ID"]) for r in records if r.data] == [(302, "next")]
