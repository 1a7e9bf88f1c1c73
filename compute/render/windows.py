"""Window aggregates (sql.scalar.AggregateExpr with `window`): one Reduce group per window
partition, rendered with Spark's window functions where Spark's frames express Postgres'
frame, else by joining each row to the rows of its frame (compute.render.frames)."""

from __future__ import annotations

from compute.render import float_stats, frames
from compute.render.aggregates import basic_aggregate, finish_aggregate, finish_cast
from compute.render.rel import (
    Rel,
    RenderContext,
    check_non_negative,
    cname,
    cnames,
    consolidate,
    expand,
    select_rel,
)
from compute.render.scalar import render_scalar
from compute.render.spark_sql import raise_error, sql_type
from sql.errors import FEATURE_NOT_SUPPORTED, SqlError
from sql.scalar import (
    RANK_LIKE,
    AggregateExpr,
    CallBinary,
    CallUnary,
    CallVariadic,
    Column,
    Literal,
)
from sql.types import INT8, NUMERIC, SqlType

# Spark's frame offsets are INT; a ROWS offset of at least 2^31 - 1 reaches as far as one of
# 2^31 - 1 (no partition has more rows), so larger offsets (PG allows bigint) are clamped.
_ROW_OFFSET_MAX = 2**31 - 1
# aggregates Spark evaluates over its own frames with Postgres' results
_NATIVE_AGGREGATES = ("sum", "count", "min", "max", "avg", *float_stats.SINGLE)


def _frame_bound(b: tuple[str, int | None]) -> str:
    kind, n = b
    n = None if n is None else min(n, _ROW_OFFSET_MAX)
    return {"unbounded_preceding": "UNBOUNDED PRECEDING", "unbounded_following": "UNBOUNDED FOLLOWING",
            # `n PRECEDING` parses to -(n), which stays unfolded (ConstantFolding is excluded,
            # see compute/render/spark.py) and Spark's frames need literal bounds
            "current_row": "CURRENT ROW", "preceding": f"{-(n or 0)} FOLLOWING", "following": f"{n} FOLLOWING"}[kind]


def _arg(a: AggregateExpr) -> CallVariadic | None:
    """The arguments record `row(value, ..)` of lag / lead / nth_value, if it is one."""
    args = a.expr.exprs[0].exprs[1] if isinstance(a.expr, CallVariadic) and isinstance(a.expr.exprs[0], CallVariadic) else None
    return args if isinstance(args, CallVariadic) and args.func == "row" else None


def _window_value(a: AggregateExpr, w: str, over: str, framed: str, by_row: str) -> str:
    """The window function of a window aggregate over its input record `w` (see
    sql.scalar.AggregateExpr): result of the current row copy, with Spark's frames
    (`by_row`: the window's order with peers ordered by their row, for positions)."""
    first = f"{w}.f0"
    match a.func:
        case "row_number":
            return f"row_number() OVER ({by_row})"
        case "rank" | "dense_rank" | "percent_rank" | "cume_dist":
            return f"{a.func}() OVER ({over})"
        case "ntile":
            n = a.expr.exprs[0].exprs[1] if isinstance(a.expr, CallVariadic) and isinstance(a.expr.exprs[0], CallVariadic) else None
            if not isinstance(n, Literal):
                raise SqlError(FEATURE_NOT_SUPPORTED, "ntile with a non-constant argument")
            return "NULL" if n.value is None else f"ntile({int(n.value)}) OVER ({by_row})"
        case "lag" | "lead":
            args = _arg(a)
            offset = args.exprs[1] if args is not None else None
            if not isinstance(offset, Literal):
                raise SqlError(FEATURE_NOT_SUPPORTED, f"{a.func} with a non-constant offset")
            if offset.value is None:
                return "NULL"
            return f"{a.func}({first}.f1.f0, {int(offset.value)}, {first}.f1.f2) OVER ({by_row})"
        case "first_value" | "last_value":
            return f"{a.func}({first}.f1) OVER ({framed})"
        case "lag" | "lead":
            # a NULL offset gives NULL; a position outside the partition the default
            return "(CASE WHEN __n IS NULL THEN NULL WHEN size(__s) > 0 THEN element_at(__s, 1).v ELSE __w.f0.f1.f2 END)"
        case "nth_value":
            args = _arg(a)
            assert args is not None and isinstance(args.exprs[1], Literal)
            n = args.exprs[1].value
            return "NULL" if n is None else f"nth_value({first}.f1.f0, {int(n)}) OVER ({framed})"
        case "window_agg":
            assert a.window is not None
            f = a.window.agg
            x = f"{first}.f1"
            if f == "count":
                return f"count({x}) OVER ({framed})"
            if f in ("sum", "min", "max"):
                return f"{f}({x}) OVER ({framed})"
            if f in float_stats.SINGLE:
                # the frame's values, folded as GROUP BY folds a group's (oneshot)
                agg = _plain(a)
                return finish_aggregate(agg, f"{basic_aggregate(agg, x)} OVER ({framed})")
            if f == "avg":
                res = a.typ.fields[0].fields[0] if a.typ.fields and a.typ.fields[0].fields else None
                st = sql_type(res) if res is not None else "decimal(38,10)"
                return f"CAST(sum({x}) OVER ({framed}) AS {st}) / count({x}) OVER ({framed})"
    raise SqlError(FEATURE_NOT_SUPPORTED, f"window function {a.func} has no rendering")


