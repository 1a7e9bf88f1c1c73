"""sql.regex: Postgres 15's regexp_count / instr / substr / like / split / replace(start, N)
argument checks and the Java regexes they run (pure: no Spark)."""

import re

import pytest

from sql import regex
from sql.errors import SqlError
from sql.types import INT4, TEXT, SqlType


def test_signatures() -> None:
    unknown = SqlType("unknown")
    assert regex.function_type("regexp_instr", [unknown, unknown, INT4, INT4, INT4, unknown, INT4]) == (
        [TEXT, TEXT, INT4, INT4, INT4, TEXT, INT4], INT4)
    assert regex.function_type("regexp_count", [unknown, unknown, INT4, unknown, INT4]) is None
    assert regex.function_type("regexp_replace", [unknown, unknown, unknown, unknown]) is None  # flags form
    assert regex.function_type("regexp_replace", [unknown, unknown, unknown, INT4])[1] == TEXT


@pytest.mark.parametrize(("name", "values", "message"), [
    ("regexp_count", ["a", 0], 'invalid value for parameter "start": 0'),
    ("regexp_instr", ["a", 1, 0], 'invalid value for parameter "n": 0'),
    ("regexp_instr", ["a", 1, 1, 2], 'invalid value for parameter "endoption": 2'),
    ("regexp_substr", ["a", 1, 1, "", -1], 'invalid value for parameter "subexpr": -1'),
    ("regexp_like", ["a", "g"], 'regexp_like() does not support the "global" option'),
    ("regexp_count", ["a", 1, "z"], 'invalid regular expression option: "z"'),
])
def test_postgres_argument_errors(name: str, values: list, message: str) -> None:
    with pytest.raises(SqlError) as err:
        regex.parse_args(name, values)
    assert (err.value.sqlstate, err.value.message) == ("22023", message)


def test_replace_takes_g_and_n_zero() -> None:
    assert regex.parse_args("regexp_replace", ["a", "x", 1, 0, "g"]).n == 0


def test_nth_match_is_the_find_loops_nth() -> None:
    """The anchored regex's last group is the N-th leftmost match (checked with Python's re,
    which has atomic groups since 3.11, against a find loop)."""
    for pattern, text in [("a+", "aab aaa b a"), ("a.c", "abcabcabc"), ("b|ab", "abab b")]:
        b = regex.body(pattern)
        found = [m.start() for m in re.finditer(pattern, text)]
        for n in range(1, len(found) + 2):
            pat, g = regex.nth_match(b, regex.RegexArgs(pattern, n=n))
            m = re.match(pat, text)
            assert (m.start(g) if m else None) == (found[n - 1] if n <= len(found) else None)


@pytest.mark.parametrize("pattern", ["a*", "(?:)", "x|", "(a)?"])
def test_nth_match_of_a_nullable_pattern_is_refused(pattern: str) -> None:
    with pytest.raises(SqlError) as err:
        regex.check("regexp_instr", regex.RegexArgs(pattern, n=2))
    assert err.value.sqlstate == "0A000"


def test_dollar_is_the_string_end_and_backslash_b_refused() -> None:
    assert regex.body("a$").text == "a\\z"
    assert regex.body("[$]").text == "[$]"
    with pytest.raises(SqlError):
        regex.body("\\ba")


def test_caret_with_a_start_position_is_refused() -> None:
    with pytest.raises(SqlError):
        regex.check("regexp_count", regex.RegexArgs("^a", start=2))


def test_regexp_matches_takes_g_and_refuses_optional_empty_groups() -> None:
    assert regex.parse_args("regexp_matches", ["a", "gi"]).flags == "gi"
    assert [g for g in regex.matches_body("(a)(b+)c").groups] == [(1, 2), (4, 6)]
    for pattern in ("(a)(x*)?", "(a*)|b", "(a?)*", "(a)(b+)?c"):
        with pytest.raises(SqlError) as err:
            regex.matches_body(pattern)
        assert err.value.sqlstate == "0A000"
    regex.matches_body("(a*)b")  # a group in every match: its '' is the empty string


def test_regexp_matches_arguments() -> None:
    from sql.scalar import Column, Literal

    s = Column(0, TEXT)
    assert regex.bind_matches([s, Literal("b", TEXT)])[1:] == (Literal("b", TEXT), Literal("", TEXT))
    assert regex.bind_matches([s, Literal(None, TEXT)])[0] == Literal(None, TEXT)  # strict: no rows
    with pytest.raises(SqlError) as err:
        regex.bind_matches([s, s])
    assert err.value.sqlstate == "0A000"
    with pytest.raises(SqlError) as err:
        regex.bind_matches([s, Literal("b", TEXT), Literal("q", TEXT)])
    assert err.value.sqlstate == "0A000"  # a Postgres flag Java has no translation for


@pytest.mark.parametrize(("pattern", "ok"), [
    ("a|ab", False), ("(ab)?(abcd)?", False), ("(a+?)(b*)", False), ("a*?", False), ("x{1,2}?", False),
    ("(x){2}", False), ("(bar)(beque)", True), ("b[^b]+", True), ("[|?]+x{2}", True), ("a\\|b", True),
    ("[[:alpha:]]+$", True), ("a|e|i|o|u", True), ("^Ste(v|ph)en$", True), ("(foo|fo)", False), ("x(a|b*)", False),
    ("^|$", True), ("a|$", False), ("(^a|b)", False), ("^a|^b", False),
])
def test_patterns_java_may_match_otherwise_are_refused(pattern: str, ok: bool) -> None:
    """Alternation, quantified groups and non-greedy quantifiers: Postgres' ARE takes the
    longest match at the leftmost position, Java the first its backtracking finds."""
    if ok:
        regex.leftmost_first_is_longest(pattern)
    else:
        with pytest.raises(SqlError) as err:
            regex.leftmost_first_is_longest(pattern)
        assert err.value.sqlstate == "0A000"
