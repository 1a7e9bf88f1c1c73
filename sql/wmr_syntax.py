"""Materialize's WITH MUTUALLY RECURSIVE as text: the block is rewritten to `WITH RECURSIVE`
(which sqlglot parses) and each binding's declared columns, types and recursion limit are
kept apart, then attached to the parsed CTEs."""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from sql.errors import INVALID_PARAMETER_VALUE, SYNTAX_ERROR, SqlError
from sql.lex import ident


@dataclass(frozen=True)
class WmrBinding:
    """One binding of a WITH MUTUALLY RECURSIVE block: declared column names and types, and
    the block's recursion limit (max_iters, return_at_limit) or None."""

    name: str
    columns: tuple[str, ...]
    types: tuple[exp.DataType, ...]
    limit: tuple[int, bool] | None


WMR_META = "wmr"  # key in an exp.CTE's meta: its WmrBinding

_LIMIT_OPTIONS = {("return", "at", "recursion", "limit"): True, ("error", "at", "recursion", "limit"): False,
                  ("recursion", "limit"): False}


def rewrite_wmr(text: str) -> tuple[str, dict[int, WmrBinding]]:
    """`WITH MUTUALLY RECURSIVE [(opts)] b (c1 t1, ..) AS (q), ..` = `WITH RECURSIVE b (c1, ..)
    AS (q), ..` (which sqlglot parses) plus, per binding, its declarations, keyed by the
    offset of the binding's name in the rewritten text."""
    if "mutually" not in text.lower():
        return text, {}
    from sqlglot.tokens import TokenType

    try:
        toks = sqlglot.tokenize(text, read="postgres")
    except (TokenError, ParseError):
        return text, {}
    edits: list[tuple[int, int, str]] = []  # (start, end exclusive, replacement) on `text`
    found: list[tuple[int, WmrBinding]] = []  # (offset of the name in `text`, binding)
    i = 0
    while i + 2 < len(toks):
        t = toks[i]
        if not (t.token_type == TokenType.WITH and toks[i + 1].text.lower() == "mutually" and toks[i + 2].token_type == TokenType.RECURSIVE):
            i += 1
            continue
        prev = toks[i - 1] if i else None
        if prev is not None and prev.token_type in (TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT, TokenType.ALL, TokenType.DISTINCT):
            # like Postgres: a WITH clause begins a query, so a set operation's operand must
            # be parenthesized to have one (sqlglot would accept it)
            raise SqlError(SYNTAX_ERROR, 'syntax error at or near "WITH"', position=t.start + 1,
                           hint="WITH MUTUALLY RECURSIVE must begin a query; parenthesize it.")
        j = i + 3
        limit: tuple[int, bool] | None = None
        if j < len(toks) and toks[j].token_type == TokenType.L_PAREN:
            close = _matching_paren(toks, j)
            limit = _wmr_limit(toks[j + 1: close])
            j = close + 1
        edits.append((toks[i + 1].start, toks[j - 1].end + 1, "RECURSIVE"))
        while True:  # bindings: name (col type, ..) AS (query) [, ...]
            if j + 1 >= len(toks) or toks[j + 1].token_type != TokenType.L_PAREN:
                raise SqlError(SYNTAX_ERROR, "WITH MUTUALLY RECURSIVE bindings need declared columns: name (column type, ...) AS (query)",
                               position=toks[min(j, len(toks) - 1)].start + 1)
            name_tok = toks[j]
            close = _matching_paren(toks, j + 1)
            cols, types = _wmr_columns(text, toks, j + 1, close)
            edits.append((toks[j + 1].end + 1, toks[close].start, ", ".join(cols)))
            name = name_tok.text if name_tok.token_type == TokenType.IDENTIFIER else name_tok.text.lower()
            found.append((name_tok.start, WmrBinding(name, tuple(ident(c) for c in cols), types, limit)))
            j = close + 1
            if j + 1 >= len(toks) or toks[j].token_type != TokenType.ALIAS or toks[j + 1].token_type != TokenType.L_PAREN:
                raise SqlError(SYNTAX_ERROR, 'syntax error: expected AS (query) in WITH MUTUALLY RECURSIVE',
                               position=toks[min(j, len(toks) - 1)].start + 1)
            j = _matching_paren(toks, j + 1) + 1
            if j < len(toks) and toks[j].token_type == TokenType.COMMA:
                j += 1
                continue
            break
        i += 3  # nested blocks (inside binding bodies) are found by the same scan
    out: list[str] = []
    pos = 0
    shift: list[tuple[int, int]] = []  # (original offset, delta after it)
    delta = 0
    for start, end, rep in edits:
        out.append(text[pos:start])
        out.append(rep)
        delta += len(rep) - (end - start)
        shift.append((end, delta))
        pos = end
    out.append(text[pos:])

    def moved(off: int) -> int:
        d = 0
        for end, dl in shift:
            if end <= off:
                d = dl
        return off + d

    return "".join(out), {moved(off): b for off, b in found}


