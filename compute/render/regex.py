"""Spark SQL of Postgres 15's regexp_count / regexp_instr / regexp_substr / regexp_like /
regexp_split_to_array and regexp_replace(..., start, N): Java regexes built by sql.regex
(anchored N-th-match regexes, see there). Every regex a user's value meets runs in the Java
UDFs of mzspark.udf.RegexUdfs (compute/jvm/src), never in Spark's own regexp_* functions:
each is the Spark built-in of the same name (mz_regex_find = regexp_like, mz_regexp_replace,
mz_regexp_extract, mz_regexp_extract_all, mz_regexp_count, mz_regexp_split = split(s, p, -1))
that turns a matcher's stack overflow into a statement error (54001) instead of a dead JVM."""

from __future__ import annotations

from typing import TYPE_CHECKING

from compute.render.spark_sql import fresh_var, let_bind, quote
from sql import regex

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_CLASS = "mzspark.udf.RegexUdfs$"
# UDF name -> (Java class, its result: a Spark type name)
_UDFS = {"mz_regex_find": ("Find", "boolean"), "mz_regexp_replace": ("Replace", "string"),
         "mz_regexp_extract": ("Extract", "string"), "mz_regexp_extract_all": ("ExtractAll", "strings"),
         "mz_regexp_count": ("Count", "int"), "mz_regexp_split": ("Split", "strings")}


def register(spark: SparkSession) -> None:
    """The guarded regex UDFs (the jar is on the session's classpath: spark.jars,
    compute.render.jvm)."""
    from pyspark.sql import types as T

    types = {"boolean": T.BooleanType(), "string": T.StringType(), "int": T.IntegerType(),
             "strings": T.ArrayType(T.StringType())}
    for name, (cls, typ) in _UDFS.items():
        spark.udf.registerJavaFunction(name, _CLASS + cls, types[typ])


def replace(x: str, pattern: str, replacement: str) -> str:
    """Spark's regexp_replace(x, pattern, replacement), guarded."""
    return f"mz_regexp_replace({x}, {pattern}, {replacement})"


def extract(x: str, pattern: str, group: int | str) -> str:
    """Spark's regexp_extract(x, pattern, group), guarded."""
    return f"mz_regexp_extract({x}, {pattern}, {group})"


def extract_all(x: str, pattern: str, group: int | str) -> str:
    """Spark's regexp_extract_all(x, pattern, group), guarded."""
    return f"mz_regexp_extract_all({x}, {pattern}, {group})"


def render_find(x: str, pattern: str) -> str:
    """x ~ pattern (a Java regex): Spark's regexp_like(x, pattern), run by mz_regex_find."""
    return f"mz_regex_find({x}, {pattern})"


def render_regex(name: str, x: str, lits: tuple) -> str:
    """The Spark SQL of a normalized regex call on source text `x` (NULL when x is)."""
    a = regex.args_of(lits)
    b = regex.check(name, a)
    flat = regex.mode(a.flags) + b.text
    match name:
        case "regexp_like":
            # Spark's regexp_like finds the pattern anywhere (Java's find), like Postgres
            return render_find(x, quote(flat))
        case "regexp_count":
            src = x if a.start == 1 else f"substr({x}, {a.start})"
            return f"mz_regexp_count({src}, {quote(flat)})"
        case "regexp_split_to_array":
            return f"mz_regexp_split({x}, {quote(flat)})"
        case "regexp_instr":
            pat, g = regex.nth_match(b, a)
            if a.subexpr > len(b.groups):
                return f"CASE WHEN {x} IS NOT NULL THEN 0 END"

            def instr(v: str) -> str:
                end = f" + length({extract(v, quote(pat), g)})" if a.endoption else ""
                return (f"CASE WHEN {v} IS NULL THEN CAST(NULL AS INT) WHEN {render_find(v, quote(pat))}"
                        f" THEN length({extract(v, quote(pat), 1)}) + 1{end} ELSE 0 END")
            return let_bind(x, instr)
        case "regexp_substr":
            pat, g = regex.nth_match(b, a)
            if a.subexpr > len(b.groups):
                return "CAST(NULL AS STRING)"

            def substr(v: str) -> str:
                got = extract(v, quote(pat), g + a.subexpr)
                if a.subexpr and not regex.mandatory(b, a.subexpr):
                    got = f"nullif({got}, '')"  # a subexpression that cannot match '' matched nothing
                return f"CASE WHEN {render_find(v, quote(pat))} THEN {got} END"
            return let_bind(x, substr)
        case "regexp_replace_from":
            if a.n == 0:
                rep = regex.java_replacement(a.replacement or "", 0, len(b.groups), len(b.groups))
                return let_bind(x, lambda v: f"concat(substr({v}, 1, {a.start - 1}), "
                                         f"{replace(f'substr({v}, {a.start})', quote(flat), quote(rep))})")
            pat, whole = regex.nth_match(b, a)
            rep = "$1" + regex.java_replacement(a.replacement or "", whole, len(b.groups), whole + len(b.groups))
            # the text after the N-th match is kept by regexp_replace (the regex is anchored at ^)
            return replace(x, quote(pat), quote(rep))
    raise AssertionError(name)


def render_matches(x: str, pattern: str, flags: str) -> str:
    """regexp_matches(x, pattern, flags) as Spark SQL of an array<array<string>>: a text[] per
    match (every match with flag g, else the first), of the groups' texts (the whole match when
    the pattern has no group); '' of a group that may take no part is NULL (sql.regex.matches_body)."""
    b = regex.matches_body(pattern)
    flat = quote(regex.mode(flags) + b.text)
    if not b.groups:
        e = fresh_var()
        rows = f"transform({extract_all(x, flat, 0)}, {e} -> array({e}))"
    else:
        def at(k: int, v: str) -> str:
            return v if regex.mandatory(b, k) else f"nullif({v}, '')"

        def zipped(v: str, alls: list[str]) -> str:
            """each group's texts of all matches bound once, then zipped into rows"""
            k = len(alls) + 1
            if k <= len(b.groups):
                return let_bind(extract_all(v, flat, k), lambda m: zipped(v, [*alls, m]))
            e, i = fresh_var(), fresh_var()
            items = [at(1, e)] + [at(j, f"{alls[j - 1]}[{i}]") for j in range(2, len(b.groups) + 1)]
            return f"transform({alls[0]}, ({e}, {i}) -> array({', '.join(items)}))"
        rows = let_bind(x, lambda v: zipped(v, []))
    return rows if "g" in flags else f"slice({rows}, 1, 1)"
