"""parse_sql: SQL text -> sqlglot AST, in the Postgres dialect as mzspark reads it."""

from __future__ import annotations

import re
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError
from sqlglot.parsers.postgres import PostgresParser
from sqlglot.tokens import TokenType

from sql.errors import SYNTAX_ERROR, SqlError, unsupported
from sql.lex import (
    rewrite_escape_strings,
    rewrite_substring_similar,
    rewrite_unicode_literals,
    separate_exponent_signs,
)
from sql.wmr_syntax import attach_wmr, rewrite_wmr


def parse_sql(sql: str) -> exp.Expression:
    """sqlglot with Postgres errors: 42601 and a position. `WITH MUTUALLY RECURSIVE` blocks
    are rewritten (see `rewrite_wmr`) and their declarations attached to the AST's meta."""
    sql, decls = rewrite_wmr(sql)
    node = _parse_sqlglot(sql)
    if decls:
        attach_wmr(node, decls)
    return node


ORIGINAL_NAME_KEY = "pg_name"


def _anonymous(name: str):
    return lambda args: exp.Anonymous(this=name, expressions=args)


# Function names whose sqlglot node the binder reads as such: aggregates and window functions
# (with their DISTINCT / ORDER BY / FILTER / OVER parts), COALESCE, NULLIF and the table
# functions. Every other name parses as exp.Anonymous under the name the user wrote, so that
# a function binds (and is named in errors and output columns) as itself, never as the
# dialect-neutral node sqlglot normalizes it to (lpad -> Pad, concat_ws -> ConcatWs, ...).
TYPED_FUNCTION_NAMES = frozenset({
    "COUNT", "SUM", "AVG", "MIN", "MAX", "BOOL_AND", "BOOL_OR", "ARRAY_AGG", "STDDEV", "STDDEV_POP", "STDDEV_SAMP",
    "VARIANCE", "VAR_POP", "VAR_SAMP", "JSONB_OBJECT_AGG", "ANY_VALUE", "GROUPING", "ROW_NUMBER", "RANK",
    "DENSE_RANK", "LEAD", "LAG", "FIRST_VALUE", "LAST_VALUE", "COALESCE", "NULLIF", "ARRAY", "EXISTS",
})
# Special-syntax forms sqlglot keeps a parser for (SUBSTRING(x FROM a FOR b), TRIM(BOTH ..),
# EXTRACT(f FROM x), POSITION(a IN b), OVERLAY(.. PLACING ..), CAST, STRING_AGG(.. ORDER BY ..));
# the others in sqlglot's table are ordinary Postgres calls (ceil, floor, chr, initcap, decode,
# normalize, ...) or not Postgres at all.
SPECIAL_SYNTAX_FUNCTIONS = frozenset({
    "CAST", "TRY_CAST", "EXTRACT", "OVERLAY", "POSITION", "SUBSTRING", "TRIM", "STRING_AGG",
    "JSON_OBJECT", "JSON_OBJECTAGG", "JSON_TABLE", "JSON_VALUE", "XMLELEMENT", "XMLTABLE",
})


_OPERATOR_TEXT = re.compile(r"[-+*/<>=~!@#%^&|`?]+")


def ordering_operator(op: str) -> bool:
    """ORDER BY x USING op: Postgres orders by op as the `<` (ascending) or `>` (descending)
    member of the sort key type's default btree operator family. Returns whether it is
    descending. Other btree members (=, <=, >=) are not ordering operators (42809); operators
    of non-default families (text's ~<~, ...) are not supported."""
    if op == "<":
        return False
    if op == ">":
        return True
    if op in ("=", "<=", ">=", "<>", "!="):
        raise SqlError("42809", f"operator {op} is not a valid ordering operator",
                       hint='Ordering operators must be "<" or ">" members of btree operator families.')
    raise unsupported(f"ORDER BY ... USING {op}")


