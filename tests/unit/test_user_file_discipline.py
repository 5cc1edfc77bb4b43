"""One input discipline for every file a user hands the CLI (docs/assignment.md, "Files you hand the CLI"): each
reader, fed its clean file with a UTF-8 byte-order mark (Excel writes one), with CRLF line ends, with a line
given twice, with its header in capitals and with an extra column, gives what it gives for the clean file (a
repeat said in one warning, by line) or refuses with one line naming the file; a file that applies to nothing
of the run exits 2 unless --allow-empty. Where the reading needs Neo4j:
tests/integration/test_user_file_discipline_cli.py.

The user files, from the click.Path options of scholargraph/**/cli.py that read a file (and `--senior`, a rule
or a file); the options that name files the CLI writes (--out, --plot, --picture, --quarantine, --*-out, DIR)
are not user files:

    scholargraph --config FILE                           TOML (read_toml_table)
    reviewers train|evaluate --queries, citations recommend|evaluate --queries, reviewers recommend|conflicts|assign
      --queries, export openreview --queries             JSON lines (read_jsonl)
    reviewers profile import FILE                        JSON lines, one reviewer each (read_settings_file)
    reviewers train|evaluate --qrels, citations evaluate --qrels   TREC qrels (read_qrels)
    reviewers evaluate --protocol expertise --qrels      `paper 0 reviewer expertise` (read_expertise_qrels)
    reviewers recommend|conflicts|assign --pool, export openreview --pool   ids (conference.submissions.read_ids)
    reviewers assign --senior FILE                       ids (read_senior)
    reviewers recommend|evaluate --candidates            `qid 0 cand grade` or `qid cand` (read_candidates)
    reviewers recommend|assign --conflicts, assign --forbid, --force   pairs in four layouts (read_declared)
    reviewers recommend|assign --emails                  `reviewer_id,email` (read_email_file)
    reviewers assign --loads                             `reviewer max [min]` (read_loads)
    reviewers assign --attributes                        `reviewer,attr...` (read_attributes)
    citations recommend --text-file                      title, then abstract (read_text)
    ingest hotcrp-pc FILE                                HotCRP's PC info CSV (read_pc_list)
    ingest hotcrp-papers FILE                            HotCRP's paper JSON (read_papers)

`ingest FORMAT PATH` (dumps, and openreview's folders) go through ingest.sources.iter_text, which drops a BOM
too; they quarantine a bad record instead of refusing the file (tests/unit/ingest)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from click.testing import CliRunner

from scholargraph.cli import main
from scholargraph.conference.assignment.plan import read_attributes, read_loads, read_senior
from scholargraph.conference.declared import HOTCRP, HOTCRP_PC_CONFLICTS, OPENREVIEW, PAIRS, read_declared
from scholargraph.conference.exchange import EmailBook, read_email_file
from scholargraph.conference.profiles import read_settings_file
from scholargraph.conference.submissions import read_candidates, read_ids
from scholargraph.config import Settings
from scholargraph.errors import UsageError
from scholargraph.ingest.hotcrp import read_papers, read_pc_list
from scholargraph.ranking.metrics import read_qrels
from scholargraph.ranking.reviewers.expertise import read_expertise_qrels
from scholargraph.user_files import QUERY_FIELDS, read_jsonl, read_text

BOM = "\ufeff"


@dataclass(frozen=True)
class Reader:
    """One reader of user files: its clean file (`lines`), the line given twice in the repeat variant (None:
    the reader keeps every row, its command keeps them once), whether lines[0] is a header, the file with an
    extra column (None: every column is data, or the format has none to spare, `refuses_extra`)."""

    name: str
    option: str
    read: Callable[[str, Callable[[str], None]], object]
    lines: tuple[str, ...]
    repeat: int | None = 1
    header: bool = False
    extra: tuple[str, ...] | None = None
    refuses_extra: str | None = None  # the end of the one line that refuses the extra column


def _declared(path, warn):
    f = read_declared(path, "--conflicts", warn=warn)
    return (f.layout, [(p.paper, p.reviewer, p.reason) for p in f.conflicts],
            [(p.paper, p.reviewer) for p in f.forced], f.other_rows)


def _queries(path, warn):
    # The fields a command reads: another field is an extra column, ignored.
    return [{k: r[k] for k in QUERY_FIELDS if k in r} for r in read_jsonl(path, "--queries", warn=warn)]


READERS = [
    Reader("pool", "--pool", lambda p, w: read_ids(p, "--pool", w),
           ("# reviewers", "s2author:1737249", "aminer:5", "1737249"),
           extra=("# reviewers", "s2author:1737249 Ada Lovelace", "aminer:5\tAlan", "1737249 x")),
    Reader("senior", "--senior", lambda p, w: read_senior(p, w), ("E", "X", "J"), repeat=0,
           extra=("E,Ann Lee", "X,Xi Yu", "J,Jo")),
    Reader("candidates", "--candidates", lambda p, w: read_candidates(p, "--candidates", w),
           ("s1 0 s2author:1 3", "s1 s2author:2", "42 s2author:3"),
           extra=("s1 0 s2author:1 3 run", "s1 s2author:2 note", "42 s2author:3 note")),
    Reader("qrels", "--qrels", lambda p, w: read_qrels(p, "--qrels", w), ("s1 0 r1 3", "s1 0 r2 0", "42 0 r2 2"),
           extra=("s1 0 r1 3 x", "s1 0 r2 0 x", "42 0 r2 2 x")),
    Reader("expertise", "--qrels", lambda p, w: read_expertise_qrels(p, "--qrels", w), ("p1 0 r1 4.5", "p2 0 r1 2"),
           repeat=0, refuses_extra=":1: expected `paper 0 reviewer expertise`, got 'p1 0 r1 4.5 x'"),
    Reader("queries", "--queries", _queries, ('{"id": "s1", "title": "Graph ranking"}', '{"id": 42, "title": "B"}'),
           repeat=0, extra=('{"id": "s1", "title": "Graph ranking", "venue": "x"}', '{"id": 42, "title": "B"}')),
    Reader("profiles", "FILE", lambda p, w: read_settings_file(p, "FILE", w),
           ('{"reviewer": "E", "since": 2010}', '{"reviewer": "X", "exclude": ["p1"]}'), repeat=0,
           extra=('{"reviewer": "E", "since": 2010, "note": 1}', '{"reviewer": "X", "exclude": ["p1"]}')),
    Reader("loads", "--loads", lambda p, w: read_loads(p, w), ("reviewer,max,min", "E,2,1", "X,4"), header=True,
           extra=("reviewer,max,min,note", "E,2,1,x", "X,4,,y")),
    Reader("attributes", "--attributes", lambda p, w: read_attributes(p, w),
           ("reviewer,senior,industry", "E,1,no", "X,true,1"), header=True),
    Reader("emails", "--emails", lambda p, w: read_email_file(p, "--emails", w),
           ("reviewer_id,email", "E,e@uni.edu", "X,X@Uni.edu"), header=True,
           extra=("reviewer_id,email,name", "E,e@uni.edu,Ann Lee", "X,X@Uni.edu,Xi Yu")),
    Reader("conflicts-pairs", "--conflicts", _declared, ("paper,reviewer", "s1,E", "s2,X"), header=True,
           extra=("paper,reviewer,note", "s1,E,advisor", "s2,X,")),
    Reader("conflicts-hotcrp", "--conflicts", _declared,
           ("paper,action,email", "1,conflict,e@uni.edu", "2,conflict,x@uni.edu", "2,primary,e@uni.edu"),
           header=True, extra=("paper,action,email,note", "1,conflict,e@uni.edu,a", "2,conflict,x@uni.edu,b",
                               "2,primary,e@uni.edu,c")),
    Reader("conflicts-hotcrp-pc", "--conflicts", _declared,
           ("paper,title,first,last,email,conflicttype", "1,T,Ann,Lee,e@uni.edu,advisor",
            "2,U,Xi,Yu,x@uni.edu,collaborator"), header=True,
           extra=("paper,title,first,last,email,conflicttype,tags", "1,T,Ann,Lee,e@uni.edu,advisor,x",
                  "2,U,Xi,Yu,x@uni.edu,collaborator,y")),
    Reader("conflicts-openreview", "--conflicts", _declared, ("s1,~Ann_Lee1,-1", "s2,~Xi_Yu1,1", "s3,~Ann_Lee1,0"),
           repeat=0, refuses_extra=":1: expected OpenReview's `paper,profile,-1|0|1`, got 's1,~Ann_Lee1,-1,x'"),
    Reader("hotcrp-pc", "hotcrp-pc",
           lambda p, w: [(m.name, m.email, m.affiliation) for m in read_pc_list(p, "hotcrp-pc", w)],
           ("first,last,email,roles,affiliation", "Ann,Lee,ann@uni.edu,pc,Uni A", "Xi,Yu,xi@uni.edu,pc,Uni B"),
           header=True,
           extra=("first,last,email,roles,affiliation,phone", "Ann,Lee,ann@uni.edu,pc,Uni A,1",
                  "Xi,Yu,xi@uni.edu,pc,Uni B,2")),
]
NAMES = [r.name for r in READERS]
BY_NAME = {r.name: r for r in READERS}


def file_of(tmp_path, lines, *, bom: bool = False, crlf: bool = False) -> str:
    path = tmp_path / "user.file"
    end = "\r\n" if crlf else "\n"
    path.write_bytes(((BOM if bom else "") + end.join(lines) + end).encode("utf-8"))
    return str(path)


def read(reader: Reader, path: str):
    """The reader's result and the warnings it gave."""
    warnings: list[str] = []
    return reader.read(path, warnings.append), warnings


