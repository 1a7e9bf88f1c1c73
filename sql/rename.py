"""ALTER ... RENAME TO: the stored definitions that name the renamed item, rewritten.

Definitions are stored as written (`create_sql`), so renaming an item rewrites every
definition that refers to it by name: the item's own header and its dependents' references.
A reference is an identifier the parser saw in a table position (`FROM old`, `schema.old`,
`ON old` of an index) or as a column qualifier (`old.col`); column names and output aliases
spelled like the item stay. Where the old or the new name is also an alias or a CTE in a
definition, the rename would change what the definition means: 0A000, nothing renamed.
Each rewrite is a splice at the identifier's position in the stored text; the rest of the
text stays byte for byte.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import TokenType

from sql.errors import FEATURE_NOT_SUPPORTED, SYNTAX_ERROR, SqlError
from sql.lex import IDENT, QNAME, ident
from sql.parse import parse_sql

_VIEW = re.compile(
    rf"(?is)^create\s+(?:or\s+replace\s+)?(?:(?:temp|temporary)\s+)?(?:materialized\s+)?view\s+"
    rf"(?:if\s+not\s+exists\s+)?(?P<name>{QNAME})\s*(?:\([^)]*\))?(?:\s+in\s+cluster\s+{IDENT})?\s+as\s+(?P<body>.*)$"
)
_INDEX = re.compile(
    rf"(?is)^create\s+(?:default\s+|unique\s+)?index\s+(?:if\s+not\s+exists\s+)?(?:(?!on\b)(?P<name>{IDENT})\s+)?"
    rf"(?:in\s+cluster\s+{IDENT}\s+)?on\s+(?P<on>{QNAME})\s*(?:\((?P<keys>.*)\))?\s*$"
)
_OTHER = re.compile(
    rf"(?is)^create\s+(?:(?:temp|temporary)\s+)?(?:table|source)\s+(?:if\s+not\s+exists\s+)?(?P<name>{QNAME})"
)
_PLAIN = re.compile(r"[a-z_][a-z0-9_$]*")


def _refused(why: str) -> SqlError:
    return SqlError(FEATURE_NOT_SUPPORTED, f"cannot rename: {why}")


def quoted(name: str) -> str:
    """`name` as an identifier in SQL text (double-quoted unless a plain lower-case word)."""
    if _PLAIN.fullmatch(name):
        tokens = Postgres().tokenize(name)
        if len(tokens) == 1 and tokens[0].token_type == TokenType.VAR:
            return name
    return '"' + name.replace('"', '""') + '"'


def _name(i: exp.Identifier) -> str:
    return i.this if i.quoted else i.this.lower()


def _last_part(text: str, start: int) -> tuple[int, int]:
    """The span of the last identifier of the qualified name starting at `start`."""
    parts = list(re.finditer(IDENT, text[start:]))
    m = re.match(QNAME, text[start:])
    assert m is not None
    last = [p for p in parts if p.end() <= m.end()][-1]
    return start + last.start(), start + last.end()


def _qualifier(text: str, start: int, end: int) -> tuple[str, ...]:
    return tuple(ident(p) for p in re.findall(IDENT, text[start:end]))[:-1]


def rewrite(create_sql: str, *, old: str, new: str, schema: str, own: bool, where: str) -> str:
    """`create_sql` with the item `schema.old` called `new`: its own header when `own`,
    else its references to it (`where` names the definition in errors)."""
    edits: list[tuple[int, int, str]] = []
    if (m := _VIEW.match(create_sql)) is not None:
        if own:
            edits.append((*_last_part(create_sql, m.start("name")), quoted(new)))
        else:
            edits += _query_edits(m.group("body"), m.start("body"), old, new, schema, where)
    elif (m := _INDEX.match(create_sql)) is not None:
        if own and m.group("name"):
            edits.append((m.start("name"), m.end("name"), quoted(new)))
        if not own:
            s, e = _last_part(create_sql, m.start("on"))
            if ident(create_sql[s:e]) == old and _qualifier(create_sql, m.start("on"), m.end("on"))[-1:] in ((), (schema,)):
                edits.append((s, e, quoted(new)))
            keys = m.group("keys") or ""
            if re.search(rf"(?i)(^|[^\w$]){re.escape(old)}\s*\.", keys):
                raise _refused(f'the key expressions of {where} qualify columns by "{old}"')
    elif (m := _OTHER.match(create_sql)) is not None and own:
        edits.append((*_last_part(create_sql, m.start("name")), quoted(new)))
    out = create_sql
    for s, e, text in sorted(edits, reverse=True):
        out = out[:s] + text + out[e:]
    return out


def _query_edits(body: str, base: int, old: str, new: str, schema: str, where: str) -> list[tuple[int, int, str]]:
    if re.search(r"(?i)\bmutually\s+recursive\b", body):
        raise _refused(f'"{old}" is referenced by {where}, a WITH MUTUALLY RECURSIVE definition')
    try:
        tree = parse_sql(body)
    except SqlError as e:
        raise SqlError(SYNTAX_ERROR, f"the definition of {where} does not parse: {e.message}") from None
    edits: list[tuple[int, int, str]] = []
    for i in tree.find_all(exp.Identifier):
        name, parent, key = _name(i), i.parent, i.arg_key
        if name == new and (isinstance(parent, exp.TableAlias) or key in ("table",) or isinstance(parent, exp.Table)):
            raise _refused(f'{where} already uses "{new}" for a relation')
        if name != old:
            continue
        if isinstance(parent, exp.TableAlias):
            raise _refused(f'{where} also uses "{old}" as an alias or a CTE name')
        if isinstance(parent, exp.Table) and key == "this":
            if parent.args.get("db") is not None and _name(parent.args["db"]) != schema:
                continue  # another schema's item of the same name
        elif not (isinstance(parent, exp.Column) and key == "table"):
            continue  # a column name, an output alias, a function name
        start, end = i.meta.get("start"), i.meta.get("end")
        if start is None or end is None:
            raise _refused(f'the reference to "{old}" in {where} could not be located')
        spelled = body[start:end + 1]
        if (ident(spelled) if spelled.startswith('"') else spelled.lower()) != old:
            raise _refused(f'the reference to "{old}" in {where} could not be located')
        edits.append((base + start, base + end + 1, quoted(new)))
    return edits
