"""Set-returning functions in the select list, planned as Materialize does: a lateral table
function over the query's FROM (a FlatMap), the select item reading its column.

    SELECT e1, f(args) AS x FROM r WHERE p  ==  SELECT e1, s.v AS x FROM r, LATERAL f(args) AS s(v) WHERE p

holds because WHERE cannot read f's column (it is evaluated before the select list either way),
and DISTINCT / ORDER BY / LIMIT apply to the projected rows in both. A row of r for which f
returns no rows yields none, as in Postgres. Several SRFs in one select list run in lock step in
Postgres 10+ (the shorter padded with NULLs), which a lateral join does not express: 0A000, as
are SRFs next to aggregation (Postgres evaluates them after grouping).
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from sql.errors import FEATURE_NOT_SUPPORTED, SqlError, unsupported

# single-column set-returning functions the binder plans in FROM (bind_from.table_function)
SELECT_LIST_SRFS = frozenset({"generate_series", "unnest", "jsonb_array_elements", "jsonb_array_elements_text",
                              "jsonb_object_keys", "regexp_matches", "regexp_split_to_table"})
# all of Postgres' SRFs we know: in any other position they are an error (0A000)
SET_RETURNING = SELECT_LIST_SRFS | {"jsonb_each", "jsonb_each_text", "generate_subscripts", "regexp_matches",
                                    "regexp_split_to_table"}
_PREFIX = "__srf"


def is_srf_call(e: exp.Expr) -> bool:
    return isinstance(e, exp.Anonymous) and e.name.lower() in SET_RETURNING


def _srf_calls(e: exp.Expr) -> list[exp.Anonymous]:
    """The SRF calls in `e`, not looking into subqueries (they have their own select lists)."""
    out: list[exp.Anonymous] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, (exp.Subquery, exp.Select, exp.Exists)):
            continue
        if is_srf_call(x):
            out.append(x)  # type: ignore[arg-type]
            continue
        if isinstance(x, exp.Window) and is_srf_call(x.this):
            stack.extend(c for c in x.iter_expressions() if c is not x.this)  # `srf(..) OVER`: 42809 (bind_windows)
            continue
        stack.extend(x.iter_expressions())
    return out


def not_allowed(name: str) -> SqlError:
    """A set-returning function where Postgres rejects one (WHERE, aggregate arguments, ...)."""
    return SqlError(FEATURE_NOT_SUPPORTED, f"set-returning function {name}() is not allowed in this context")


def lift_select_list_srfs(s: exp.Select, output_name: Callable[[exp.Expression], str],
                          has_agg: Callable[[exp.Expression], bool]) -> exp.Select:
    """`s` with its select list's SRF call (if any) moved into FROM as a lateral table function."""
    calls = [(i, c) for i, item in enumerate(s.expressions) for c in _srf_calls(item)]
    if not calls:
        return s
    if len(calls) > 1:
        raise unsupported("several set-returning functions in one select list")
    i, call = calls[0]
    if call.name.lower() not in SELECT_LIST_SRFS:
        raise unsupported(f"{call.name.lower()}() in the select list")
    if s.args.get("group") or s.args.get("having") or any(has_agg(x) for x in s.expressions):
        raise unsupported("set-returning functions in the select list of a grouped query")
    for anc in _ancestors(call):
        if anc is s.expressions[i]:
            break
        if isinstance(anc, (exp.Case, exp.Coalesce, exp.If, exp.Window, exp.AggFunc)):
            raise SqlError(FEATURE_NOT_SUPPORTED, "set-returning functions are not allowed in CASE, COALESCE, "
                                                  "aggregate or window function arguments")
    s = s.copy()
    item = s.expressions[i]
    call = _srf_calls(item)[0]
    name = f"{_PREFIX}{id(s) % 1_000_000}"
    table = exp.Table(this=call.copy(), alias=exp.TableAlias(this=exp.to_identifier(name),
                                                             columns=[exp.to_identifier(name)]))
    ref = exp.column(name, table=name)
    if not isinstance(item, exp.Alias):
        item = exp.alias_(item, output_name(item), quoted=True)
        s.set("expressions", [*s.expressions[:i], item, *s.expressions[i + 1:]])
        call = _srf_calls(item)[0]
    call.replace(ref)
    if s.args.get("from_") is None and s.args.get("from") is None:
        s.set("from_", exp.From(this=table))
    else:
        s.append("joins", exp.Join(this=table))
    return s


def _ancestors(e: exp.Expression):
    p = e.parent
    while p is not None:
        yield p
        p = p.parent
