"""PostgreSQL's bytea functions in Spark SQL (bytea is BINARY; typing in sql.func.BYTEA_FUNCS).

- get_byte(b, n) = the byte at offset n;  set_byte(b, n, v) = b with that byte v & 255
- get_bit(b, n) = (byte n / 8 >> n % 8) & 1;  set_bit(b, n, v) likewise, v must be 0 or 1
  (22023); an offset outside 0..length-1 (bytes or bits) is 2202E "index n out of valid
  range, 0..m", checked before the new bit
- bit_count(b) = the sum of the bit counts of its hex digits
- btrim / ltrim / rtrim(b, set) = the trim of b's ISO-8859-1 text (one character per byte,
  both ways) by the characters of set's
"""

from __future__ import annotations

from compute.render.scalar_text import trim_chars
from compute.render.spark_sql import fresh_var, let_bind, quote


def _fail(state: str, message: str, t: str) -> str:
    """A failing expression with a computed message (`message` is Spark SQL of a string)."""
    return f"CAST(raise_error(concat('[{state}] ', {message})) AS {t})"


def _byte_at(b: str, offset: str) -> str:
    return f"CAST(conv(hex(substr({b}, {offset} + 1, 1)), 16, 10) AS INT)"


def _checked(index: str, size: str, value: str, t: str) -> str:
    bad = _fail("2202E", f"'index ', CAST({index} AS STRING), ' out of valid range, 0..', CAST({size} - 1 AS STRING)", t)
    return f"(CASE WHEN {index} < 0 OR {index} >= {size} THEN {bad} ELSE {value} END)"


def _with_byte(b: str, offset: str, byte: str) -> str:
    """b with the byte at `offset` replaced by `byte` (an integer 0..255)."""
    return f"concat(substr({b}, 1, {offset}), unhex(lpad(hex({byte}), 2, '0')), substr({b}, {offset} + 2))"


def _latin1(b: str) -> str:
    return f"decode({b}, 'ISO-8859-1')"


def render_bytea(f: str, xs: list[str]) -> str | None:
    """Spark SQL of the bytea function f (NULL arguments are handled by the caller: strict)."""
    match f, xs:
        case "get_byte", [b, n]:
            return _checked(n, f"length({b})", _byte_at(b, n), "INT")
        case "set_byte", [b, n, v]:
            return _checked(n, f"length({b})", _with_byte(b, n, f"({v} & 255)"), "BINARY")
        case "get_bit", [b, n]:
            bit = f"((shiftright({_byte_at(b, f'CAST(div({n}, 8) AS INT)')}, CAST({n} % 8 AS INT))) & 1)"
            return _checked(n, f"(CAST(length({b}) AS BIGINT) * 8)", bit, "INT")
        case "set_bit", [b, n, v]:
            off, mask = f"CAST(div({n}, 8) AS INT)", f"shiftleft(1, CAST({n} % 8 AS INT))"
            old = _byte_at(b, off)
            new = f"(CASE WHEN {v} = 1 THEN ({old} | {mask}) ELSE ({old} & ~{mask}) END)"
            value = (f"(CASE WHEN {v} NOT IN (0, 1) THEN {_fail('22023', quote('new bit must be 0 or 1'), 'BINARY')}"
                     f" ELSE {_with_byte(b, off, new)} END)")
            return _checked(n, f"(CAST(length({b}) AS BIGINT) * 8)", value, "BINARY")
        case "bit_count", [b]:
            acc, h = fresh_var(), fresh_var()
            digits = f"filter(split(hex({b}), ''), {h} -> {h} <> '')"
            return (f"aggregate({digits}, CAST(0 AS BIGINT), ({acc}, {h}) -> "
                    f"{acc} + bit_count(CAST(conv({h}, 16, 10) AS INT)))")
        case ("btrim" | "ltrim" | "rtrim"), [b, chars]:
            trimmed = trim_chars(_latin1(b), _latin1(chars), leading=f != "rtrim", trailing=f != "ltrim")
            return f"encode({trimmed}, 'ISO-8859-1')"
    return None


def _chars(s: str) -> str:
    """The characters of text s as an array (Spark's split by '' may leave an empty tail)."""
    c = fresh_var()
    return f"filter(split({s}, ''), {c} -> {c} <> '')"


def encode_escape(b: str) -> str:
    """encode(b, 'escape'): a NUL or high-bit byte as \\ooo (octal), a backslash doubled, any
    other byte as its character."""
    c = fresh_var()
    code = f"ascii({c})"
    octal = f"concat('\\\\', lpad(conv(CAST({code} AS STRING), 10, 8), 3, '0'))"
    each = f"(CASE WHEN {c} = '\\\\' THEN '\\\\\\\\' WHEN {code} = 0 OR {code} >= 128 THEN {octal} ELSE {c} END)"
    return f"array_join(transform({_chars(_latin1(b))}, {c} -> {each}), '')"


