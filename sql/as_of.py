"""Materialize's `SELECT ... AS OF [AT LEAST] <timestamp expression>`: the clause is split off
the query text (it is not PostgreSQL syntax); the query reads its inputs at that timestamp."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType


@dataclass(frozen=True)
class AsOf:
    body: str  # the query without the clause
    expr: str  # the timestamp expression, as written
    at_least: bool  # AT LEAST: any later timestamp will do


def split_as_of(text: str) -> AsOf | None:
    """The last `AS OF` outside parentheses and its expression (empty when missing); None when
    there is none."""
    try:
        toks = Postgres().tokenize(text)
    except TokenError:
        return None
    depth = 0
    found = None
    for i, t in enumerate(toks):
        if t.token_type in (TokenType.L_PAREN, TokenType.L_BRACKET):
            depth += 1
        elif t.token_type in (TokenType.R_PAREN, TokenType.R_BRACKET):
            depth -= 1
        elif depth == 0 and t.text.upper() == "AS" and i + 1 < len(toks) and toks[i + 1].text.upper() == "OF":
            found = i
    if found is None:
        return None
    body, rest = text[:toks[found].start].rstrip(), text[toks[found + 1].end + 1:].strip()
    words = rest.split(None, 2)
    at_least = len(words) >= 2 and words[0].upper() == "AT" and words[1].upper() == "LEAST"
    if at_least:
        rest = words[2] if len(words) > 2 else ""
    if not body:
        return None
    return AsOf(body, rest, at_least)