def variants(reader: Reader) -> dict[str, tuple[tuple[str, ...], dict]]:
    lines = reader.lines
    out = {"bom": (lines, {"bom": True}), "crlf": (lines, {"crlf": True})}
    if reader.header:
        out["header in capitals"] = ((lines[0].upper(), *lines[1:]), {})
    if reader.extra is not None:
        out["extra column"] = (reader.extra, {})
    everything = (lines[0].upper(), *lines[1:]) if reader.header else lines
    out["all at once"] = (everything, {"bom": True, "crlf": True})
    return out


@pytest.mark.parametrize("name", NAMES)
def test_bom_crlf_header_case_and_an_extra_column_read_as_the_clean_file(tmp_path, name):
    reader = BY_NAME[name]
    clean, said = read(reader, file_of(tmp_path, reader.lines))
    assert said == []
    for variant, (lines, how) in variants(reader).items():
        assert read(reader, file_of(tmp_path, lines, **how)) == (clean, []), variant


@pytest.mark.parametrize("name", [r.name for r in READERS if r.repeat is not None])
def test_a_repeated_line_is_kept_once_and_said_once(tmp_path, name):
    reader = BY_NAME[name]
    assert reader.repeat is not None
    clean, _ = read(reader, file_of(tmp_path, reader.lines))
    lines = (*reader.lines, reader.lines[reader.repeat])
    path = file_of(tmp_path, lines, bom=True, crlf=True)
    result, said = read(reader, path)
    assert result == clean
    assert len(said) == 1 and re.fullmatch(rf"warning: {re.escape(reader.option)} {re.escape(path)}: 1 repeated "
                                           rf"[\w ]+[^s] (\(by \w+\) )?kept once, e\.g\. line {len(lines)} \(as line "
                                           rf"{reader.repeat + 1}\)", said[0]), said