class PostgresDialect(Postgres):
    """Postgres as sqlglot reads it, except that function calls keep the name written (see
    TYPED_FUNCTION_NAMES); each typed node also records it in its meta (ORIGINAL_NAME_KEY)."""

    ORIGINAL_NAME_META_KEY = ORIGINAL_NAME_KEY

    class Parser(PostgresParser):  # Postgres.Parser, named by its class for mypy
        FUNCTIONS = {k: (v if k in TYPED_FUNCTION_NAMES else _anonymous(k.lower()))
                     for k, v in Postgres.Parser.FUNCTIONS.items()}
        FUNCTION_PARSERS = {k: v for k, v in Postgres.Parser.FUNCTION_PARSERS.items() if k in SPECIAL_SYNTAX_FUNCTIONS}
        # `->` / `->>` keep their right operand as written (a key or an index expression),
        # not sqlglot's JSONPath (which loses '0' vs 0 and computed operands)
        # Postgres has no `x -> expr` lambdas: in an argument list `j -> 'k'` is the operator
        LAMBDAS = {k: v for k, v in Postgres.Parser.LAMBDAS.items() if k != TokenType.ARROW}
        JSON_OPERATORS = {
            **Postgres.Parser.JSON_OPERATORS,
            TokenType.ARROW: lambda self, this, path: self.expression(exp.JSONExtract(this=this, expression=path)),
            TokenType.DARROW: lambda self, this, path: self.expression(exp.JSONExtractScalar(this=this, expression=path)),
        }

        def _parse_select_query(self, nested=False, table=False, parse_subquery_alias=True, parse_set_operation=True):  # type: ignore[no-untyped-def]
            """`WITH .. VALUES ..`: the VALUES list is the query's body (sqlglot reads a
            statement there, not a VALUES list); a bare list becomes `SELECT * FROM (VALUES ..)`,
            whose columns keep VALUES' names column1, column2, .."""
            index = self._index
            cte = self._parse_with() if self._match(TokenType.WITH, advance=False) else None
            if cte is None or not self._match(TokenType.VALUES, advance=False):
                self._retreat(index)
                return super()._parse_select_query(nested, table, parse_subquery_alias, parse_set_operation)
            body = super()._parse_select_query(nested, table, parse_subquery_alias, parse_set_operation)
            if isinstance(body, exp.Values):
                body = exp.select("*").from_(exp.Subquery(this=body), copy=False)
            if body is None or "with_" not in body.arg_types:
                self.raise_error("syntax error")
                return body
            body.set("with_", cte)
            return body

        def _parse_cte(self):  # type: ignore[no-untyped-def]
            """PostgreSQL's `name AS (query) [SEARCH ..] [CYCLE ..]` per CTE, kept in the CTE's
            args `search` / `cycle` (sqlglot reads one column, after the last CTE only)."""
            cte = super()._parse_cte()
            if isinstance(cte, exp.CTE):
                if self._match_text_seq("SEARCH"):
                    cte.set("search", self._parse_pg_search())
                if self._match_text_seq("CYCLE"):
                    cte.set("cycle", self._parse_pg_cycle())
            return cte

        def _parse_pg_search(self) -> exp.RecursiveWithSearch:
            """SEARCH {DEPTH | BREADTH} FIRST BY col, .. SET col"""
            kind = self._match_texts(("DEPTH", "BREADTH")) and self._prev.text.upper()
            if not kind or not self._match_text_seq("FIRST", "BY"):
                self.raise_error("Expected DEPTH FIRST BY or BREADTH FIRST BY")
            cols = self._parse_csv(self._parse_id_var)
            if not self._match_text_seq("SET"):
                self.raise_error("Expected SET")
            return self.expression(exp.RecursiveWithSearch(kind=kind, this=exp.Tuple(expressions=cols), expression=self._parse_id_var()))

        def _parse_pg_cycle(self) -> exp.RecursiveWithSearch:
            """CYCLE col, .. SET col [TO value DEFAULT value] USING col"""
            cols = self._parse_csv(self._parse_id_var)
            if not self._match_text_seq("SET"):
                self.raise_error("Expected SET")
            mark = self._parse_id_var()
            to = default = None
            if self._match_text_seq("TO"):
                to = self._parse_primary()
                if not self._match(TokenType.DEFAULT):
                    self.raise_error("Expected DEFAULT")
                default = self._parse_primary()
            if not self._match_text_seq("USING"):
                self.raise_error("Expected USING")
            return self.expression(exp.RecursiveWithSearch(kind="CYCLE", this=exp.Tuple(expressions=cols), expression=mark,
                                                           to=to, default=default, using=self._parse_id_var()))

        def _parse_interval(self, require_interval=True, parse_function_unit=True):  # type: ignore[no-untyped-def]
            """INTERVAL(p) 'text' is a typed literal of type interval(p) (sqlglot reads an
            interval of value (p) plus the interval 'text')."""
            index = self._index
            if self._match(TokenType.INTERVAL) and self._match(TokenType.L_PAREN):
                num, close = self._curr, self._next
                if num is not None and close is not None and num.token_type == TokenType.NUMBER and close.token_type == TokenType.R_PAREN:
                    self._advance(2)
                    if self._curr is not None and self._curr.token_type == TokenType.STRING:
                        text = self._parse_primary()
                        to = exp.DataType(this=exp.DataType.Type.INTERVAL, expressions=[exp.DataTypeParam(this=exp.Literal.number(num.text))])
                        return self.expression(exp.Cast(this=text, to=to))
            self._retreat(index)
            return super()._parse_interval(require_interval, parse_function_unit)

        def _parse_ordered(self, parse_method=None):  # type: ignore[no-untyped-def]
            """`expr USING op [NULLS FIRST|LAST]`: ordering by a type's btree `<` is ASC and
            by its `>` DESC (NULLS defaulting as for ASC / DESC); see ordering_operator."""
            ordered = super()._parse_ordered(parse_method)
            if ordered is None or not self._match(TokenType.USING):
                return ordered
            desc = ordering_operator(self._parse_operator_name())
            nulls_first = self._match_text_seq("NULLS", "FIRST")
            nulls_last = self._match_text_seq("NULLS", "LAST")
            ordered.set("desc", desc)
            ordered.set("nulls_first", nulls_first or (desc and not nulls_last))
            return ordered

        def _parse_operator_name(self) -> str:
            """An operator as written after USING: `>`, `~<~` or OPERATOR(schema.op)."""
            if self._match(TokenType.OPERATOR):
                self._match(TokenType.L_PAREN)
                parts = []
                while self._curr is not None and self._curr.token_type != TokenType.R_PAREN:
                    parts.append(self._curr.text)
                    self._advance()
                self._match(TokenType.R_PAREN)
                return "".join(parts).rsplit(".", 1)[-1]
            text = ""
            while self._curr is not None and _OPERATOR_TEXT.fullmatch(self._curr.text):
                text += self._curr.text
                self._advance()
            if not text:
                self.raise_error("syntax error")
            return text

        def _parse_partition_by(self):  # type: ignore[no-untyped-def]
            """PARTITION BY a list of expressions: a trailing comma (`PARTITION BY a, ORDER
            BY b`) is a syntax error, which sqlglot's list parsing would drop."""
            out = super()._parse_partition_by()
            if out and self._prev is not None and self._prev.token_type == TokenType.COMMA:
                self.raise_error("Expected an expression after ','")
            return out

        def _parse_interval_span(self, this, parse_function_unit=True):  # type: ignore[no-untyped-def]
            """INTERVAL 'text' keeps its text whole: sqlglot moves a unit out of a one-unit
            string and drops what its pattern misses ('.001 second' -> '001' SECOND,
            '1-2 3:4 5 day' -> '5' DAY); interval_in reads the text itself."""
            iv = super()._parse_interval_span(this, parse_function_unit)
            if this is not None and this.is_string and isinstance(iv.this, exp.Literal) and iv.this.name != this.name:
                return self.expression(exp.Interval(this=this, unit=None))
            return iv


