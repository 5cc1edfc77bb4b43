"""Property tests: every file a user hands the CLI, fed random bytes and cut-off valid files, is refused with
exit 2 and one line `scholargraph: OPTION FILE...` (or, where the bytes happen to be a valid file, reaches the
store and stops at `cannot reach Neo4j`, exit 1), never a traceback, and always before a server is needed.

The file options, found by reading the click commands (`click.Path` options of scholargraph/cli.py and
scholargraph/**/cli.py, and `--senior`, a rule or a file):

    scholargraph --config FILE (and SCHOLARGRAPH_CONFIG=FILE)   TOML, [scholargraph] table
    reviewers train      --queries   submissions JSONL (with --qrels)
    reviewers train      --qrels     graded judgments `qid 0 reviewer grade`
    reviewers recommend  --queries   submissions JSONL
    reviewers recommend  --pool      author ids, one per line
    reviewers recommend  --candidates  `qid 0 cand rel` or `qid cand`
    reviewers evaluate   --queries   submissions JSONL (candidates protocol)
    reviewers evaluate   --qrels     graded judgments; also the candidate lists when --candidates is absent
    reviewers evaluate   --candidates
    reviewers evaluate --protocol expertise  --queries  the rated papers, JSONL
    reviewers evaluate --protocol expertise  --qrels    ratings `paper 0 reviewer expertise`
    reviewers assign     --queries   submissions JSONL
    reviewers assign     --pool      reviewer ids
    reviewers assign     --loads     `reviewer max [min]` (a header line allowed)
    reviewers assign     --forbid    `paper reviewer` pairs
    reviewers assign     --force     `paper reviewer` pairs
    reviewers assign     --senior    a file of reviewer ids (when not papers>=N / years>=N)
    reviewers assign     --attributes  table `reviewer,attr...`
    citations recommend  --queries   drafts JSONL
    citations recommend  --text-file  title line, then the abstract
    citations evaluate   --queries   drafts JSONL (with --qrels)
    citations evaluate   --qrels     `qid 0 paper grade` or `qid paper`

Not covered here, on purpose: `ingest FORMAT PATH...` (bibliographic dumps: a bad record is quarantined and
counted, tests/unit/ingest/test_fuzz.py), `--snapshot DIR` (a Parquet export directory), and the options
that name files the CLI writes (--out, --plot, --picture, --quarantine, export's DIR).

The expected outcome of an input, per kind of file:
  * bytes that are not UTF-8 (the seed with an invalid byte spliced in): always exit 2, the line naming the
    option, the file and the line of the bad byte (`... FILE:N: not UTF-8 text`);
  * random bytes and truncated seeds: some of them are valid (any text with one non-blank line is an id list,
    an empty file is valid TOML, ...), so the test asks the very reader the command goes through
    (user_files and the readers built on it, `oracle` below) whether the file is acceptable. Refused: exit
    2 and exactly the reader's message as the one line on stderr. Accepted: exit 1 and the one line
    `scholargraph: cannot reach Neo4j ...` (SCHOLARGRAPH_NEO4J_URI points at a closed loopback port), which
    shows the file was read and validated before the store was opened;
  * known nasty inputs (regressions of bugs these tests found): exit 2 with the given message.
Anything else (exit 0, another code, a traceback, an exception's class name, a second line) fails."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from scholargraph.cli import main
from scholargraph.config import Settings
from scholargraph.errors import UsageError

FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CLOSED_URI = "bolt://127.0.0.1:1"  # nothing listens on port 1: a command that gets this far exits 1
UNREACHABLE = re.compile(r"^scholargraph: cannot reach Neo4j at bolt://127\.0\.0\.1:1\b")
LEAKED_CLASS = re.compile(r"\b[A-Z]\w*(Error|Exception)\b|Traceback")

# --- valid seeds -------------------------------------------------------------------------------------------

QUERIES = (b'{"id": "s1", "title": "Graph neural networks for citation recommendation", "abstract": "We rank '
           b'papers.", "year": 2020, "authors": ["Ada Lovelace", {"name": "Alan Turing", "id": "s2author:7"}], '
           b'"references": ["aminer:12", 34], "k": 2}\n'
           b'{"id": 42, "title": "Reviewer assignment under loads", "author_ids": ["s2author:9"]}\n'
           b'\n'
           b'{"id": "s3", "title": "Rising stars", "abstract": null, "year": null}\n')
GRADES = b"# query 0 reviewer grade\ns1 0 s2author:1 3\ns1 0 1737249 0\n42 0 s2author:2 2\ns3 s2author:5\n"
RATINGS = b"s1 0 s2author:1 4.5\n42 0 s2author:1 2\ns3 0 s2author:2 -1e2\n"
IDS = b"# reviewers\ns2author:1737249\n\n1737249  trailing fields are ignored\naminer:5\n"
CANDIDATES = b"s1 0 s2author:1 3\ns1 s2author:2\n42 s2author:3 anything\n"
LOADS = b"reviewer,max,min\ns2author:1,4,1\n1737249,2\ns2author:3\t6\t0\n"
PAIRS = b"paper,reviewer\ns1,s2author:1\n42 1737249\n# a comment\ns3\ts2author:9\n"
ATTRIBUTES = b"reviewer,senior,industry\ns2author:1,1,no\n1737249,true,0\naminer:5,y,Yes\n"
TEXT = b"Graph neural networks for citation recommendation\nWe rank papers by what a draft should cite.\n"
CONFIG = (b"# scholargraph settings\n[scholargraph]\nneo4j_user = \"neo4j\"\nneo4j_port = 7687\n"
          b"neo4j_http_port = 0\nneo4j_auth = \"on\"\nheap = \"1g\"\nplugins = \"apoc\"\n\n[other]\nx = [1, 2]\n")


@dataclass(frozen=True)
class Kind:
    """One file option of one command: the command line around the file, a valid seed, and the reader the
    command goes through (raising a UsageError when it refuses the file)."""

    name: str
    option: str  # how the one line names it
    seed: bytes
    argv: Callable[[str, dict[str, str]], list[str]]  # (the fuzzed file, the valid companion files) -> argv
    reader: Callable[[str, dict[str, str]], object]
    env: Callable[[str], dict[str, str]] = field(default=lambda path: {})


def _reviewer_files():
    from scholargraph.ranking.reviewers.service import ReviewerFiles

    return ReviewerFiles


def _chair(**request):
    from scholargraph.conference.assignment.plan import AssignmentRequest, ChairFiles

    return ChairFiles.read(AssignmentRequest(paper_ids=("x",), **request))


def _citations_recommend(queries: str | None = None, text_file: str | None = None):
    from scholargraph.ranking.citations.cli import _queries_from_options

    return _queries_from_options(queries, None, None, text_file)


def _citations_evaluate(queries: str, qrels: str):
    from scholargraph.ranking.citations.recommender import read_queries
    from scholargraph.ranking.metrics import read_qrels

    return read_queries(queries), read_qrels(qrels)


def _settings(path: str, _):
    return Settings.load(env={"SCHOLARGRAPH_NEO4J_URI": CLOSED_URI}, config_file=path)


KINDS = [
    Kind("config", "--config", CONFIG, lambda f, c: ["--config", f, "reviewers", "recommend", "--paper", "x"],
         _settings),
    Kind("config-env", "--config", CONFIG, lambda f, c: ["reviewers", "recommend", "--paper", "x"], _settings,
         env=lambda path: {"SCHOLARGRAPH_CONFIG": path}),
    Kind("train-queries", "--queries", QUERIES,
         lambda f, c: ["reviewers", "train", "--queries", f, "--qrels", c["grades"]],
         lambda f, c: _reviewer_files().for_training(f, c["grades"])),
    Kind("train-qrels", "--qrels", GRADES,
         lambda f, c: ["reviewers", "train", "--queries", c["queries"], "--qrels", f],
         lambda f, c: _reviewer_files().for_training(c["queries"], f)),
    Kind("recommend-queries", "--queries", QUERIES, lambda f, c: ["reviewers", "recommend", "--queries", f],
         lambda f, c: _reviewer_files().for_recommend(queries=f)),
    Kind("recommend-pool", "--pool", IDS, lambda f, c: ["reviewers", "recommend", "--paper", "x", "--pool", f],
         lambda f, c: _reviewer_files().for_recommend(pool=f)),
    Kind("recommend-candidates", "--candidates", CANDIDATES,
         lambda f, c: ["reviewers", "recommend", "--paper", "x", "--candidates", f],
         lambda f, c: _reviewer_files().for_recommend(candidates=f)),
    Kind("evaluate-queries", "--queries", QUERIES,
         lambda f, c: ["reviewers", "evaluate", "--queries", f, "--qrels", c["grades"]],
         lambda f, c: _reviewer_files().for_candidates(f, c["grades"])),
    Kind("evaluate-qrels", "--qrels", GRADES,
         lambda f, c: ["reviewers", "evaluate", "--queries", c["queries"], "--qrels", f],
         lambda f, c: _reviewer_files().for_candidates(c["queries"], f)),
    Kind("evaluate-candidates", "--candidates", CANDIDATES,
         lambda f, c: ["reviewers", "evaluate", "--queries", c["queries"], "--qrels", c["grades"],
                       "--candidates", f],
         lambda f, c: _reviewer_files().for_candidates(c["queries"], c["grades"], f)),
    Kind("expertise-queries", "--queries", QUERIES,
         lambda f, c: ["reviewers", "evaluate", "--protocol", "expertise", "--queries", f, "--qrels", c["ratings"]],
         lambda f, c: _reviewer_files().for_expertise(f, c["ratings"])),
    Kind("expertise-qrels", "--qrels", RATINGS,
         lambda f, c: ["reviewers", "evaluate", "--protocol", "expertise", "--queries", c["queries"], "--qrels", f],
         lambda f, c: _reviewer_files().for_expertise(c["queries"], f)),
    Kind("assign-queries", "--queries", QUERIES, lambda f, c: ["reviewers", "assign", "--queries", f],
         lambda f, c: _chair(queries_file=f)),
    Kind("assign-pool", "--pool", IDS, lambda f, c: ["reviewers", "assign", "--paper", "x", "--pool", f],
         lambda f, c: _chair(pool_file=f)),
    Kind("assign-loads", "--loads", LOADS, lambda f, c: ["reviewers", "assign", "--paper", "x", "--loads", f],
         lambda f, c: _chair(loads_file=f)),
    Kind("assign-forbid", "--forbid", PAIRS, lambda f, c: ["reviewers", "assign", "--paper", "x", "--forbid", f],
         lambda f, c: _chair(forbid_file=f)),
    Kind("assign-force", "--force", PAIRS, lambda f, c: ["reviewers", "assign", "--paper", "x", "--force", f],
         lambda f, c: _chair(force_file=f)),
    Kind("assign-senior", "--senior", IDS, lambda f, c: ["reviewers", "assign", "--paper", "x", "--senior", f],
         lambda f, c: _chair(senior=f)),
    Kind("assign-attributes", "--attributes", ATTRIBUTES,
         lambda f, c: ["reviewers", "assign", "--paper", "x", "--attributes", f],
         lambda f, c: _chair(attributes_file=f)),
    Kind("citations-queries", "--queries", QUERIES, lambda f, c: ["citations", "recommend", "--queries", f],
         lambda f, c: _citations_recommend(queries=f)),
    Kind("citations-text-file", "--text-file", TEXT, lambda f, c: ["citations", "recommend", "--text-file", f],
         lambda f, c: _citations_recommend(text_file=f)),
    Kind("citations-evaluate-queries", "--queries", QUERIES,
         lambda f, c: ["citations", "evaluate", "--queries", f, "--qrels", c["grades"]],
         lambda f, c: _citations_evaluate(f, c["grades"])),
    Kind("citations-evaluate-qrels", "--qrels", GRADES,
         lambda f, c: ["citations", "evaluate", "--queries", c["queries"], "--qrels", f],
         lambda f, c: _citations_evaluate(c["queries"], f)),
]
BY_NAME = {k.name: k for k in KINDS}


# --- running the CLI ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The valid companion files, a home without models, and an environment without the caller's settings."""
    root = tmp_path_factory.mktemp("user-files")
    companions = {}
    for name, data in {"queries": QUERIES, "grades": GRADES, "ratings": RATINGS}.items():
        (root / f"good-{name}").write_bytes(data)
        companions[name] = str(root / f"good-{name}")
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("SCHOLARGRAPH_")}
    env.update({"SCHOLARGRAPH_NEO4J_URI": CLOSED_URI, "SCHOLARGRAPH_HOME": str(root / "home")})
    return root, companions, env