@pytest.mark.parametrize("name", [r.name for r in READERS if r.refuses_extra])
def test_an_extra_column_the_format_has_no_room_for_is_one_line(tmp_path, name):
    reader = BY_NAME[name]
    lines = (reader.lines[0] + (",x" if "," in reader.lines[0] else " x"), *reader.lines[1:])
    path = file_of(tmp_path, lines)
    with pytest.raises(UsageError) as refused:
        read(reader, path)
    assert str(refused.value) == f"{reader.option} {path}{reader.refuses_extra}"


@pytest.mark.parametrize(("name", "changed"), [("qrels", "s1 0 r1 2"), ("loads", "E,3,1"), ("attributes", "E,0,no"),
                                               ("queries", '{"id": "s1", "title": "Another"}'),
                                               ("profiles", '{"reviewer": "E", "since": 2011}'),
                                               ("conflicts-openreview", "s1,~Ann_Lee1,1")])
def test_a_line_repeated_with_another_value_is_refused_naming_both(tmp_path, name, changed):
    reader = BY_NAME[name]
    path = file_of(tmp_path, (*reader.lines, changed))
    first = 2 if reader.header else 1
    with pytest.raises(UsageError, match=rf"^{re.escape(reader.option)} {re.escape(path)}:{len(reader.lines) + 1}: "
                                         rf"the .+ of line {first} again, with another value: keep one of the two "
                                         rf"lines$"):
        read(reader, path)


# --- the defects users saw (issue 47) ---------------------------------------------------------------------


def test_a_bom_keeps_the_first_column_of_a_pc_list(tmp_path):
    # Excel's CSV: the first column was `\ufefffirst`, so no member had a first name and none matched by name.
    members = read_pc_list(file_of(tmp_path, BY_NAME["hotcrp-pc"].lines, bom=True), "hotcrp-pc")
    assert [m.name for m in members] == ["Ann Lee", "Xi Yu"]


def test_a_bom_keeps_a_hotcrp_conflicts_file_in_its_layout(tmp_path):
    # It was read as `paper reviewer` pairs (`\ufeffpaper action`, `1 conflict`, ...): no conflict applied.
    layout, conflicts, _, _ = _declared(file_of(tmp_path, BY_NAME["conflicts-hotcrp"].lines, bom=True), print)
    assert layout == HOTCRP and [(p, r) for p, r, _ in conflicts] == [("1", "e@uni.edu"), ("2", "x@uni.edu")]


def test_a_bom_keeps_the_first_reviewer_of_a_pool(tmp_path):
    assert read_ids(file_of(tmp_path, ["s2author:1", "s2author:2"], bom=True), "--pool") == ["s2author:1",
                                                                                             "s2author:2"]


def test_a_refused_header_never_shows_the_bom(tmp_path):
    lines = ["email,affiliation", "ann@uni.edu,Uni A"]
    messages = []
    for bom in (False, True):
        path = file_of(tmp_path, lines, bom=bom)
        with pytest.raises(UsageError) as refused:
            read_pc_list(path, "hotcrp-pc")
        messages.append(str(refused.value))
    assert messages[1] == messages[0] and BOM not in messages[1] and "got email,affiliation" in messages[1]