def _parse_or_quote_aliases(sql: str) -> list:
    try:
        return sqlglot.parse(sql, read=PostgresDialect)
    except (ParseError, TokenError):
        quoted = quote_keyword_aliases(sql)
        if quoted == sql:
            raise
        try:
            return sqlglot.parse(quoted, read=PostgresDialect)
        except (ParseError, TokenError):
            pass
        raise


def _parse_sqlglot(sql: str) -> exp.Expression:
    sql = rewrite_substring_similar(separate_exponent_signs(rewrite_escape_strings(rewrite_unicode_literals(sql))))
    try:
        parsed = _parse_or_quote_aliases(sql)
    except (ParseError, TokenError) as e:
        pos = None
        msg = str(e).split("\n")[0]
        errs = getattr(e, "errors", None)
        if errs:
            first = errs[0]
            line, col = first.get("line"), first.get("col")
            if line and col:
                lines = sql.split("\n")
                pos = sum(len(x) + 1 for x in lines[: line - 1]) + col
            tok = first.get("highlight")
            msg = f'syntax error at or near "{tok}"' if tok else "syntax error"
        raise SqlError(SYNTAX_ERROR, msg, position=pos) from None
    stmts = [p for p in parsed if p is not None]
    if len(stmts) != 1:
        raise SqlError(SYNTAX_ERROR, "syntax error: expected one statement")
    node = stmts[0]
    if isinstance(node, exp.Command):
        raise SqlError(SYNTAX_ERROR, f'syntax error at or near "{node.this}"')
    return fold_identifiers(cast(exp.Expression, node))


def quote_keyword_aliases(sql: str) -> str:
    """`expr AS select` = `expr AS "select"`: PostgreSQL takes any keyword as a column label
    after AS (sqlglot does not); CAST(x AS type)'s AS is left alone. The text unchanged when
    there is no such alias (or it does not lex)."""
    from sqlglot.tokens import TokenType

    try:
        tokens = PostgresDialect().tokenize(sql)
    except TokenError:
        return sql
    plain = (TokenType.VAR, TokenType.IDENTIFIER, TokenType.STRING, TokenType.NUMBER)
    casts: list[bool] = []  # per open parenthesis: opened by CAST(
    edits = []
    for k, t in enumerate(tokens):
        if t.token_type == TokenType.L_PAREN:
            casts.append(k > 0 and tokens[k - 1].text.upper() in ("CAST", "TRY_CAST"))
        elif t.token_type == TokenType.R_PAREN and casts:
            casts.pop()
        elif t.token_type == TokenType.ALIAS and k + 1 < len(tokens) and not (casts and casts[-1]):
            nxt = tokens[k + 1]
            if nxt.token_type not in plain and nxt.text.isidentifier():
                edits.append((nxt.start, nxt.end + 1, f'"{nxt.text.lower()}"'))
    for start, end, text in reversed(edits):
        sql = sql[:start] + text + sql[end:]
    return sql


def fold_identifiers(node: exp.Expression) -> exp.Expression:
    """Postgres folds unquoted identifiers to lower case wherever they appear (relation,
    column, alias, schema, CTE and function names); quoted identifiers keep their case.
    Done once on the parsed tree, so the binder and every statement handler see folded names."""
    for n in node.walk():
        if isinstance(n, exp.Identifier) and not n.quoted:
            n.set("this", n.this.lower())
    return node