def _result_type(a: AggregateExpr) -> SqlType | None:
    elem_t = a.typ.fields[0] if a.typ.fields else None
    return elem_t.fields[0] if elem_t is not None and elem_t.fields else None


def _arg_type(a: AggregateExpr) -> SqlType:
    """The type of `arg` in the input record `row(row(<row>, arg), o1, ..)`."""
    return a.expr.typ.fields[0].fields[1]


def _spark_framed(a: AggregateExpr) -> bool:
    """Does Spark's own window function compute `a` (frame and function alike)?"""
    assert a.window is not None
    if a.func in ("lag", "lead"):
        args = _arg(a)
        return args is not None and isinstance(args.exprs[1], Literal)
    if a.func in RANK_LIKE or a.func == "ntile":
        return True
    if not frames.native(a.window.frame, a.window.bounds):
        return False
    if a.func == "nth_value":
        args = _arg(a)
        return args is not None and isinstance(args.exprs[1], Literal)
    if a.func == "window_agg":
        return a.window.agg in _NATIVE_AGGREGATES and (_result_type(a) or NUMERIC).name != "interval"
    return True


def _plain(a: AggregateExpr) -> AggregateExpr:
    """The GROUP BY aggregate a window aggregate computes over each frame."""
    assert a.window is not None and a.window.agg is not None
    res_t = _result_type(a)
    assert res_t is not None
    return AggregateExpr(a.window.agg, Literal(None, _arg_type(a)), False, res_t)