def test_each_layout_is_told_with_a_bom(tmp_path):
    for name, layout in (("conflicts-pairs", PAIRS), ("conflicts-hotcrp", HOTCRP),
                         ("conflicts-hotcrp-pc", HOTCRP_PC_CONFLICTS), ("conflicts-openreview", OPENREVIEW)):
        assert _declared(file_of(tmp_path, BY_NAME[name].lines, bom=True), print)[0] == layout, name


def test_a_pair_both_a_conflict_and_forced_is_refused(tmp_path):
    path = file_of(tmp_path, ["s1,~Ann_Lee1,-1", "s1,~Ann_Lee1,1"])
    with pytest.raises(UsageError, match=r":2: the pair of line 1 again, with another value"):
        read_declared(path, "--force", plain="forced")


def test_an_email_in_another_case_is_the_same_declared_reviewer(tmp_path):
    path = file_of(tmp_path, ["paper,action,email", "1,conflict,Ann@Uni.edu", "1,conflict,ann@uni.edu"])
    said: list[str] = []
    assert len(read_declared(path, "--conflicts", warn=said.append).conflicts) == 1
    assert said == [f"warning: --conflicts {path}: 1 repeated pair kept once, e.g. line 3 (as line 2)"]


@pytest.mark.parametrize(("name", "excel"), [
    ("pool", ("# reviewers", "s2author:1737249,Ada Lovelace", "aminer:5,Alan", "1737249,x")),
    ("senior", ("E,Ann Lee", "X,Xi Yu", "J,Jo")),
    ("candidates", ("s1,0,s2author:1,3", "s1,s2author:2", "42,s2author:3,note")),
])
def test_an_excel_id_line_names_its_first_field(tmp_path, name, excel):
    # --pool and --candidates split on whitespace only (--senior split commas already).
    reader = BY_NAME[name]
    clean, _ = read(reader, file_of(tmp_path, reader.lines))
    assert read(reader, file_of(tmp_path, excel, bom=True, crlf=True)) == (clean, [])


def test_an_excel_pool_line_names_the_reviewer(tmp_path):
    # `~Ann_Lee1,Ann Lee` was the id `~Ann_Lee1,Ann`, though the docs say a pool line's trailing fields are ignored.
    lines = ["~Ann_Lee1,Ann Lee", "~Xi_Yu1\tXi Yu", "~Jo_Ng1 Jo Ng", '"~Al_Bo1",Al']
    assert read_ids(file_of(tmp_path, lines), "--pool") == ["~Ann_Lee1", "~Xi_Yu1", "~Jo_Ng1", "~Al_Bo1"]


def test_repeats_are_counted_in_words(tmp_path):
    # They printed as `1 repeated PC member (email)(s) kept once` and `2 repeated record (id)(s) kept once`.
    said: list[str] = []
    for folder in ("pc", "queries", "pool"):
        (tmp_path / folder).mkdir()
    pc = file_of(tmp_path / "pc", ["email,first,last", "a@u.edu,Ann,Lee", "A@u.edu,Ann,Lee"])
    read_pc_list(pc, "hotcrp-pc", said.append)
    queries = file_of(tmp_path / "queries", [QUERIES, QUERIES, QUERIES])
    read_jsonl(queries, "--queries", warn=said.append)
    pool = file_of(tmp_path / "pool", ["r1", "r1"])
    read_ids(pool, "--pool", said.append)
    assert said == [f"warning: hotcrp-pc {pc}: 1 repeated PC member (by email) kept once, e.g. line 3 (as line 2)",
                    f"warning: --queries {queries}: 2 repeated records (by id) kept once, e.g. line 2 (as line 1), "
                    f"line 3 (as line 1)",
                    f"warning: --pool {pool}: 1 repeated id kept once, e.g. line 2 (as line 1)"]


def test_the_config_text_file_and_paper_json_read_through_a_bom_and_crlf(tmp_path):
    from scholargraph.ranking.citations.cli import _queries_from_options

    toml = ["[scholargraph]", 'heap = "3g"', "neo4j_port = 7999"]
    clean = Settings.load(env={}, config_file=file_of(tmp_path, toml))
    assert Settings.load(env={}, config_file=file_of(tmp_path, toml, bom=True, crlf=True)) == clean
    assert clean.heap == "3g"
    # TOML has no room for a repeat: a key given twice is one line naming the file.
    from scholargraph.user_files import ConfigError

    with pytest.raises(ConfigError, match=r"^--config .*user.file:3: not TOML"):
        Settings.load(env={}, config_file=file_of(tmp_path, [*toml[:2], toml[1]]))

    text = ["Graph ranking of reviewers", "We rank reviewers."]
    drafts = [_queries_from_options(None, None, None, file_of(tmp_path, text, bom=bom, crlf=bom))
              for bom in (False, True)]
    assert drafts[0] == drafts[1] and drafts[1][0].title == "Graph ranking of reviewers"
    assert read_text(file_of(tmp_path, text, bom=True), "--text-file").startswith("Graph")

    papers = ['[{"pid": 1, "title": "Graph ranking", "authors": [{"email": "a@uni.edu", "first": "Ann",',
              '  "last": "Lee"}]}]']
    assert read_papers(file_of(tmp_path, papers, bom=True, crlf=True)).records \
        == read_papers(file_of(tmp_path, papers)).records


