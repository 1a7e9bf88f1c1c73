"""Materialize's `redacted_create_sql`: a statement's text with its literal values hidden."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from sql.parse import PostgresDialect

_REDACTED_TOKENS = {TokenType.STRING, TokenType.NUMBER, TokenType.BYTE_STRING, TokenType.HEREDOC_STRING,
                    TokenType.NATIONAL_STRING, TokenType.BIT_STRING, TokenType.HEX_STRING, TokenType.RAW_STRING,
                    TokenType.UNICODE_STRING}


def redact_literals(sql: str) -> str:
    """`sql` with every literal value replaced by `'<REDACTED>'` (Materialize's
    `redacted_create_sql`); type modifiers (`numeric(10,2)`) are kept. Text the tokenizer
    cannot read is redacted whole."""
    from sqlglot.parser import Parser

    try:
        tokens = PostgresDialect().tokenize(sql)
    except Exception:  # noqa: BLE001 - never show what could not be read
        return "<REDACTED>"
    out: list[str] = []
    pos = 0
    typmod_depth: list[bool] = []  # per open paren: does it hold a type's modifiers?
    prev = None
    for tok in tokens:
        if tok.token_type == TokenType.L_PAREN:
            typmod_depth.append(prev is not None and prev.token_type in Parser.TYPE_TOKENS)
        elif tok.token_type == TokenType.R_PAREN and typmod_depth:
            typmod_depth.pop()
        elif tok.token_type in _REDACTED_TOKENS and not (typmod_depth and typmod_depth[-1]) \
                and not (prev is not None and prev.token_type == TokenType.PARAMETER):  # $1
            out.append(sql[pos:tok.start])
            out.append("'<REDACTED>'")
            pos = tok.end + 1
        prev = tok
    out.append(sql[pos:])
    return "".join(out)
