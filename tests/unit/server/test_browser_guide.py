"""The query library's Neo4j Browser guide: HTML from query specs, and the Browser jar carrying it."""

import re
import zipfile

from scholargraph.graph.query_library import QuerySpec, list_queries
from scholargraph.server import browser_guide
from scholargraph.server.browser_guide import (
    GUIDE_RESOURCE,
    library_guide,
    params_command,
    query_body,
    render_guide,
    write_browser_jar,
)

TOP = QuerySpec("top_things", "The top things of a topic.",
                "scholargraph query top_things -p topic=topic:3 -p limit=5",
                {"topic": ("string", None), "limit": ("int", "10"), "minScore": ("float", "0.5")})
TOP_TEXT = """// purpose: The top things of a topic.
// params: topic (string, a Topic id), limit (int, default 10), minScore (float, default 0.5)
// example: scholargraph query top_things -p topic=topic:3 -p limit=5

MATCH (a:Author)-[r:RISING_STAR_IN]->(t:Topic {id: $topic}) WHERE r.score >= $minScore
RETURN a.id AS author ORDER BY r.score DESC LIMIT $limit
"""


def guide_names(page: str) -> list[str]:
    """The query names of a rendered guide, in order."""
    return re.findall(r"<h3>([\w-]+)</h3>", page)


RUNS = QuerySpec("runs", "Latest runs & their status.", "", {})
RUNS_TEXT = "// purpose: Latest runs & their status.\nMATCH (r:ScoringRun) RETURN r\n"


def test_guide_structure_one_slide_per_query_after_the_intro():
    page = render_guide([(TOP, TOP_TEXT), (RUNS, RUNS_TEXT)])
    assert page.startswith('<article class="guide">\n  <carousel class="deck container-fluid">')
    assert page.rstrip().endswith("</carousel>\n</article>")
    assert page.count('<slide class="row-fluid">') == 3 == page.count("</slide>")
    assert page.count('<div class="col-sm-12">') == 3
    assert guide_names(page) == ["top_things", "runs"]
    intro = page.split("</slide>")[0]
    assert "top_things" in intro and "runs" in intro  # the intro lists every query


def test_query_slide_params_and_runnable_query():
    page = render_guide([(TOP, TOP_TEXT)])
    runnable = '<pre mode="cypher" class="pre-scrollable code runnable">'
    # The example's values win over the defaults; a default fills in what the example leaves out;
    # strings are quoted, numbers are not.
    assert f"{runnable}:params {{topic: 'topic:3', limit: 5, minScore: 0.5}}</pre>" in page
    # The query text without its header comment, HTML-escaped inside a runnable block.
    assert (f"{runnable}MATCH (a:Author)-[r:RISING_STAR_IN]-&gt;(t:Topic {{id: $topic}}) WHERE r.score &gt;= "
            "$minScore\nRETURN a.id AS author ORDER BY r.score DESC LIMIT $limit</pre>") in page
    assert "// purpose" not in page
    assert "The top things of a topic." in page
    assert "scholargraph query top_things -p topic=topic:3 -p limit=5" in page


def test_query_without_params_and_escaping():
    page = render_guide([(RUNS, RUNS_TEXT)])
    assert params_command(RUNS) is None
    assert ":params" not in page.split("</slide>")[1]
    assert "Latest runs &amp; their status." in page


def test_params_command_quotes_strings_and_marks_unknown_values():
    spec = QuerySpec("q", "p", "scholargraph query q -p name=O'Brien", {"name": ("string", None),
                                                                       "other": ("string", None),
                                                                       "n": ("int", "x1")})
    assert params_command(spec) == ":params {name: 'O\\'Brien', other: null, n: 'x1'}"


def test_query_body_strips_only_the_header():
    assert query_body("// a\n// b\n\nMATCH (n)\n// inside\nRETURN n\n") == "MATCH (n)\n// inside\nRETURN n"


def test_library_guide_has_every_query_with_runnable_text():
    page = library_guide()
    names = [q.name for q in list_queries()]
    assert names and guide_names(page) == names
    for spec in list_queries():
        if spec.params:
            assert params_command(spec) in page
    assert "$authorId" in page and "$paperId" in page


def test_browser_jar_is_a_copy_with_the_guide_added(tmp_path):
    original = tmp_path / "neo4j-browser.jar"
    with zipfile.ZipFile(original, "w") as jar:
        jar.writestr("browser/", "")
        jar.writestr("browser/index.html", "<title>Neo4j Browser</title>")
    target = tmp_path / "home" / "browser" / "copy.jar"
    assert write_browser_jar(original, target, "<article>guide</article>") == target
    with zipfile.ZipFile(target) as jar:
        assert jar.testzip() is None
        assert jar.read("browser/index.html") == b"<title>Neo4j Browser</title>"
        assert jar.read(GUIDE_RESOURCE) == b"<article>guide</article>"
        assert "browser/scholargraph/" in jar.namelist()
    # Rebuilt from the original each time: the new page replaces the old one.
    write_browser_jar(original, target, "<article>v2</article>")
    with zipfile.ZipFile(target) as jar:
        assert jar.read(GUIDE_RESOURCE) == b"<article>v2</article>"
        assert jar.namelist().count(GUIDE_RESOURCE) == 1
    assert not list(target.parent.glob("*.tmp"))


def test_guide_url():
    assert browser_guide.guide_url(7474) == "http://127.0.0.1:7474/browser/scholargraph/guide.html"