# --- files that apply to nothing: exit 2 unless --allow-empty ------------------------------------------------


def test_an_emails_file_of_which_the_graph_knows_no_id_changes_nothing(tmp_path):
    rows = [("nobody", "n@uni.edu")]
    book = EmailBook.build([("E", ["e@uni.edu"])], rows, lambda given: {})
    with pytest.raises(UsageError, match=r"^--emails e.csv: none of its 1 row\(s\) applies to this run: it changes "
                                         r"nothing; check its ids, or give --allow-empty to go on$"):
        book.require_listed("e.csv", len(rows), False, print)
    said: list[str] = []
    book.require_listed("e.csv", len(rows), True, said.append)
    assert said == ["warning: --emails e.csv: none of its 1 row(s) applies to this run: it changes nothing "
                    "(--allow-empty)"]
    known = EmailBook.build([], [("E", "e@uni.edu")], lambda given: {"E": "E"})
    known.require_listed("e.csv", 1, False, print)  # one id known: it applies


def ingest(tmp_path, *argv: str):
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SCHOLARGRAPH_")}
    env.update({"SCHOLARGRAPH_NEO4J_URI": CLOSED_URI, "SCHOLARGRAPH_HOME": str(tmp_path / "home")})
    return CliRunner(env=env).invoke(main, ["ingest", *argv])


def test_ingest_hotcrp_papers_with_every_paper_withdrawn_changes_nothing(tmp_path):
    # It exited 0 having written nothing.
    papers = ['[{"pid": 1, "title": "A", "withdrawn": true}, {"pid": 2, "title": "B", "status": "withdrawn"}]']
    path = file_of(tmp_path, papers)
    refused = ingest(tmp_path, "hotcrp-papers", path)
    assert refused.exit_code == 2 and refused.stderr.splitlines()[-1] == (
        f"scholargraph: hotcrp-papers {path}: none of its 2 paper(s) applies to this run: it changes nothing; no "
        "paper is left that is not withdrawn (is it the conference's export?), or give --allow-empty to go on")
    allowed = ingest(tmp_path, "hotcrp-papers", path, "--allow-empty")
    assert allowed.exit_code == 0 and allowed.stderr.splitlines() == [
        f"scholargraph: warning: hotcrp-papers {path}: none of its 2 paper(s) applies to this run: it changes "
        "nothing (--allow-empty)"]
    assert not (tmp_path / "home" / "hotcrp" / "submissions.jsonl").exists()


def test_ingest_allow_empty_is_refused_where_it_means_nothing(tmp_path):
    # It was accepted, and ignored, for every format.
    done = ingest(tmp_path, "aminer", str(tmp_path / "dump.json"), "--allow-empty")
    assert done.exit_code == 2 and done.stderr.splitlines() == [
        "scholargraph: --allow-empty applies to ingest hotcrp-pc and hotcrp-papers only (a file that would change "
        "nothing); ingest aminer quarantines what it cannot read (--max-bad-ratio)"]


# --- the commands: each file's repeats said on stderr, before the store (a closed port: exit 1) -------------

CLOSED_URI = "bolt://127.0.0.1:1"
QUERIES = '{"id": "s1", "title": "Graph ranking"}'
GRADES = "s1 0 r1 3"
RATINGS = "s1 0 r1 4"


@dataclass(frozen=True)
class Command:
    argv: Callable[[str, dict[str, str]], list[str]]  # (the repeating file, the clean companions) -> argv
    option: str
    line: str  # the file: this line twice