def run(world, kind: Kind, data: bytes):
    """Write `data` as the kind's file, run the command in process; (exit code, stderr, the file's path)."""
    root, companions, env = world
    path = root / f"{kind.name}.file"
    path.write_bytes(data)
    result = CliRunner(env={**env, **kind.env(str(path))}).invoke(main, kind.argv(str(path), companions))
    # Only SystemExit is a clean end: any other exception is what a user would see as a traceback.
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"{kind.name}: {type(result.exception).__name__}: {result.exception}\n{data[:200]!r}"
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.stderr, str(path)


def oracle(world, kind: Kind, path: str) -> str | None:
    """The message of the reader's UsageError for this file, or None when it accepts the file."""
    _, companions, _ = world
    try:
        kind.reader(path, companions)
    except UsageError as exc:
        return str(exc)
    return None


def check(world, kind: Kind, data: bytes) -> str:
    """Runs the command and checks the outcome the reader predicts; returns its one stderr line (besides the
    line that says the file repeats entries, kept once: a valid file may, test_user_file_discipline.py)."""
    code, stderr, path = run(world, kind, data)
    repeats = f"scholargraph: warning: {kind.option} {path}: "
    lines = [line for line in stderr.splitlines() if not (line.startswith(repeats) and " kept once, " in line)]
    assert len(lines) == 1, f"{kind.name}: expected one line on stderr, got {stderr!r} for {data[:200]!r}"
    refused = oracle(world, kind, path)
    if refused is None:  # a valid file: read, then the store (which is not there)
        assert code == 1 and UNREACHABLE.match(lines[0]), f"{kind.name}: {code} {stderr!r} for {data[:200]!r}"
    else:
        assert code == 2, f"{kind.name}: exit {code}, {stderr!r} for {data[:200]!r}"
        assert lines[0] == f"scholargraph: {refused}"
        assert lines[0].startswith(f"scholargraph: {kind.option} {path}"), lines[0]
        assert not LEAKED_CLASS.search(lines[0]), lines[0]
    return lines[0]


