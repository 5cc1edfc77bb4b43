"""Name parsing, blocking and compatibility on the spellings of real hep-th and DBLP names."""

from __future__ import annotations

import pytest

from scholargraph.ranking.authors.names import PersonName, block_key, compatible, parse_name


@pytest.mark.parametrize(("raw", "given", "surname"), [
    ("A.A. Tseytlin", ("a", "a"), "tseytlin"),
    ("A.A.Tseytlin", ("a", "a"), "tseytlin"),
    ("A. A. Tseytlin", ("a", "a"), "tseytlin"),
    ("Arkady A. Tseytlin", ("arkady", "a"), "tseytlin"),
    ("J.-B. Zuber", ("j", "b"), "zuber"),
    ("Jean-Bernard Zuber", ("jean", "bernard"), "zuber"),
    ("Zuber, Jean-Bernard", ("jean", "bernard"), "zuber"),
    ("Johannes van der Waals", ("johannes",), "vanderwaals"),
    ("van der Waals, Johannes", ("johannes",), "vanderwaals"),
    ("Van Morrison", ("van",), "morrison"),
    ("Jürgen Müller", ("jurgen",), "muller"),
    ("Søren Straße", ("soren",), "strasse"),
    ("Martin Luther King Jr.", ("martin", "luther"), "king"),
    ("Wang, Jun", ("jun",), "wang"),
    ("Jordi Par\\'{\\i}s", ("jordi",), "paris"),  # LaTeX accents, as arXiv gives them
    ('Ulf Lindstr\\"{o}m', ("ulf",), "lindstrom"),
    ("M. Blagojevi\\'c", ("m",), "blagojevic"),
    ("\\c{C}etin \\c{C}elik", ("cetin",), "celik"),
    ("S\\o{}ren Kierkegaard", ("soren",), "kierkegaard"),
    ("Ctirad Klim\\v c\\'\\i k", ("ctirad",), "klimcik"),  # a control word takes the spaces after it
    ("Santiago Garc\\' \\i a", ("santiago",), "garcia"),
    ("David J. Fern\\'andez C", ("david", "j"), "fernandez"),  # a second surname's initial
    ("Izawa K.-I", ("k", "i"), "izawa"),  # surname first, then initials
    ("Wang J", ("j",), "wang"),
])
def test_parse(raw, given, surname):
    assert parse_name(raw) == PersonName(given, surname)


@pytest.mark.parametrize("debris", ["7 pages", "14p", "ud 1994", "Jr", "", "  ", "王军"])
def test_debris_and_other_scripts_give_no_name(debris):
    assert parse_name(debris) is None


def test_the_hep_th_spellings_of_one_person_share_a_block_and_fit():
    spellings = ["A.A. Tseytlin", "A.A.Tseytlin", "Arkady A. Tseytlin", "Arkady Tseytlin", "A. Tseytlin",
                 "A. A. Tseytlin"]
    names = [parse_name(s) for s in spellings]
    assert {block_key(n) for n in names} == {"tseytlin a"}
    assert all(compatible(a, b) for a in names for b in names)
    kallosh = [parse_name(s) for s in ("Renata Kallosh", "R. Kallosh", "R.E. Kallosh")]
    assert all(compatible(a, b) for a in kallosh for b in kallosh)
    assert compatible(parse_name("J.-B. Zuber"), parse_name("Jean-Bernard Zuber"))


@pytest.mark.parametrize(("a", "b"), [
    ("Arkady Tseytlin", "Alexander Tseytlin"),  # two full given names
    ("A.B. Smith", "A.C. Smith"),  # the middle initials differ
    ("Arkady B. Tseytlin", "Arkady C. Tseytlin"),
    ("Jun Wang", "Jun Wong"),  # another surname
    ("J.-B. Zuber", "Jean-Claude Zuber"),
])
def test_names_that_cannot_be_one_person(a, b):
    assert not compatible(parse_name(a), parse_name(b))
