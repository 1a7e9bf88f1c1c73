"""Statement classification: our own grammar for Materialize/Postgres utility statements,
sqlglot (postgres dialect, `sql.parse`) for query bodies and ordinary DDL/DML."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import TokenType

from sql.errors import SYNTAX_ERROR, SqlError, unsupported
from sql.explain_options import explain_options as _explain_options
from sql.lex import (
    IDENT,
    QNAME,
    ident,
    leading_words,
    qname,
    strip_comments,
)
from sql.parse import parse_sql
from sql.show import ShowCreate, ShowListing, parse_show
from sql.statements_stream import (
    CopySubscribe,
    CreateSource,
    Subscribe,
    parse_create_source,
    parse_subscribe,
)
from sql.wmr_syntax import WMR_META, rewrite_wmr  # noqa: F401 (WMR_META re-exported)


@dataclass(frozen=True)
class Query:
    ast: exp.Expression
    # source offsets of column names that follow a unary `+` (sqlglot drops the operator,
    # Postgres defines it only for numbers)
    unary_plus: frozenset[int] = frozenset()
    # SELECT ... AS OF [AT LEAST] expr (sql.as_of): the read timestamp's expression
    as_of: str | None = None
    as_of_at_least: bool = False


@dataclass(frozen=True)
class Insert:
    ast: exp.Insert


@dataclass(frozen=True)
class Update:
    ast: exp.Update


@dataclass(frozen=True)
class Delete:
    ast: exp.Delete


@dataclass(frozen=True)
class CreateTable:
    ast: exp.Create
    sql: str


@dataclass(frozen=True)
class DropObjects:
    kind: str  # table | view | materialized view | index | source
    names: tuple[tuple[str, ...], ...]
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class CommentOn:
    kind: str  # table | view | materialized view | index | source | column
    name: tuple[str, ...]  # for a column: the relation's name parts, then the column
    comment: str | None  # None: COMMENT ... IS NULL removes it


@dataclass(frozen=True)
class AlterRename:
    kind: str  # table | view | materialized view | index | source
    name: tuple[str, ...]
    new_name: str
    if_exists: bool


@dataclass(frozen=True)
class CreateSchema:
    name: str
    if_not_exists: bool


@dataclass(frozen=True)
class DropSchema:
    names: tuple[str, ...]
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class SetVar:
    name: str
    value: str | None  # None = DEFAULT
    local: bool = False


@dataclass(frozen=True)
class ResetVar:
    name: str | None  # None = ALL


@dataclass(frozen=True)
class AlterSystem:
    """ALTER SYSTEM SET name = value | RESET name (value None) | RESET ALL (name None)."""

    name: str | None
    value: str | None


@dataclass(frozen=True)
class ShowVar:
    name: str  # "all" for SHOW ALL


@dataclass(frozen=True)
class TxnControl:
    action: str  # begin | commit | rollback
    read_only: bool = False


@dataclass(frozen=True)
class CopyFrom:
    table: tuple[str, ...]
    columns: tuple[str, ...]
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CopyTo:
    query: exp.Expression
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CreateView:
    name: tuple[str, ...]
    columns: tuple[str, ...]
    query: exp.Expression
    materialized: bool
    if_not_exists: bool
    or_replace: bool
    sql: str
    cluster: str | None = None
    temporary: bool = False  # CREATE TEMP[ORARY] VIEW: lives in the session's mz_temp schema


@dataclass(frozen=True)
class CreateIndex:
    name: str | None  # None: generated
    on: tuple[str, ...]
    keys: tuple[str, ...]  # key expressions as SQL; () for DEFAULT INDEX
    default: bool
    if_not_exists: bool
    sql: str
    cluster: str | None = None


@dataclass(frozen=True)
class ExplainObject:
    """EXPLAIN ... FOR VIEW v | MATERIALIZED VIEW m | INDEX i"""

    kind: str  # view | materialized view | index
    name: tuple[str, ...]


@dataclass(frozen=True)
class ExplainAnalyzeObject:
    """EXPLAIN ANALYZE {MEMORY | CPU} [, …] [WITH SKEW] FOR {INDEX | MATERIALIZED VIEW} name [AS SQL]"""

    properties: tuple[str, ...]  # memory | cpu
    skew: bool
    kind: str  # index | materialized view
    name: tuple[str, ...]
    as_sql: bool = False


@dataclass(frozen=True)
class Explain:
    stage: str  # raw | decorrelated | optimized | physical | timestamp | filter_pushdown
    options: tuple[str, ...]
    format: str  # text | verbose text | json
    target: Query | CreateView | CreateIndex | ExplainObject | Subscribe


@dataclass(frozen=True)
class Empty:
    pass


@dataclass(frozen=True)
class Deallocate:
    name: str | None  # None = ALL


Statement = (Query | Insert | Update | Delete | CreateTable | DropObjects | CreateSchema | DropSchema
             | SetVar | ResetVar | ShowVar | TxnControl | CopyFrom | CopyTo | Explain | ExplainAnalyzeObject | Empty
             | CreateView | CreateIndex | Deallocate | ShowListing | ShowCreate | AlterSystem | CommentOn | AlterRename
             | Subscribe | CopySubscribe | CreateSource)


def _parse_value(v: str) -> str:
    v = v.strip()
    if v.startswith("'") and v.endswith("'") and len(v) >= 2:
        return v[1:-1].replace("''", "'")
    return v


def _copy_options(text: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    text = text.strip()
    if not text:
        return opts
    m = re.match(r"(?is)^(?:with\s*)?\((.*)\)\s*$", text)
    if m:
        for part in re.split(r",(?=(?:[^']*'[^']*')*[^']*$)", m.group(1)):
            part = part.strip()
            if not part:
                continue
            kv = re.match(r"(?is)^(\w+)\s*(.*)$", part)
            if kv:
                opts[kv.group(1).lower()] = _parse_value(kv.group(2)) if kv.group(2) else "true"
        return opts
    # legacy syntax: WITH CSV HEADER DELIMITER ',' NULL ''
    toks = re.findall(r"'(?:[^']|'')*'|\S+", re.sub(r"(?i)^with\s+", "", text))
    i = 0
    while i < len(toks):
        t = toks[i].lower()
        if t in ("csv", "binary", "text"):
            opts["format"] = t
        elif t == "header":
            opts["header"] = "true"
        elif t in ("delimiter", "null", "quote", "escape") and i + 1 < len(toks):
            i += 1
            opts[t] = _parse_value(toks[i])
        else:
            raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{toks[i]}"')
        i += 1
    return opts


# The words a PostgreSQL or Materialize statement can start with: anything else is a syntax
# error at its first word (sqlglot would read `selec $1` as an aliased parameter).
STATEMENT_KEYWORDS = frozenset("""
    abort alter analyze begin call checkpoint close cluster comment commit copy create deallocate
    declare delete discard do drop end execute explain fetch grant import insert listen load lock
    merge move notify prepare reassign refresh reindex release reset revoke rollback savepoint
    security select set show start subscribe table truncate unlisten update vacuum values with
