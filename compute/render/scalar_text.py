"""Text functions whose Spark namesakes differ from PostgreSQL's, as Spark SQL.

chr(n) is the character of code point n in UTF-8 (PostgreSQL's server encoding here); Spark's
chr(n) is the byte n % 256 read as Latin-1 (chr(955) = '»', PostgreSQL 'λ'). The identity

    chr(n) = decode(the UTF-8 bytes of n, 'UTF-8')

builds the 1-4 bytes with shifts and masks. PostgreSQL's errors: n < 0 (22023), 0 (54000: no
NUL in text), a surrogate or beyond U+10FFFF (54000).
"""

from __future__ import annotations

from compute.render.spark_sql import cast, fresh_var, let_bind, quote, raise_error


def _byte(lead: int, n: str, shift: int) -> str:
    """Two hex digits of `lead | ((n >> shift) & 63)` (`lead` 0x80: a continuation byte)."""
    mask = "" if lead != 0x80 else " & 63"
    return f"hex({lead} | (shiftright({n}, {shift}){mask}))"


def _failing(state: str, msg: str, n: str | None = None) -> str:
    if n is None:
        return raise_error(f"[{state}] {msg}")
    return cast(f"raise_error(concat({quote(f'[{state}] {msg}: ')}, CAST({n} AS STRING)))", "string")


def chr_text(x: str) -> str:
    def body(n: str) -> str:
        utf8 = (f"CASE WHEN {n} < 2048 THEN concat({_byte(0xC0, n, 6)}, {_byte(0x80, n, 0)})"
                f" WHEN {n} < 65536 THEN concat({_byte(0xE0, n, 12)}, {_byte(0x80, n, 6)}, {_byte(0x80, n, 0)})"
                f" ELSE concat({_byte(0xF0, n, 18)}, {_byte(0x80, n, 12)}, {_byte(0x80, n, 6)}, {_byte(0x80, n, 0)}) END")
        return (f"CASE WHEN {n} < 0 THEN {_failing('22023', 'character number must be positive')}"
                f" WHEN {n} = 0 THEN {_failing('54000', 'null character not permitted')}"
                f" WHEN {n} > 1114111 THEN {_failing('54000', 'requested character too large for encoding', n)}"
                f" WHEN {n} BETWEEN 55296 AND 57343 THEN {_failing('54000', 'requested character not valid for encoding', n)}"
                f" WHEN {n} < 128 THEN chr({n}) ELSE decode(unhex({utf8}), 'UTF-8') END")

    return let_bind(x, body)


_CLASS_SPECIALS = quote(r"([\\\]\[\^\-])")
_ESCAPE_GROUP = quote(r"\\$1")
_END = quote(r"\z")


def trim_chars(a: str, chars: str, leading: bool, trailing: bool) -> str:
    """btrim / ltrim / rtrim(a, chars): the longest prefix / suffix of characters in `chars` removed."""
    cls = f"concat('[', regexp_replace({chars}, {_CLASS_SPECIALS}, {_ESCAPE_GROUP}), ']+')"
    out = a
    if leading:
        out = f"regexp_replace({out}, concat('^', {cls}), '')"
    if trailing:
        # \z: the end of the text (Java's $ also matches before a final line terminator)
        out = f"regexp_replace({out}, concat({cls}, {_END}), '')"
    return f"(CASE WHEN length({chars}) = 0 THEN {a} ELSE {out} END)"  # (no empty class [])


_BS = "\\\\"  # Spark SQL text of one backslash inside a string literal


def like_pattern(p: str, binary: bool) -> str:
    """A computed LIKE pattern with Postgres' escapes as one Spark's LIKE reads alike: `\\c` is
    a literal c for any c (Spark takes only \\%, \\_ and \\\\ and fails on others), so `\\c`
    becomes `c` unless c is one of those; a pattern ending in a lone backslash is Postgres'
    22025. A bytea pattern is rewritten as its ISO-8859-1 text (a character per byte)."""
    def body(v: str) -> str:
        text = f"decode({v}, 'ISO-8859-1')" if binary else v
        spark = f"regexp_replace({text}, '(?s)({_BS}{_BS}[%_{_BS}{_BS}])|{_BS}{_BS}(.)', '$1$2')"
        trailing = f"{text} RLIKE '(^|[^{_BS}{_BS}])({_BS}{_BS}{_BS}{_BS})*{_BS}{_BS}{_BS}z'"
        bad = raise_error("[22025] LIKE pattern must not end with escape character", "binary" if binary else "string")
        out = f"encode({spark}, 'ISO-8859-1')" if binary else spark
        return f"(CASE WHEN {trailing} THEN {bad} ELSE {out} END)"
    return let_bind(p, body)


def like_pattern_escape(p: str, escape: str) -> str:
    """A computed LIKE pattern with escape character `escape` ('' = none) as the pattern with
    Spark's escape `\\` that means the same (what like_pattern gives): escape + c is `\\c` for
    c one of % _ \\ and c otherwise, a backslash that is not escaped is `\\\\`, a pattern
    ending in a lone escape is Postgres' 22025. Read token by token: escape + any character, or
    one character."""
    esc = f"{_BS}x{{{ord(escape):x}}}" if escape else ""
    tokens = f"regexp_extract_all({p}, '(?s){esc + '.|' if esc else ''}.', 0)"
    t = fresh_var()
    bad = raise_error("[22025] LIKE pattern must not end with escape character")
    c = f"substr({t}, 2, 1)"
    lone = f" WHEN {t} = {quote(escape)} THEN {bad}" if escape else ""
    tok = (f"CASE WHEN length({t}) = 2 THEN (CASE WHEN {c} IN ('%', '_', '{_BS}') THEN concat('{_BS}', {c}) ELSE {c} END)"
           f" WHEN {t} = '{_BS}' THEN '{_BS}{_BS}'{lone} ELSE {t} END")
    return f"array_join(transform({tokens}, {t} -> {tok}), '')"