COMMANDS = {
    "recommend --queries": Command(lambda f, c: ["reviewers", "recommend", "--queries", f], "--queries", QUERIES),
    "recommend --pool": Command(lambda f, c: ["reviewers", "recommend", "--paper", "x", "--pool", f], "--pool", "r1"),
    "recommend --candidates": Command(lambda f, c: ["reviewers", "recommend", "--paper", "x", "--candidates", f],
                                      "--candidates", "s1 r1"),
    "recommend --conflicts": Command(lambda f, c: ["reviewers", "recommend", "--paper", "x", "--conflicts", f],
                                     "--conflicts", "s1,r1"),
    "recommend --emails": Command(lambda f, c: ["reviewers", "recommend", "--paper", "x", "--emails", f], "--emails",
                                  "r1,r1@uni.edu"),
    "conflicts --queries": Command(lambda f, c: ["reviewers", "conflicts", "--queries", f], "--queries", QUERIES),
    "conflicts --pool": Command(lambda f, c: ["reviewers", "conflicts", "--paper", "x", "--pool", f], "--pool", "r1"),
    "train --queries": Command(lambda f, c: ["reviewers", "train", "--queries", f, "--qrels", c["grades"]],
                               "--queries", QUERIES),
    "train --qrels": Command(lambda f, c: ["reviewers", "train", "--queries", c["queries"], "--qrels", f], "--qrels",
                             GRADES),
    "evaluate --queries": Command(lambda f, c: ["reviewers", "evaluate", "--queries", f, "--qrels", c["grades"]],
                                  "--queries", QUERIES),
    "evaluate --qrels": Command(lambda f, c: ["reviewers", "evaluate", "--queries", c["queries"], "--qrels", f],
                                "--qrels", GRADES),
    "evaluate --candidates": Command(lambda f, c: ["reviewers", "evaluate", "--queries", c["queries"], "--qrels",
                                                   c["grades"], "--candidates", f], "--candidates", "s1 r1"),
    "evaluate expertise --qrels": Command(lambda f, c: ["reviewers", "evaluate", "--protocol", "expertise",
                                                        "--queries", c["queries"], "--qrels", f], "--qrels", RATINGS),
    "assign --queries": Command(lambda f, c: ["reviewers", "assign", "--queries", f], "--queries", QUERIES),
    "assign --pool": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--pool", f], "--pool", "r1"),
    "assign --loads": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--loads", f], "--loads", "r1 2"),
    "assign --forbid": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--forbid", f], "--forbid",
                               "s1 r1"),
    "assign --force": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--force", f], "--force", "s1 r1"),
    "assign --conflicts": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--conflicts", f],
                                  "--conflicts", "s1,~Ann_Lee1,-1"),
    "assign --emails": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--emails", f], "--emails",
                               "r1 r1@uni.edu"),
    "assign --attributes": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--attributes", f],
                                   "--attributes", "r1,1"),
    "assign --senior": Command(lambda f, c: ["reviewers", "assign", "--paper", "x", "--senior", f], "--senior", "r1"),
    "profile import": Command(lambda f, c: ["reviewers", "profile", "import", f], "FILE", '{"reviewer": "r1"}'),
    "citations recommend --queries": Command(lambda f, c: ["citations", "recommend", "--queries", f], "--queries",
                                             QUERIES),
    "citations evaluate --queries": Command(lambda f, c: ["citations", "evaluate", "--queries", f, "--qrels",
                                                          c["grades"]], "--queries", QUERIES),
    "citations evaluate --qrels": Command(lambda f, c: ["citations", "evaluate", "--queries", c["queries"], "--qrels",
                                                        f], "--qrels", GRADES),
    "export openreview --pool": Command(lambda f, c: ["export", "openreview", c["dir"], "--pool", f], "--pool", "r1"),
    "export openreview --queries": Command(lambda f, c: ["export", "openreview", c["dir"], "--pool", c["pool"],
                                                         "--queries", f], "--queries", QUERIES),
    "ingest hotcrp-pc": Command(lambda f, c: ["ingest", "hotcrp-pc", f], "hotcrp-pc", "Ann,Lee,ann@uni.edu"),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_says_what_its_files_repeat(tmp_path, name):
    command = COMMANDS[name]
    companions = {"queries": QUERIES, "grades": GRADES, "pool": "r1"}
    paths = {}
    for key, text in companions.items():
        (tmp_path / key).write_text(text + "\n", encoding="utf-8")
        paths[key] = str(tmp_path / key)
    paths["dir"] = str(tmp_path / "out")
    header = {"--attributes": "reviewer,senior\r\n", "hotcrp-pc": "first,last,email\r\n"}.get(command.option, "")
    path = tmp_path / "repeats.file"
    path.write_bytes(f"{BOM}{header}{command.line}\r\n{command.line}\r\n".encode())
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SCHOLARGRAPH_")}
    env.update({"SCHOLARGRAPH_NEO4J_URI": CLOSED_URI, "SCHOLARGRAPH_HOME": str(tmp_path / "home")})
    result = CliRunner(env=env).invoke(main, command.argv(str(path), paths))
    lines = result.stderr.splitlines()
    first, again = (2, 3) if header else (1, 2)
    said = rf"scholargraph: warning: {re.escape(command.option)} {re.escape(str(path))}: 1 repeated [\w ]+[^s] " \
           rf"(\(by \w+\) )?kept once, e\.g\. line {again} \(as line {first}\)"
    assert [line for line in lines if re.fullmatch(said, line)] == [lines[0]], result.stderr
    assert result.exit_code == 1 and lines[-1].startswith(f"scholargraph: cannot reach Neo4j at {CLOSED_URI}"), \
        result.stderr


# --- the chair's files against a run: the same result through a BOM; nothing applied is exit 2 -------------

ASSIGN_POOL = ["E", "X", "J", "O", "N", "E2"]  # the tiny world's reviewers (tests/unit/ranking/reviewers)


@pytest.fixture(scope="module")
def assign_world():
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex
    from scholargraph.ranking.reviewers.reco_rank import RecoRank
    from tests.unit.ranking.reviewers.conftest import tiny_world

    index = EvidenceIndex(*tiny_world(), background=30, seed=0)
    return index, RecoRank(self_supervised=30, reviewer_centric=10, steps=20, recent_years=6).fit(index)