""".split())


def classify(sql: str) -> Statement:
    text = strip_comments(sql).strip().rstrip(";").strip()
    if not text:
        return Empty()
    words = leading_words(text, 4)
    w0 = words[0] if words else ""
    low = text.lower()
    if w0 in ("begin", "start"):
        if w0 == "start" and (len(words) < 2 or words[1] != "transaction"):
            raise SqlError(SYNTAX_ERROR, 'syntax error at or near "START"')
        return TxnControl("begin", read_only="read only" in " ".join(low.split()))
    if w0 in ("commit", "end"):
        return TxnControl("commit")
    if w0 in ("rollback", "abort"):
        return TxnControl("rollback")
    if w0 == "set":
        return _parse_set(text)
    if w0 == "reset":
        m = re.match(rf"(?is)^reset\s+({IDENT})\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in RESET")
        name = ident(m.group(1))
        return ResetVar(None if name == "all" else name)
    if w0 == "show":
        return _parse_show(text)
    if w0 == "explain":
        return _parse_explain(text)
    if w0 == "copy":
        return _parse_copy(text)
    if w0 == "create" and len(words) > 1 and words[1] == "schema":
        m = re.match(rf"(?is)^create\s+schema\s+(if\s+not\s+exists\s+)?({QNAME})\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in CREATE SCHEMA")
        parts = qname(m.group(2))
        return CreateSchema(parts[-1], bool(m.group(1)))
    if w0 == "drop" and len(words) > 1 and words[1] == "schema":
        m = re.match(rf"(?is)^drop\s+schema\s+(if\s+exists\s+)?({QNAME}(?:\s*,\s*{QNAME})*)\s*(cascade|restrict)?\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in DROP SCHEMA")
        names = tuple(qname(n)[-1] for n in re.split(r"\s*,\s*", m.group(2)))
        return DropSchema(names, bool(m.group(1)), (m.group(3) or "").lower() == "cascade")
    if w0 == "drop" and len(words) > 1 and words[1] in ("cluster", "secret", "connection", "sink", "type", "role", "database", "owned", "network", "user", "function"):
        raise unsupported(f"DROP {words[1].upper()}{' REPLICA' if words[1:3] == ['cluster', 'replica'] else ''}")
    if w0 == "drop":
        m = re.match(rf"(?is)^drop\s+(table|view|materialized\s+view|index|source)\s+(if\s+exists\s+)?({QNAME}(?:\s*,\s*{QNAME})*)\s*(cascade|restrict)?\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{words[1] if len(words) > 1 else "DROP"}"')
        qnames = tuple(qname(n) for n in re.split(r"\s*,\s*", m.group(3)))
        return DropObjects(" ".join(m.group(1).lower().split()), qnames, bool(m.group(2)), (m.group(4) or "").lower() == "cascade")
    if w0 == "create" and len(words) > 2 and words[1] in ("temp", "temporary"):
        _check_temp_create(text, words)
    if w0 == "create" and len(words) > 1 and (words[1] in ("view", "materialized") or words[1:3] == ["or", "replace"]
                                              or (words[1] in ("temp", "temporary") and words[2] == "view")):
        return _parse_create_view(text)
    if w0 == "create" and len(words) > 1 and (words[1] in ("index", "default") or words[1:3] == ["unique", "index"]):
        return _parse_create_index(text)
    if w0 == "create" and len(words) > 1 and words[1] == "source":
        return parse_create_source(text)
    if w0 == "subscribe":
        return parse_subscribe(text, _subscribe_query)
    if w0 == "create" and len(words) > 1 and words[1] in ("source", "cluster", "sink", "connection", "secret", "type", "role", "database", "function"):
        raise unsupported(f"CREATE {words[1].upper()}")
    if w0 == "deallocate":
        m = re.match(rf"(?is)^deallocate\s+(?:prepare\s+)?({IDENT})\s*$", text)
        if not m:
            raise SqlError(SYNTAX_ERROR, "syntax error in DEALLOCATE")
        raw = m.group(1)
        return Deallocate(None if raw.lower() == "all" else ident(raw))
    if w0 == "alter" and len(words) > 1 and words[1] == "system":
        return _parse_alter_system(text)
    if w0 == "comment":
        return _parse_comment(text)
    if w0 == "alter" and re.match(r"(?is)^alter\s+(table|view|materialized\s+view|index|source)\s+(if\s+exists\s+)?\S+\s+rename\s+to\b", text):
        return _parse_rename(text)
    if w0 in ("validate", "inspect"):  # Materialize's VALIDATE CONNECTION, INSPECT SHARD
        raise unsupported(w0.upper())
    if w0 == "alter" and len(words) > 1:
        # name what is refused (0A000): ALTER CLUSTER, ALTER CLUSTER REPLICA, ALTER MATERIALIZED VIEW, ...
        two = words[1] == "materialized" or words[1:3] == ["cluster", "replica"]
        raise unsupported("ALTER " + " ".join(words[1:3] if two else words[1:2]).upper())
    if w0 in ("alter", "declare", "fetch", "close", "discard", "unlisten", "listen", "grant", "revoke", "prepare", "execute", "truncate", "vacuum", "analyze", "comment", "lock"):
        raise unsupported(f"{w0.upper()}")
    if w0 not in STATEMENT_KEYWORDS and not text.startswith("("):
        first = text.split(None, 1)[0] if text.split() else text
        raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{first}"', position=sql.find(first) + 1 or None)
    if _AS_OF_AT_LEAST.search(text) and (q := _as_of_query(text)) is not None:
        return q  # (sqlglot would take `AT` for a table's AT clause)
    try:
        node = parse_sql(text)
    except SqlError:
        if _AS_OF.search(text) and (q := _as_of_query(text)) is not None:
            return q
        raise
    if isinstance(node, (exp.Select, exp.Union, exp.Except, exp.Intersect, exp.Values, exp.Subquery)):
        return Query(node, unary_plus_operands(rewrite_wmr(text)[0]))
    if isinstance(node, exp.Insert):
        return Insert(node)
    if isinstance(node, exp.Update):
        return Update(node)
    if isinstance(node, exp.Delete):
        return Delete(node)
    if isinstance(node, exp.Create) and (node.args.get("kind") or "").upper() == "TABLE":
        return CreateTable(node, text)
    raise unsupported(f"statement {node.key.upper()}")


_OPERAND_END = {"VAR", "NUMBER", "STRING", "R_PAREN", "R_BRACKET", "NULL", "TRUE", "FALSE", "IDENTIFIER", "STAR", "PARAMETER", "PLACEHOLDER"}


def unary_plus_operands(text: str) -> frozenset[int]:
    """Start offsets of the column names that a unary `+` applies to."""

    try:
        toks = sqlglot.tokenize(text, read="postgres")
    except (TokenError, ParseError):
        return frozenset()
    out: set[int] = set()
    for i, t in enumerate(toks):
        if t.token_type != TokenType.PLUS or (i > 0 and toks[i - 1].token_type.name in _OPERAND_END):
            continue
        j = i + 1
        while j < len(toks) and toks[j].token_type in (TokenType.PLUS, TokenType.DASH, TokenType.L_PAREN):
            j += 1
        if j < len(toks) and toks[j].token_type == TokenType.VAR:
            while j + 2 < len(toks) and toks[j + 1].token_type == TokenType.DOT and toks[j + 2].token_type == TokenType.VAR:
                j += 2
            out.add(toks[j].start)
    return frozenset(out)


# Materialize's `SELECT ... AS OF [AT LEAST] <timestamp>` (looked for once the parse failed)
_AS_OF = re.compile(r"(?is)\bas\s+of\b")
_AS_OF_AT_LEAST = re.compile(r"(?is)\bas\s+of\s+at\s+least\b")


def _as_of_query(text: str) -> Query | None:
    """`SELECT ... AS OF [AT LEAST] expr` as a Query with its AS OF (sql.as_of), if it is one."""
    from sql.as_of import split_as_of

    a = split_as_of(text)
    q = classify(a.body) if a is not None else None
    if a is None or not isinstance(q, Query):
        return None
    if not a.expr:
        raise SqlError(SYNTAX_ERROR, "syntax error at end of input: AS OF needs a timestamp")
    return Query(q.ast, q.unary_plus, a.expr, a.at_least)


def _parse_alter_system(text: str) -> Statement:
    m = re.match(rf"(?is)^alter\s+system\s+set\s+({IDENT})\s*(?:=|\s+to\s+)\s*(.+?)\s*$", text)
    if m:
        raw = m.group(2)
        value = None if raw.lower() == "default" else ", ".join(
            _parse_value(p.strip()) for p in re.split(r",(?=(?:[^']*'[^']*')*[^']*$)", raw))
        return AlterSystem(ident(m.group(1)), value)
    m = re.match(rf"(?is)^alter\s+system\s+reset\s+({IDENT})\s*$", text)
    if m:
        name = ident(m.group(1))
        return AlterSystem(None if name == "all" else name, None)
    raise SqlError(SYNTAX_ERROR, "syntax error in ALTER SYSTEM")


_OBJECT_KIND = r"(table|view|materialized\s+view|index|source)"


def _parse_comment(text: str) -> Statement:
    """COMMENT ON {TABLE | VIEW | MATERIALIZED VIEW | INDEX | SOURCE | COLUMN} name IS 'text' | NULL"""
    m = re.match(rf"(?is)^comment\s+on\s+({_OBJECT_KIND[1:-1]}|column)\s+({QNAME})\s+is\s+(null|[eE]?'(?:[^']|'')*')\s*$", text)
    if not m:
        m2 = re.match(r"(?is)^comment\s+on\s+(\w+(?:\s+\w+)?)", text)
        what = " ".join(m2.group(1).split()).upper() if m2 else ""
        if what and not re.match(r"(?i)^(table|view|materialized view|index|source|column)\b", what):
            raise unsupported(f"COMMENT ON {what.split()[0]}")
        raise SqlError(SYNTAX_ERROR, "syntax error in COMMENT ON")
    kind = " ".join(m.group(1).lower().split())
    name = qname(m.group(2))
    if kind == "column" and len(name) < 2:
        raise SqlError(SYNTAX_ERROR, "column name must be qualified", position=None)
    raw = m.group(3)
    if raw.lower() == "null":
        return CommentOn(kind, name, None)
    if raw[0] in "eE":
        raise unsupported("COMMENT ON with an escape string")
    return CommentOn(kind, name, _parse_value(raw))


def _parse_rename(text: str) -> Statement:
    """ALTER {TABLE | VIEW | MATERIALIZED VIEW | INDEX | SOURCE} [IF EXISTS] name RENAME TO new_name"""
    m = re.match(rf"(?is)^alter\s+{_OBJECT_KIND}\s+(if\s+exists\s+)?({QNAME})\s+rename\s+to\s+({IDENT})\s*$", text)
    if not m:
        raise SqlError(SYNTAX_ERROR, "syntax error in ALTER ... RENAME TO")
    return AlterRename(" ".join(m.group(1).lower().split()), qname(m.group(3)), ident(m.group(4)), bool(m.group(2)))


def _parse_set(text: str) -> Statement:
    m = re.match(rf"(?is)^set\s+(session\s+|local\s+)?({IDENT}(?:\s*\.\s*{IDENT})?)\s*(?:=|\s+to\s+|\s+)\s*(.*?)\s*$", text)
    if m and ident(m.group(2).split(".")[-1]) == "time" and m.group(3).lower().startswith("zone"):
        return SetVar("timezone", _parse_value(m.group(3)[4:].strip()), bool(m.group(1) and "local" in m.group(1).lower()))
    if m and ident(m.group(2)) == "names":
        return SetVar("client_encoding", _parse_value(m.group(3)))
    if m and ident(m.group(2)) == "schema" and m.group(3) and "," not in m.group(3):
        # SET SCHEMA 'x' = SET search_path TO x (Postgres; Materialize also takes `=`)
        return SetVar("search_path", _parse_value(m.group(3)), bool(m.group(1) and "local" in m.group(1).lower()))
    if m and ident(m.group(2)) in ("transaction", "characteristics"):
        raise unsupported("SET TRANSACTION")
    if not m or not m.group(3):
        raise SqlError(SYNTAX_ERROR, "syntax error in SET")
    name = ident(m.group(2))
    raw = m.group(3)
    if raw.lower() == "default":
        return SetVar(name, None, bool(m.group(1) and "local" in m.group(1).lower()))
    parts = [p.strip() for p in re.split(r",(?=(?:[^']*'[^']*')*[^']*$)", raw)]
    value = ", ".join(_parse_value(p) for p in parts)
    return SetVar(name, value, bool(m.group(1) and "local" in m.group(1).lower()))


def _parse_show(text: str) -> Statement:
    low = " ".join(text.lower().split())
    listing = parse_show(text)  # SHOW OBJECTS | TABLES | INDEXES ... | CREATE ...: sql/show.py
    if listing is not None:
        return listing
    w = low.split()
    if len(w) > 1 and (w[1] in ("privileges", "subsources", "network", "continual", "default", "role")
                       or (w[1] == "create" and len(w) > 2)):
        raise unsupported(" ".join(text.split()[:3]).upper())
    if low == "show transaction isolation level":
        return ShowVar("transaction_isolation")
    m = re.match(rf"(?is)^show\s+({IDENT})\s*$", text)
    if m:
        return ShowVar(ident(m.group(1)))
    if low == "show time zone":
        return ShowVar("timezone")
    raise unsupported(text.split("\n")[0][:60].upper())


_EXPLAIN_RE = re.compile(
    r"(?is)^explain\s+(?:(raw|decorrelated|optimized|locally\s+optimized|physical)\s+)?plan\s*"
    r"(?:with\s*\(([^)]*)\)\s*)?(?:as\s+(text|verbose\s+text|json)\s+)?for\s+(.*)$"
)
def _parse_explain(text: str) -> Statement:
    m = _EXPLAIN_RE.match(text)
    if m:
        stage = " ".join((m.group(1) or "physical").lower().split())
        if stage == "locally optimized":
            stage = "optimized"
        fmt = " ".join((m.group(3) or "text").lower().split())
        opts = _explain_options(m.group(2), stage, fmt)
        body = m.group(4)
        mo = re.match(rf"(?is)^(view|materialized\s+view|index)\s+({QNAME})\s*$", body)
        if mo:
            return Explain(stage, opts, fmt, ExplainObject(" ".join(mo.group(1).lower().split()), qname(mo.group(2))))
        inner = classify(body)
        if not isinstance(inner, (Query, CreateView, CreateIndex, Subscribe)):
            raise unsupported(f"EXPLAIN FOR {body.split()[0].upper()} {body.split()[1].upper() if len(body.split()) > 1 else ''}".strip())
        return Explain(stage, opts, fmt, inner)
    mt = re.match(r"(?is)^explain\s+timestamp\s+(?:as\s+(text|json)\s+)?for\s+(.*)$", text)
    if mt:
        inner = classify(mt.group(2))
        if not isinstance(inner, Query):
            raise unsupported("EXPLAIN TIMESTAMP of anything but a SELECT")
        return Explain("timestamp", (), (mt.group(1) or "text").lower(), inner)
    mf = re.match(r"(?is)^explain\s+filter\s+pushdown\s+(?:as\s+text\s+)?for\s+(.*)$", text)
    if mf:  # FOR <select> | FOR MATERIALIZED VIEW <name>
        mo = re.match(rf"(?is)^materialized\s+view\s+({QNAME})\s*$", mf.group(1))
        if mo:
            return Explain("filter_pushdown", (), "text", ExplainObject("materialized view", qname(mo.group(1))))
        inner = classify(mf.group(1))
        if not isinstance(inner, Query):
            raise unsupported("EXPLAIN FILTER PUSHDOWN of anything but a SELECT or a MATERIALIZED VIEW")
        return Explain("filter_pushdown", (), "text", inner)
    mu = re.match(r"(?is)^explain\s+(timestamp|filter\s+pushdown|key\s+schema|value\s+schema|replan)\b", text)
    if mu:
        raise unsupported(f"EXPLAIN {' '.join(mu.group(1).upper().split())}")
    mo = re.match(rf"(?is)^explain\s+(view|materialized\s+view|index)\s+({QNAME})\s*$", text)
    if mo:  # EXPLAIN VIEW v (a view's optimized plan) | MATERIALIZED VIEW m | INDEX i (physical)
        kind = " ".join(mo.group(1).lower().split())
        return Explain("optimized" if kind == "view" else "physical", (), "text", ExplainObject(kind, qname(mo.group(2))))
    mo = re.match(rf"(?is)^explain\s+analyze\s+((?:memory|cpu)(?:\s*,\s*(?:memory|cpu))*)\s+(with\s+skew\s+)?"
                  rf"for\s+(index|materialized\s+view)\s+({QNAME})(\s+as\s+sql)?\s*$", text)
    if mo:
        props = tuple(dict.fromkeys(p.strip().lower() for p in mo.group(1).split(",")))
        return ExplainAnalyzeObject(props, bool(mo.group(2)), " ".join(mo.group(3).lower().split()), qname(mo.group(4)),
                                    bool(mo.group(5)))
    if re.match(r"(?is)^explain\s+analyze\s+(hints|cluster)\b", text):
        raise unsupported(f"EXPLAIN ANALYZE {text.split()[2].upper()}")
    ma = re.match(r"(?is)^explain\s+analyze\s+(?:physical\s+plan\s+)?(?:with\s*\(([^)]*)\)\s*)?(?:for\s+)?(.*)$", text)
    if ma:
        inner = classify(ma.group(2))
        if not isinstance(inner, Query):
            raise unsupported("EXPLAIN ANALYZE of anything but a SELECT")
        return Explain("physical", ("analyze", "node_ids"), "text", inner)
    m2 = re.match(r"(?is)^explain\s+(analyze\s+|verbose\s+)?(.*)$", text)
    if m2 and not m2.group(1):
        inner = classify(m2.group(2))
        if isinstance(inner, Query):
            return Explain("physical", (), "text", inner)
    raise unsupported("this EXPLAIN form")


def _parse_copy(text: str) -> Statement:
    m = re.match(rf"(?is)^copy\s+({QNAME})\s*(\(([^)]*)\))?\s+from\s+stdin\b(.*)$", text)
    if m:
        cols = tuple(ident(c) for c in m.group(3).split(",")) if m.group(3) else ()
        return CopyFrom(qname(m.group(1)), cols, _copy_options(m.group(4)))
    m = re.match(r"(?is)^copy\s+\((.*)\)\s+to\s+stdout\b(.*)$", text)
    if m:
        inner = classify(m.group(1))
        if isinstance(inner, Subscribe):
            return CopySubscribe(inner, _copy_options(m.group(2)))
        if not isinstance(inner, Query):
            raise unsupported("COPY of this statement")
        return CopyTo(inner.ast, _copy_options(m.group(2)))
    m = re.match(rf"(?is)^copy\s+({QNAME})\s*(\(([^)]*)\))?\s+to\s+stdout\b(.*)$", text)
    if m:
        select_list = m.group(3) or "*"
        return CopyTo(parse_sql(f"SELECT {select_list} FROM {m.group(1)}"), _copy_options(m.group(4)))
    if re.match(r"(?is)^copy\b.*\b(from|to)\s+'", text):
        raise SqlError("42501", "COPY to or from a file is not allowed; use STDIN/STDOUT")
    raise unsupported("this COPY form")


def _subscribe_query(text: str) -> exp.Expression:
    """The body of SUBSCRIBE (query): a query."""
    inner = classify(text)
    if not isinstance(inner, Query):
        raise SqlError(SYNTAX_ERROR, "SUBSCRIBE needs a query or an object name")
    return inner.ast


_IN_CLUSTER = rf"(?:\s+in\s+cluster\s+({IDENT}))?"


def _check_temp_create(text: str, words: list[str]) -> None:
    """CREATE TEMP[ORARY] takes TABLE or VIEW (Materialize has no temporary materialized
    views, sequences, ...); ON COMMIT DROP / DELETE ROWS are not supported (ON COMMIT
    PRESERVE ROWS, the default, is)."""
    if words[2] not in ("table", "view"):
        raise unsupported(f"CREATE TEMPORARY {words[2].upper()}")
    if re.search(r"(?is)\bon\s+commit\s+(drop|delete\s+rows)\s*$", text):
        raise unsupported("ON COMMIT DROP / ON COMMIT DELETE ROWS")


def _parse_create_view(text: str) -> Statement:
    temp = re.match(r"(?is)^create\s+(?:or\s+replace\s+)?(temp|temporary)\s+", text)
    if temp:  # CREATE [OR REPLACE] TEMP[ORARY] VIEW: parsed without the keyword
        text = text[: temp.start(1)] + text[temp.end(1):].lstrip()
    m = re.match(
        rf"(?is)^create\s+(or\s+replace\s+)?(materialized\s+)?view\s+(if\s+not\s+exists\s+)?({QNAME})\s*"
        rf"(\(([^)]*)\))?{_IN_CLUSTER}\s+as\s+(.*)$",
        text,
    )
    if not m:
        raise SqlError(SYNTAX_ERROR, "syntax error in CREATE VIEW")
    cols = tuple(ident(c) for c in m.group(6).split(",")) if m.group(6) else ()
    body = classify(m.group(8))
    if not isinstance(body, Query):
        raise SqlError(SYNTAX_ERROR, "CREATE VIEW needs a query")
    if temp and m.group(2):
        raise unsupported("CREATE TEMPORARY MATERIALIZED VIEW")
    return CreateView(qname(m.group(4)), cols, body.ast, bool(m.group(2)), bool(m.group(3)), bool(m.group(1)), text,
                      ident(m.group(7)) if m.group(7) else None, bool(temp))


def _parse_create_index(text: str) -> Statement:
    m = re.match(
        rf"(?is)^create\s+(default\s+|unique\s+)?index\s+(if\s+not\s+exists\s+)?(?:(?!on\b)({IDENT})\s+)?"
        rf"(?:in\s+cluster\s+({IDENT})\s+)?on\s+({QNAME})\s*(?:\((.*)\))?\s*$",
        text,
    )
    if not m:
        raise SqlError(SYNTAX_ERROR, "syntax error in CREATE INDEX")
    default = bool(m.group(1)) and m.group(1).strip().lower() == "default"
    keys: tuple[str, ...] = ()
    if m.group(6):
        # key order/direction (ASC/DESC, NULLS FIRST/LAST) does not matter to an arrangement
        keys = tuple(
            re.sub(r"(?is)\s+(asc|desc)?(\s+nulls\s+(first|last))?\s*$", "", k.strip()) or k.strip()
            for k in _split_top_level(m.group(6)) if k.strip()
        )
    if not default and not keys:
        raise SqlError(SYNTAX_ERROR, "CREATE INDEX needs key expressions (or use CREATE DEFAULT INDEX)")
    if default and keys:
        raise SqlError(SYNTAX_ERROR, "CREATE DEFAULT INDEX takes no key expressions")
    return CreateIndex(ident(m.group(3)) if m.group(3) else None, qname(m.group(5)), keys, default, bool(m.group(2)), text,
                       ident(m.group(4)) if m.group(4) else None)


def _split_top_level(s: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth, quote = 0, False
    for ch in s:
        if ch == "'" :
            quote = not quote
        if not quote:
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "," and depth == 0:
                out.append("".join(cur))
                cur = []
                continue
        cur.append(ch)
    out.append("".join(cur))
    return out