def fuzz(world, kind: Kind, data: bytes) -> str:
    """check() inside a hypothesis test, counting the two outcomes (pytest --hypothesis-show-statistics)."""
    line = check(world, kind, data)
    event("valid: exit 1 at the store" if UNREACHABLE.match(line) else "refused: exit 2")
    return line


# --- the properties ----------------------------------------------------------------------------------------

NAMES = [k.name for k in KINDS]


@pytest.mark.parametrize("name", NAMES)
def test_the_valid_seed_passes_the_file_checks(world, name):
    """The seeds are valid: the command reads them and goes on to the store."""
    kind = BY_NAME[name]
    assert UNREACHABLE.match(check(world, kind, kind.seed))


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(data=st.binary(max_size=400) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_random_bytes(world, name, data):
    fuzz(world, BY_NAME[name], data)


@pytest.mark.parametrize("name", NAMES)
@FUZZ
@given(cut=st.floats(0, 1), tail=st.sampled_from([b"", b"\n", b"\r\n", b" ", b"#"]))
def test_truncated_seed(world, name, cut, tail):
    kind = BY_NAME[name]
    fuzz(world, kind, kind.seed[: int(len(kind.seed) * cut)] + tail)


@pytest.mark.parametrize("name", NAMES)
@settings(FUZZ, max_examples=15)
@given(at=st.floats(0, 1), bad=st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xe2\x82", b"\x80abc"]))
def test_not_utf8_is_refused_naming_the_line(world, name, at, bad):
    """Certainly invalid: exit 2 whatever the reader says, naming the line of the first bad byte."""
    kind = BY_NAME[name]
    cut = int(len(kind.seed) * at)
    data = kind.seed[:cut] + bad + kind.seed[cut:]
    number = kind.seed[:cut].count(b"\n") + 1
    line = fuzz(world, kind, data)
    assert re.search(rf"\.file:{number}: not UTF-8 text \(byte 0x[0-9a-f]{{2}}\)$", line), line


HUGE = "1" * 5000  # more digits than int() takes (sys.get_int_max_str_digits: 4300)
DEEP = "[" * 5000  # deeper than the parsers' recursion
NASTY = [  # (kind, file, the end of the one line): each was a traceback, or a message naming no file
    ("train-qrels", f"s1 0 r1 {HUGE}\n", ":1: the grade has too many digits (5,000)"),
    ("citations-evaluate-qrels", f"s1 0 p1 {HUGE}\n", ":1: the grade has too many digits (5,000)"),
    ("evaluate-qrels", f"s1 0 r1 1\ns1 0 r2 {HUGE}\n", ":2: the grade has too many digits (5,000)"),
    ("assign-loads", f"r1 {HUGE}\n", ":1: max has too many digits (5,000)"),
    ("assign-loads", f"r1,3,{HUGE}\n", ":1: min has too many digits (5,000)"),
    ("recommend-queries", f'{{"id": {HUGE}}}\n', ":1: not JSON (a number with too many digits)"),
    ("assign-queries", f'{{"id": "s1", "k": {HUGE}}}\n', ":1: not JSON (a number with too many digits)"),
    ("citations-queries", f'{{"id": "a"}}\n{{"id": "b", "year": {HUGE}}}\n',
     ":2: not JSON (a number with too many digits)"),
    ("recommend-queries", f'{{"id": {DEEP}\n', ":1: JSON nested too deeply"),
    ("assign-forbid", "paper,reviewer\ns1,r1\rs2,r2\n", ":2: not a comma-separated row (a carriage return inside "
     "the line)"),
    ("assign-attributes", "reviewer,senior\nr1,1\r\nr2,0\rr3\n", ":3: not a comma-separated row (a carriage "
     "return inside the line)"),
    ("assign-senior", "r1,\rr2\n", ":1: not a comma-separated row (a carriage return inside the line)"),
    ("assign-force", "s1," + "r" * 200_000 + "\n", ":1: not a comma-separated row (field larger than field limit "
     "(131072))"),
    ("config", f"[scholargraph]\nneo4j_port = {HUGE}\n", ": not TOML (a number with too many digits)"),
    ("config-env", f"[scholargraph]\nheap = {DEEP}\n", ": not TOML (nested too deeply)"),
    ("config", "[scholargraph]\nheap = {a = {b = {c = " + "{d = " * 2000 + "\n", ": not TOML (nested too deeply)"),
    ("config", '[scholargraph]\ncache = "~no-such-user-zz/x"\n',
     ": cache must be a path whose ~user exists, not '~no-such-user-zz/x'"),
]


@pytest.mark.parametrize(("name", "text", "end"), NASTY, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(NASTY)])
def test_known_nasty_files(world, name, text, end):
    line = check(world, BY_NAME[name], text.encode())
    assert line.endswith(end), line