def window_reduce(r: Rel, key, aggs, ctx: RenderContext) -> Rel:
    """Window aggregates (one partition per group): consolidate, one row per copy, the
    window function over the partition, then the list of `row(result, row)` per group."""
    if len(aggs) != 1 or aggs[0].window is None:
        raise SqlError(FEATURE_NOT_SUPPORTED, "a Reduce mixing window and other aggregates")
    a = aggs[0]
    assert a.window is not None
    rows = expand(check_non_negative(consolidate(r, ctx), "Reduce", ctx), ctx)
    cols = cnames(rows.arity)
    kc = [f"k{i}" for i in range(len(key))]
    keyed_exprs = [*[f"{render_scalar(k, cols)} AS {kc[i]}" for i, k in enumerate(key)], f"{render_scalar(a.expr, cols)} AS __w"]
    keyed = f"SELECT {', '.join(keyed_exprs)} FROM {ctx.sub(rows)}"
    part = f"PARTITION BY {', '.join(kc)} " if kc else ""
    # a constant ORDER BY value orders nothing (Spark drops it, leaving rank() no order)
    values = a.expr.exprs if isinstance(a.expr, CallVariadic) else ()
    keys = [o for o in a.window.order_by if not (o.column + 1 < len(values) and isinstance(values[o.column + 1], Literal))]
    order = ", ".join(f"__w.f{o.column + 1} {'DESC' if o.desc else 'ASC'} NULLS {'LAST' if o.nulls_last else 'FIRST'}" for o in keys) or "0"
    over = f"{part}ORDER BY {order}"
    row = "element_at(__w.f0, 1)" if a.func in RANK_LIKE else "__w.f0.f0"
    # Peers (rows equal on the ORDER BY values) in one deterministic order, for what counts
    # positions (row_number, ntile, lag / lead, ROWS frames): by the whole row, in the
    # direction of the last ORDER BY key, so that windows of opposite orders number their
    # peers in mirror order (as PostgreSQL's sorts happen to). Peer groups stay `over`'s.
    by_row = f"{over}, {row} {'DESC' if keys and keys[-1].desc else 'ASC'}"
    res_t = _result_type(a)
    if _spark_framed(a):
        fr = a.window.frame
        base = by_row if fr.units == "rows" else over
        framed = over if fr.is_default() and a.window.order_by else f"{base} {fr.units.upper()} BETWEEN {_frame_bound(fr.start)} AND {_frame_bound(fr.end)}"
        value = _window_value(a, "__w", over, framed, by_row)
        src = keyed
    else:
        src, value = _joined_frames(keyed, kc, over, by_row, a, ctx)
    if res_t is not None:
        value = finish_cast(_plain(a), value) if a.func == "window_agg" else f"CAST({value} AS {sql_type(res_t)})"
    elem = f"named_struct('f0', {value}, 'f1', {row}) AS __e"
    elems = f"SELECT {', '.join([*kc, elem])} FROM ({src}) AS {ctx.alias()}"
    q = f"SELECT {', '.join([*kc, 'collect_list(__e) AS __l'])} FROM ({elems}) AS {ctx.alias()}"
    if kc:
        q += " GROUP BY " + ", ".join(kc)
    else:
        q += " HAVING count(1) > 0"
    return select_rel(ctx, Rel(q, 0), [*[f"{k} AS {cname(i)}" for i, k in enumerate(kc)], f"__l AS {cname(len(kc))}", "CAST(1 AS BIGINT) AS diff"])


def _joined_frames(keyed: str, kc: list[str], over: str, by_row: str, a: AggregateExpr, ctx: RenderContext) -> tuple[str, str]:
    """Frames Spark cannot express (GROUPS, EXCLUDE, RANGE offsets, empty frames) and
    functions it has no framed form of: number the partition's rows once (position, peer
    group), join each row c to the rows r of its frame (frames.in_frame; a row whose frame
    is empty keeps one unmatched pair), and aggregate r's arguments per c as GROUP BY does.
    Returns (SELECT giving k.., __w per row, the value expression over that SELECT)."""
    assert a.window is not None
    numbered = ctx.materialize(Rel(
        f"SELECT *, row_number() OVER ({by_row}) AS __pos, dense_rank() OVER ({over}) AS __grp FROM ({keyed}) AS {ctx.alias()}",
        0))
    w = a.window
    o = w.order_by[0] if w.order_by else None

    def coords(t: str) -> frames.FrameRow:
        value = f"{t}.__w.f{o.column + 1}" if o is not None else None
        lo, hi = (f"{t}.__w.f{b}" if b is not None else None for b in w.bounds)
        bt = a.expr.typ.fields[w.bounds[0] or w.bounds[1]] if (w.bounds[0] or w.bounds[1]) else None
        if value is not None and bt is not None and w.frame.units == "range":
            value = f"CAST({value} AS {sql_type(bt)})"
        return frames.FrameRow(f"{t}.__pos", f"{t}.__grp", value, lo, hi)

    if a.func in ("lag", "lead"):
        # the row `offset` positions before (lag) / after (lead) the current one
        cond = f"r.__pos = c.__pos {'-' if a.func == 'lag' else '+'} c.__w.f0.f1.f1"
    else:
        cond = frames.in_frame(w.frame, o, coords("c"), coords("r"))
    on = [f"c.{k} <=> r.{k}" for k in kc] + [cond]
    n = "c.__w.f0.f1.f1" if a.func in ("nth_value", "lag", "lead") else "NULL"
    x = "r.__w.f0.f1.f0" if a.func in ("nth_value", "lag", "lead") else "r.__w.f0.f1"
    pairs = (f"SELECT {', '.join(f'c.{k} AS {k}' for k in kc + ['__pos', '__w'])}, {n} AS __n, r.__pos AS __rpos, {x} AS __x, "
             f"CASE WHEN r.__pos IS NULL THEN NULL ELSE CAST(1 AS BIGINT) END AS diff "
             f"FROM ({numbered.sql}) AS c LEFT JOIN ({numbered.sql}) AS r ON {' AND '.join(on)}")
    # the frame's values in frame order (positional functions, array_agg)
    framed = ("array_sort(collect_list(CASE WHEN __rpos IS NOT NULL THEN named_struct('p', __rpos, 'v', __x) END), "
              "(l, r) -> CASE WHEN l.p < r.p THEN -1 WHEN l.p > r.p THEN 1 ELSE 0 END)")
    exprs = [*kc, "first(__w) AS __w", "first(__n) AS __n", f"{framed} AS __s"]
    value = _frame_value(a, exprs)
    grouped = f"SELECT {', '.join(exprs)} FROM ({pairs}) AS {ctx.alias()} GROUP BY {', '.join([*kc, '__pos'])}"
    return grouped, value


