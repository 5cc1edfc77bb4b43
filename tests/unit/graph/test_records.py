"""The id policy: DOIs, source-qualified ids, name keys, venues."""

import pytest

from scholargraph.graph.records import (
    author_name_key,
    fold_id,
    normalize_doi,
    normalize_orcid,
    paper_id,
    source_id,
    venue_key,
)


@pytest.mark.parametrize("raw, expected", [
    ("10.1145/3336191.3371770", "10.1145/3336191.3371770"),
    ("https://doi.org/10.1145/ABC.DEF", "10.1145/abc.def"),
    ("doi:10.1023/A:1011145532042", "10.1023/a:1011145532042"),
    ("  10.5555/X  ", "10.5555/x"),
    ("not a doi", None),
    ("", None),
    (None, None),
])
def test_normalize_doi(raw, expected):
    assert normalize_doi(raw) == expected


def test_paper_id_prefers_doi_then_source_id():
    assert paper_id("https://doi.org/10.1234/XY", "aminer", "123") == "10.1234/xy"
    assert paper_id(None, "aminer", "123") == "aminer:123"
    with pytest.raises(ValueError):
        paper_id(None, "aminer", " ")


def test_author_name_key_folds_accents_and_punctuation():
    assert author_name_key("Béatrice  Daille") == author_name_key("beatrice daille") == "name:beatrice_daille"
    assert author_name_key("O'Neil, J.") == "name:o_neil_j"
    with pytest.raises(ValueError):
        author_name_key(" .. ")


def test_orcid_and_venue_keys():
    assert normalize_orcid("https://orcid.org/0000-0002-1825-009x") == "0000-0002-1825-009X"
    assert normalize_orcid("nope") is None
    assert venue_key("SIGIR '20") == venue_key("SIGIR 2021") == "venue:sigir"
    assert venue_key("Proceedings of the 43rd International ACM SIGIR Conference") == \
        "venue:proceedings_of_the_international_acm_sigir_conference"


def test_no_id_contains_whitespace():
    assert fold_id("  my \t key\n2 ") == "my_key_2"
    assert fold_id("a\u00a0b") == "a_b"  # a no-break space is whitespace too
    assert source_id("bibtex", "my key") == "bibtex:my_key"
    assert paper_id(None, "aminer", " 12 3 ") == "aminer:12_3"
    for key in (author_name_key("Ahmed T. Elthakeb"), venue_key("ACM SIGIR '20"), source_id("bibtex", "x\ty")):
        assert not any(c.isspace() for c in key), key
    assert author_name_key("Ahmed T. Elthakeb") == "name:ahmed_t_elthakeb"
