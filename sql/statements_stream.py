"""Materialize's streaming statements: SUBSCRIBE, COPY (SUBSCRIBE ...) TO STDOUT and
CREATE SOURCE ... FROM LOAD GENERATOR (our own grammar; query bodies go to sqlglot).

    SUBSCRIBE [TO] obj | (query) [WITH (SNAPSHOT [= bool], PROGRESS [= bool])]
        [AS OF [AT LEAST] expr] [UP TO expr]
    CREATE SOURCE [IF NOT EXISTS] name [IN CLUSTER c] FROM LOAD GENERATOR COUNTER | AUCTION
        [(TICK INTERVAL 'i', UP TO n)] [FOR ALL TABLES]
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sqlglot import exp

from sql.errors import SYNTAX_ERROR, SqlError, unsupported

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_QNAME = rf"{_IDENT}(?:\s*\.\s*{_IDENT})*"


@dataclass(frozen=True)
class Subscribe:
    target: tuple[str, ...] | None  # SUBSCRIBE obj
    query: exp.Expression | None  # SUBSCRIBE (query)
    snapshot: bool = True
    progress: bool = False
    as_of: str | None = None  # the AS OF expression, as written
    up_to: str | None = None  # the UP TO expression, as written


@dataclass(frozen=True)
class CopySubscribe:
    """COPY (SUBSCRIBE ...) TO STDOUT [WITH (...)]"""

    subscribe: Subscribe
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CreateSource:
    name: tuple[str, ...]
    generator: str  # counter | auction
    tick_ms: int  # TICK INTERVAL (default 1 s)
    up_to: int | None  # COUNTER: the last value produced
    if_not_exists: bool
    sql: str
    cluster: str | None = None


def matching_paren(text: str, open_at: int) -> int:
    """The index of the `)` closing the `(` at `open_at` (quotes and nesting respected)."""
    depth = 0
    quote: str | None = None
    i = open_at
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == quote:
                if i + 1 < len(text) and text[i + 1] == quote:
                    i += 1
                else:
                    quote = None
        elif ch in ("'", '"'):
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise SqlError(SYNTAX_ERROR, "syntax error: unbalanced parentheses")


def _bool_option(name: str, value: str) -> bool:
    v = value.strip().strip("'").lower()
    if v in ("", "true", "on", "t", "yes", "1"):
        return True
    if v in ("false", "off", "f", "no", "0"):
        return False
    raise SqlError("22023", f"invalid value for {name.upper()}: {value.strip()}")


def parse_subscribe(text: str, parse_query) -> Subscribe:  # noqa: ANN001 - sql.statements.classify
    """`parse_query(sql)` classifies the body of SUBSCRIBE (query): it must be a query."""
    m = re.match(r"(?is)^subscribe\s+(?:to\s+)?", text)
    if not m:
        raise SqlError(SYNTAX_ERROR, "syntax error in SUBSCRIBE")
    rest = text[m.end():]
    target: tuple[str, ...] | None = None
    query = None
    if rest.startswith("("):
        close = matching_paren(rest, 0)
        query = parse_query(rest[1:close])
        rest = rest[close + 1:]
    else:
        from sql.lex import qname

        q = re.match(rf"(?is)^({_QNAME})", rest)
        if not q:
            raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{rest.split()[0] if rest.split() else "SUBSCRIBE"}"')
        target = qname(q.group(1))
        rest = rest[q.end():]
    snapshot, progress = True, False
    rest = rest.strip()
    w = re.match(r"(?is)^with\s*\(", rest)
    if w:
        close = matching_paren(rest, w.end() - 1)
        for part in rest[w.end():close].split(","):
            if not part.strip():
                continue
            kv = re.match(r"(?is)^\s*(\w+)\s*(?:=\s*)?(.*?)\s*$", part)
            if not kv:
                raise SqlError(SYNTAX_ERROR, f"syntax error in SUBSCRIBE option {part.strip()}")
            key = kv.group(1).lower()
            if key == "snapshot":
                snapshot = _bool_option(key, kv.group(2))
            elif key == "progress":
                progress = _bool_option(key, kv.group(2))
            else:
                raise unsupported(f"SUBSCRIBE option {key.upper()}")
        rest = rest[close + 1:].strip()
    if re.match(r"(?is)^envelope\b|^within\b", rest):
        raise unsupported(f"SUBSCRIBE ... {rest.split()[0].upper()}")
    t = re.match(r"(?is)^(?:as\s+of\s+(?:at\s+least\s+)?(?P<as_of>.+?))?\s*(?:\bup\s+to\s+(?P<up_to>.+?))?\s*$", rest)
    if not t or (rest and not (t.group("as_of") or t.group("up_to"))):
        raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{rest.split()[0]}"')
    return Subscribe(target, query, snapshot, progress, t.group("as_of"), t.group("up_to"))


def parse_create_source(text: str) -> CreateSource:
    from sql.lex import ident, qname

    m = re.match(
        rf"(?is)^create\s+source\s+(if\s+not\s+exists\s+)?({_QNAME})\s*(?:in\s+cluster\s+({_IDENT})\s+)?"
        r"from\s+load\s+generator\s+(\w+)\s*(.*)$", text)
    if not m:
        if re.match(r"(?is)^create\s+source\b.*\bfrom\s+(kafka|postgres|mysql|webhook|sql\s+server)\b", text):
            raise unsupported("CREATE SOURCE other than FROM LOAD GENERATOR")
        raise SqlError(SYNTAX_ERROR, "syntax error in CREATE SOURCE")
    generator = m.group(4).lower()
    if generator not in ("counter", "auction"):
        raise unsupported(f"LOAD GENERATOR {generator.upper()}")
    rest = m.group(5).strip()
    tick_ms, up_to = 1000, None
    if rest.startswith("("):
        close = matching_paren(rest, 0)
        for part in rest[1:close].split(","):
            kv = re.match(r"(?is)^\s*(tick\s+interval|up\s+to|as\s+of|max\s+cardinality|[a-z ]+?)\s*(?:=\s*)?('[^']*'|\S+)\s*$", part)
            if not kv:
                raise SqlError(SYNTAX_ERROR, f"syntax error in load generator option {part.strip()}")
            key = " ".join(kv.group(1).lower().split())
            value = kv.group(2).strip("'")
            if key == "tick interval":
                tick_ms = interval_ms(value)
                if tick_ms <= 0:
                    raise SqlError("22023", "TICK INTERVAL must be positive")
            elif key == "up to" and generator == "counter":
                if not re.fullmatch(r"\d+", value):
                    raise SqlError("22023", f"invalid UP TO: {value}")
                up_to = int(value)
            else:
                raise unsupported(f"load generator option {key.upper()}")
        rest = rest[close + 1:].strip()
    all_tables = bool(re.fullmatch(r"(?is)for\s+all\s+tables", rest))
    if rest and not all_tables:
        raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{rest.split()[0]}"')
    if generator == "auction" and not all_tables:
        raise SqlError("42601", "multi-output sources require a FOR ALL TABLES clause")
    return CreateSource(qname(m.group(2)), generator, tick_ms, up_to, bool(m.group(1)), text,
                        ident(m.group(3)) if m.group(3) else None)


_UNITS_MS = {"ms": 1, "millisecond": 1, "milliseconds": 1, "s": 1000, "sec": 1000, "second": 1000, "seconds": 1000,
             "secs": 1000, "m": 60_000, "min": 60_000, "minute": 60_000, "minutes": 60_000, "h": 3_600_000,
             "hour": 3_600_000, "hours": 3_600_000}


def interval_ms(value: str) -> int:
    """An interval such as '1s', '500 ms', '2 seconds' in milliseconds."""
    total = 0.0
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", value.strip().lower())
    if not parts or re.sub(r"[\d.\sa-z]", "", value.lower()):
        raise SqlError("22007", f'invalid input syntax for type interval: "{value}"')
    for num, unit in parts:
        if unit not in _UNITS_MS and unit != "":
            raise SqlError("22007", f'invalid input syntax for type interval: "{value}"')
        total += float(num) * _UNITS_MS.get(unit, 1000)
    return int(total)