def _matching_paren(toks, j: int) -> int:
    from sqlglot.tokens import TokenType

    depth = 0
    for k in range(j, len(toks)):
        if toks[k].token_type == TokenType.L_PAREN:
            depth += 1
        elif toks[k].token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return k
    raise SqlError(SYNTAX_ERROR, "syntax error: unbalanced parentheses", position=toks[j].start + 1)


def _wmr_limit(toks) -> tuple[int, bool] | None:
    """(RETURN AT RECURSION LIMIT n | ERROR AT RECURSION LIMIT n | RECURSION LIMIT n), at most one."""
    from sqlglot.tokens import TokenType

    groups: list[list] = [[]]
    for t in toks:
        if t.token_type == TokenType.COMMA:
            groups.append([])
        elif t.token_type != TokenType.EQ:
            groups[-1].append(t)
    limits: list[tuple[int, bool]] = []
    for g in groups:
        words = tuple(t.text.lower() for t in g[:-1])
        if words not in _LIMIT_OPTIONS or not g or g[-1].token_type != TokenType.NUMBER:
            bad = g[0].text if g else ")"
            raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{bad}": expected RECURSION LIMIT, ERROR AT RECURSION LIMIT or RETURN AT RECURSION LIMIT',
                           position=(g[0].start + 1) if g else None)
        n = int(g[-1].text)
        if n <= 0:
            raise SqlError(INVALID_PARAMETER_VALUE, "Invalid WITH MUTUALLY RECURSIVE recursion limit. Recursion limit has to be greater than 0.")
        limits.append((n, _LIMIT_OPTIONS[words]))
    if len(limits) > 1:
        raise SqlError(INVALID_PARAMETER_VALUE, "Invalid WITH MUTUALLY RECURSIVE recursion limit. More than one recursion limit given. "
                       "Please give at most one of RECURSION LIMIT, ERROR AT RECURSION LIMIT, RETURN AT RECURSION LIMIT.")
    return limits[0] if limits else None


def _wmr_columns(text: str, toks, open_: int, close: int) -> tuple[list[str], tuple[exp.DataType, ...]]:
    """`(c1 t1, c2 t2, ..)`: the column names (as written) and their parsed types."""
    from sqlglot.tokens import TokenType

    items: list[list] = [[]]
    depth = 0
    for t in toks[open_ + 1: close]:
        if t.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif t.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1
        if t.token_type == TokenType.COMMA and depth == 0:
            items.append([])
        else:
            items[-1].append(t)
    cols: list[str] = []
    types: list[exp.DataType] = []
    for it in items:
        if len(it) < 2:
            where = it[0] if it else toks[close]
            raise SqlError(SYNTAX_ERROR, "WITH MUTUALLY RECURSIVE columns need a declared type: name (column type, ...)",
                           position=where.start + 1)
        name = text[it[0].start: it[0].end + 1]
        type_text = text[it[1].start: it[-1].end + 1]
        try:
            dt = exp.DataType.build(type_text, dialect="postgres")
        except (ParseError, TokenError, ValueError):
            raise SqlError("42704", f'type "{type_text}" does not exist', position=it[1].start + 1) from None
        cols.append(name)
        types.append(dt)
    return cols, tuple(types)


def attach_wmr(node: exp.Expression, decls: dict[int, WmrBinding]) -> None:
    """Mark every CTE of a rewritten block with its declarations (exp.CTE.meta[WMR_META])."""
    for w in node.find_all(exp.With):
        if not w.args.get("recursive"):
            continue
        for cte in w.expressions:
            alias = cte.args.get("alias")
            start = alias.this.meta.get("start") if alias is not None and alias.this is not None else None
            if start is not None and start in decls:
                cte.meta[WMR_META] = decls[start]