_BS = "\\\\"  # Spark SQL text of one backslash inside a string literal
_WS = f"'[ {_BS}t{_BS}n{_BS}r]+'"


def decode_hex(t: str) -> str:
    """decode(t, 'hex'): pairs of hex digits, whitespace allowed before a pair (so every run of
    digits between whitespace has even length), else Postgres' 22023. No regex loop over
    groups: Java's recursion there overflows the stack on long inputs (and kills the driver)."""
    run = fresh_var()
    bad_char = f"{t} RLIKE '[^0-9a-fA-F {_BS}t{_BS}n{_BS}r]'"
    odd_run = f"exists(split({t}, {_WS}), {run} -> length({run}) % 2 = 1)"
    bad = _fail("22023", quote("invalid hexadecimal data: odd number of digits or invalid hexadecimal digit"), "BINARY")
    return (f"(CASE WHEN {t} IS NULL THEN CAST(NULL AS BINARY) WHEN NOT ({bad_char} OR {odd_run})"
            f" THEN unhex(regexp_replace({t}, {_WS}, '')) ELSE {bad} END)")
_ESCAPES = f"{_BS}{_BS}{_BS}{_BS}|{_BS}{_BS}[0-3][0-7]{{2}}"  # the regex \\\\|\\[0-3][0-7]{2}


def decode_escape(t: str) -> str:
    """decode(t, 'escape'): \\\\ is a backslash byte, \\ooo (first digit 0-3) the byte of that
    octal value, any other character its UTF-8 bytes; any other backslash is 22P02 (found as a
    backslash left once the escapes are taken out: a regex loop over groups would overflow
    Java's stack on long inputs)."""
    tok, acc, x = fresh_var(), fresh_var(), fresh_var()
    valid = f"instr(regexp_replace({t}, '{_ESCAPES}', ''), '{_BS}') = 0"
    byte = (f"(CASE WHEN {tok} = '{_BS}{_BS}' THEN X'5C' WHEN substr({tok}, 1, 1) = '{_BS}' "
            f"THEN unhex(lpad(conv(substr({tok}, 2), 8, 16), 2, '0')) ELSE encode({tok}, 'UTF-8') END)")
    parts = f"transform(regexp_extract_all({t}, '{_ESCAPES}|[^{_BS}{_BS}]+', 0), {tok} -> {byte})"
    joined = f"aggregate({parts}, X'', ({acc}, {x}) -> concat({acc}, {x}))"
    bad = _fail("22P02", quote("invalid input syntax for type bytea"), "BINARY")
    return f"(CASE WHEN {t} IS NULL THEN CAST(NULL AS BINARY) WHEN {valid} THEN {joined} ELSE {bad} END)"


_B64 = "A-Za-z0-9+/"
_SYM_OPEN = quote('invalid symbol "')
_SYM_CLOSE = quote('" found while decoding base64 sequence')


def decode_base64(t: str) -> str:
    """decode(t, 'base64'): spaces, tabs and line breaks skipped; groups of 4 symbols, the last
    padded by = or ==, decoded as Java does. Postgres' 22023 for a symbol outside the alphabet,
    an = early in a group, or a length that is no multiple of 4; inputs Postgres still reads
    past an = (e.g. 'QQ=A') are 0A000, not approximated."""
    past_pad = _fail("0A000", quote("decode(.., base64) of data past its padding is not supported"), "BINARY")
    early_eq = _fail("22023", quote('unexpected "=" while decoding base64 sequence'), "BINARY")
    end = _fail("22023", quote("invalid base64 end sequence"), "BINARY")

    def body(s: str) -> str:
        n, first_eq = f"length({s})", f"instr({s}, '=')"
        sym = f"regexp_extract({s}, '[^{_B64}=]', 0)"
        bad_sym = _fail("22023", f"concat({_SYM_OPEN}, {sym}, {_SYM_CLOSE})", "BINARY")
        return (f"(CASE WHEN {s} IS NULL THEN CAST(NULL AS BINARY) WHEN {sym} <> '' THEN {bad_sym} WHEN {first_eq} > 0 AND ({first_eq} - 1) % 4 < 2 THEN {early_eq}"
                f" WHEN {n} % 4 <> 0 THEN {end} WHEN {s} RLIKE '^[{_B64}]*={{0,2}}$' THEN unbase64({s}) ELSE {past_pad} END)")
    return let_bind(f"regexp_replace({t}, '[ {_BS}t{_BS}n{_BS}r]', '')", body)