def plan(assign_world, tmp_path, warn=print, allow_empty=False, **files):
    """assign's plan for three in-graph submissions, the files given as {option: (lines, how)} (written to
    tmp_path/OPTION/user.file), without a server."""
    from scholargraph.conference.assignment.plan import AssignmentRequest
    from scholargraph.ranking.reviewers.assign import plan_assignment

    index, model = assign_world
    given = {}
    for option, (lines, how) in {"pool_file": (ASSIGN_POOL, {}), **files}.items():
        folder = tmp_path / option
        folder.mkdir(parents=True, exist_ok=True)
        given[option] = file_of(folder, lines, **how)
    request = AssignmentRequest(paper_ids=["e1", "x1", "o1"], per_paper=2, max_load=2, allow_empty=allow_empty,
                                **given)
    return plan_assignment(None, tmp_path, request, index=index, model_and_meta=(model, {"version": "t"}), warn=warn)


def test_assign_rules_out_an_excel_hotcrp_conflict_as_the_clean_file_does(assign_world, tmp_path):
    conflicts = ["paper,action,email", "x1,conflict,e@uni.edu"]
    emails = ["reviewer_id,email", "E,e@uni.edu"]
    runs = [plan(assign_world, tmp_path / str(bom), conflicts_file=(conflicts, {"bom": bom, "crlf": bom}),
                 emails_file=(emails, {"bom": bom})) for bom in (False, True)]
    clean, excel = ([(r["paper"], r["reviewer"]) for r in run.rows()] for run in runs)
    assert excel == clean and ("x1", "E") not in excel
    assert "declared conflicts ruled out: 1 (submission, reviewer) pair(s): declared (hotcrp) 1" in runs[1].table.notes


@pytest.mark.parametrize(("option", "lines", "rows"), [
    ("conflicts_file", ["paper,reviewer", "no-such-paper,E"], "1 row(s)"),  # names no submission of the run
    ("conflicts_file", ["x1,bga0,-1"], "1 row(s)"),  # a reviewer of the graph outside the pool
    ("emails_file", ["nobody,n@uni.edu"], "1 row(s)"),
    ("loads_file", ["bga0 3"], "1 reviewer(s)"),
    ("loads_file", ["nobody 3"], "1 reviewer(s)"),  # not in the graph: it was exit 2 whatever --allow-empty said
    ("attributes_file", ["reviewer,senior", "bga0,1"], "1 reviewer(s)"),  # it was silent
    ("attributes_file", ["reviewer,senior", "nobody,1", "bga0,0"], "2 reviewer(s)"),
])
def test_assign_refuses_a_file_that_applies_to_nothing_unless_allowed(assign_world, tmp_path, option, lines, rows):
    what = "--" + option.removesuffix("_file")
    with pytest.raises(UsageError, match=rf"^{what} .*: none of its {re.escape(rows)} applies to this run: it "
                                         rf"changes nothing; check its ids, or give --allow-empty to go on$"):
        plan(assign_world, tmp_path / "refused", **{option: (lines, {})})
    said: list[str] = []
    done = plan(assign_world, tmp_path / "allowed", warn=said.append, allow_empty=True, **{option: (lines, {})})
    assert len(done.rows()) == 6
    path = tmp_path / "allowed" / option / "user.file"
    assert f"warning: {what} {path}: none of its {rows} applies to this run: it changes nothing (--allow-empty)" \
        in said


def test_assign_still_says_which_ids_of_a_file_the_graph_does_not_know(assign_world, tmp_path):
    said: list[str] = []
    plan(assign_world, tmp_path, warn=said.append, allow_empty=True, loads_file=(["nobody 3"], {}),
         attributes_file=(["reviewer,senior", "nobody,1"], {}))
    assert [line for line in said if "not in the graph" in line] == [
        "warning: --loads: 1 of 1 author id is not in the graph and left out: nobody",
        "warning: --attributes: 1 of 1 author id is not in the graph and left out: nobody"]


def assign_submissions(assign_world, tmp_path, warn=print, queries=None, **request):
    """assign on the tiny world with e1 published at venue:kdd in 2017 (its only paper there), the --queries
    records (if any) made without a text encoder."""
    from scholargraph.conference.assignment.plan import AssignmentRequest
    from scholargraph.ranking.reviewers.assign import plan_assignment
    from scholargraph.ranking.reviewers.evidence import EvidenceIndex
    from tests.unit.ranking.reviewers.conftest import submission, tiny_world

    snap, *vectors = tiny_world()
    snap.venue_ids, snap.venue_names = ["venue:kdd"], ["KDD"]
    snap.paper_venue[snap.paper_index["e1"]] = 0
    index = EvidenceIndex(snap, *vectors, background=30, seed=0)
    index.queries_from_records = lambda records: [submission(index, qid=str(r["id"])) for r in records]
    (tmp_path / "queries").mkdir(parents=True)
    pool = file_of(tmp_path, ASSIGN_POOL)
    if queries is not None:
        request["queries_file"] = file_of(tmp_path / "queries", queries)
    return plan_assignment(None, tmp_path, AssignmentRequest(pool_file=pool, per_paper=2, max_load=2, **request),
                           index=index, model_and_meta=(assign_world[1], {"version": "t"}), warn=warn)