def _frame_value(a: AggregateExpr, exprs: list[str]) -> str:
    """The value of `a` over the grouped frame rows (__s: the frame's values in order;
    aggregates are added to exprs, as GROUP BY renders them, weighted by diff)."""
    assert a.window is not None
    match a.func:
        case "first_value":
            return "(CASE WHEN size(__s) > 0 THEN element_at(__s, 1).v END)"
        case "last_value":
            return "(CASE WHEN size(__s) > 0 THEN element_at(__s, -1).v END)"
        case "lag" | "lead":
            # a NULL offset gives NULL; a position outside the partition the default
            return "(CASE WHEN __n IS NULL THEN NULL WHEN size(__s) > 0 THEN element_at(__s, 1).v ELSE __w.f0.f1.f2 END)"
        case "nth_value":
            bad = raise_error("[22016] argument of nth_value must be greater than zero", _result_type(a) or "string")
            return f"(CASE WHEN __n IS NULL THEN NULL WHEN __n <= 0 THEN {bad} WHEN size(__s) >= __n THEN element_at(__s, __n).v END)"
    assert a.func == "window_agg" and a.window.agg is not None
    f, res_t, arg_t = a.window.agg, _result_type(a), _arg_type(a)
    assert res_t is not None
    if f == "array_agg":
        return "(CASE WHEN size(__s) > 0 THEN transform(__s, e -> e.v) END)"
    if f in float_stats.SINGLE:
        exprs.append(f"{basic_aggregate(_plain(a), '__x')} AS __vals")
        return finish_aggregate(_plain(a), "__vals")
    if f == "avg":
        # sum / count as lowering renders avg (sql.lowering: div_avg)
        small = arg_t.name in ("int2", "int4")
        sum_t = INT8 if small else (NUMERIC if arg_t.name in ("int8", "numeric") else res_t)
        exprs.append(f"CAST({basic_aggregate(AggregateExpr('sum', Literal(None, arg_t), False, sum_t), '__x')} AS {sql_type(sum_t)}) AS __sum")
        exprs.append(f"{basic_aggregate(AggregateExpr('count', Literal(None, arg_t), False, INT8), '__x')} AS __cnt")
        total = Column(0, sum_t) if sum_t == res_t else CallUnary("cast", Column(0, sum_t), res_t)
        cnt = Column(1, INT8) if res_t.name == "interval" else CallUnary("cast", Column(1, INT8), res_t)
        return f"(CASE WHEN __cnt > 0 THEN {render_scalar(CallBinary('div_avg', total, cnt, res_t), ['__sum', '__cnt'])} END)"
    exprs.append(f"CAST({basic_aggregate(AggregateExpr(f, Literal(None, arg_t), False, res_t), '__x')} AS {sql_type(res_t)}) AS __agg")
    return "__agg"
