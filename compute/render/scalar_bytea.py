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
from compute.render.spark_sql import fresh_var, quote


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