def test_assign_keeps_a_submission_named_twice_once(assign_world, tmp_path):
    # It exited 2, `submission e1 is given twice`, where every file keeps an identical repeat once.
    said: list[str] = []
    done = assign_submissions(assign_world, tmp_path, said.append, paper_ids=["e1", "x1", "x1"], venue="venue:kdd",
                              year=2017)
    assert done.table.papers == ["e1", "x1"]
    assert said == ["warning: --paper: 1 submission given more than once, kept once: x1",
                    "warning: --venue venue:kdd --year 2017: 1 submission also given by --paper, kept once: e1"]


def test_assign_refuses_a_record_that_gives_a_graph_paper_again(assign_world, tmp_path):
    # The file's record and the graph's paper are two descriptions of one submission: which one holds is not ours
    # to guess. A record repeated in the file is kept once (read_jsonl).
    record = '{"id": "e1", "title": "Boosting, again"}'
    with pytest.raises(UsageError, match=r"^--queries .*user\.file: submission e1 is also given by --venue "
                                         r"venue:kdd --year 2017, as a paper of the graph: give each submission "
                                         r"once, as the graph's paper or as the file's record$"):
        assign_submissions(assign_world, tmp_path / "venue", queries=[record], venue="venue:kdd", year=2017)
    with pytest.raises(UsageError, match=r": submission e1 is also given by --paper, as a paper of the graph"):
        assign_submissions(assign_world, tmp_path / "paper", queries=[record], paper_ids=["e1"])
    said: list[str] = []
    done = assign_submissions(assign_world, tmp_path / "file", said.append, queries=[record, record],
                              paper_ids=["x1"])
    assert done.table.papers == ["x1", "e1"] and len(said) == 1 and "1 repeated record (by id) kept once" in said[0]


@pytest.fixture(scope="module")
def recommend_world(tmp_path_factory):
    from scholargraph.ranking.reviewers import service
    from tests.unit.ranking.reviewers.test_rev_service import world

    store, models = world(), tmp_path_factory.mktemp("models")
    service.train(store, models, min_papers=2, training_queries=10, steps=10)
    _, meta = service.load_model(models)
    return models, service.index_for_model(store, models, meta, True)


def recommend(recommend_world, files=None, declared=(), **options):
    from scholargraph.ranking.reviewers import service

    models, index = recommend_world
    said: list[str] = []
    [(_, suggestions)], _ = service.recommend(None, models, paper_ids=["a0-2004"], k=8, index=index, files=files,
                                              declared=declared, warn=said.append, **options)
    return [s.reviewer_id for s in suggestions], said


def test_recommend_never_suggests_an_excel_openreview_conflict(recommend_world, tmp_path):
    unconstrained, _ = recommend(recommend_world)
    assert "b1" in unconstrained
    lines = ["a0-2004,b1,-1"]
    clean, _ = recommend(recommend_world, declared=[read_declared(file_of(tmp_path, lines), "--conflicts")])
    excel, said = recommend(recommend_world, declared=[read_declared(file_of(tmp_path, lines, bom=True, crlf=True),
                                                                     "--conflicts")])
    assert excel == clean == [r for r in unconstrained if r != "b1"]
    assert "declared conflicts: 1 (submission, reviewer) pair(s) are never suggested: declared (openreview) 1" in said


def test_recommend_refuses_conflicts_or_candidates_that_apply_to_nothing_unless_allowed(recommend_world, tmp_path):
    from scholargraph.ranking.reviewers.service import ReviewerFiles

    path = file_of(tmp_path, ["no-such-paper,b1,-1"])
    declared = [read_declared(path, "--conflicts")]
    with pytest.raises(UsageError, match=rf"^--conflicts {re.escape(path)}: none of its 1 row\(s\) applies"):
        recommend(recommend_world, declared=declared)
    unconstrained, _ = recommend(recommend_world)
    allowed, said = recommend(recommend_world, declared=declared, allow_empty=True)
    assert allowed == unconstrained and said[-1].endswith("it changes nothing (--allow-empty)")

    listed = ReviewerFiles(candidates={"no-such-paper": ["b1"]}, candidates_file="c.txt")
    with pytest.raises(UsageError, match=r"^--candidates c.txt: none of its 1 submission id\(s\) applies"):
        recommend(recommend_world, listed)
    assert recommend(recommend_world, listed, allow_empty=True)[0] == unconstrained
    some = ReviewerFiles(candidates={"a0-2004": ["b1", "c2"], "no-such-paper": ["b1"]}, candidates_file="c.txt")
    ranked, said = recommend(recommend_world, some)
    assert sorted(ranked) == ["b1", "c2"]
    assert said == ["warning: --candidates: 1 of 2 submission ids name no submission of this run: their candidates "
                    "are not used, e.g. no-such-paper"]
