"""Spark SQL of one aggregate over a consolidated (diff-weighted) group, and its finishing cast."""

from __future__ import annotations

from compute.render import float_stats, limits, numeric_stats
from compute.render.jsonb import checked
from compute.render.scalar_intervals import interval_key
from compute.render.spark_sql import sql_type
from sql.errors import INTERNAL_ERROR, SqlError, unsupported
from sql.scalar import AggregateExpr, ColumnOrder
from sql.types import SqlType


def jsonb_equality_key(x: str) -> str:
    """A text equal for exactly the jsonb values `=` finds equal (1.0 = 1); a text without a
    '.' has no number a different text could equal, so it is its own key."""
    return f"(CASE WHEN instr({x}, '.') = 0 THEN {x} ELSE mz_jsonb_key({x}) END)"


def nonnull_diff(x: str) -> str:
    return f"SUM(CASE WHEN {x} IS NOT NULL THEN diff ELSE 0 END)"


def minmax(x: str, func: str, t: SqlType | None = None) -> str:
    if t is not None and t.name == "interval":
        # Postgres orders intervals by their total (1 mon = 30 days), not field by field
        return f"{'min_by' if func == 'min' else 'max_by'}({x}, {interval_key(x)})"
    return f"{'MIN' if func == 'min' else 'MAX'}({x})"


def interval_sum(x: str) -> str:
    """sum(interval): Postgres adds the three fields separately (weighted by diff here); the
    sum of no (non-NULL) rows is a NULL interval, not a struct of NULL fields."""
    fields = {f: f"SUM(CAST({x}.{f} AS BIGINT) * diff)" for f in ("months", "days", "micros")}
    return (f"CASE WHEN {fields['months']} IS NOT NULL THEN CAST(named_struct("
            + ", ".join(f"'{f}', {s}" for f, s in fields.items())
            + ") AS struct<months:int,days:int,micros:bigint>) END")


# aggregates that see every unit of multiplicity (their inputs are expanded to diff = 1)
EXPANDED_AGGREGATES = frozenset({"string_agg", "array_agg", "jsonb_agg", "jsonb_object_agg", "stddev_samp", "stddev_pop", "var_samp", "var_pop"})
LIST_AGGREGATES = ("string_agg", "array_agg", "jsonb_agg", "jsonb_object_agg")


def weighted_sum(x: str, t: SqlType) -> str:
    """SUM(x · diff) in t's Spark type (an accumulator of one-shot and delta rendering alike).
    A numeric x is multiplied by its diff only where the diff is not 1, and by the diff as a
    bigint: decimal(38, s) × decimal(20, 0) is decimal(38, s), where the product of two
    decimal(38, 10) was typed decimal(38, 20) (no precision loss: 18 integer digits, so
    sum(1e20) was 22003) and cost a BigDecimal product per row."""
    st = sql_type(t)
    if t.name == "numeric":
        xv = f"CAST({x} AS {st})"
        return f"SUM(CASE WHEN diff = 1 THEN {xv} ELSE {xv} * diff END)"
    return f"SUM(CAST({x} AS {st}) * CAST(diff AS {st}))"


def accumulated_sum(x: str, t: SqlType, arg: SqlType) -> str:
    """weighted_sum(x, t) as an expression (not a bare aggregate call: no window may wrap it).
    CAST(SUM(x·diff) AS decimal(38, S)) = CAST(SUM(CAST(x AS decimal(38, s))·diff) AS
    decimal(38, S)) when x is a numeric of scale s <= S: the terms are summed exactly in their
    own scale (a long addition per row while the sum fits one), not each rescaled to S first,
    and the sum holds 38 - s >= 38 - S integer digits, so it overflows only where the result
    would. (SF 1 TPC-H q01's four sums over 5.9M rows all written this way: 6.4 -> 5.6 s of
    executor CPU; a sum of a product keeps weighted_sum, its Spark scale is not known here.)"""
    ps = arg.numeric_precision_scale() if arg.name == "numeric" else None
    if t.name != "numeric" or ps is None:
        return weighted_sum(x, t)
    s = arg.decimal_precision_scale()[1]
    if s > t.decimal_precision_scale()[1]:
        return weighted_sum(x, t)
    xv = f"CAST({x} AS decimal(38,{s}))"
    return f"CAST(SUM(CASE WHEN diff = 1 THEN {xv} ELSE {xv} * diff END) AS {sql_type(t)})"


def basic_aggregate(a: AggregateExpr, x: str) -> str:
    match a.func, a.distinct:
        case "count", False:
            return nonnull_diff(x)
        case "count", True if a.expr.typ.name == "jsonb":
            # jsonb values are equal by value (1.0 = 1): count distinct equality keys; a text
            # without a '.' has no number a different text could equal
            return f"COUNT(DISTINCT {jsonb_equality_key(x)})"
        case "count", True:
            return f"COUNT(DISTINCT {x})"
        case "sum", False if a.typ.name == "interval":
            return interval_sum(x)
        case "sum", True if a.typ.name == "interval":
            raise unsupported("sum(DISTINCT interval)")
        case "sum", False:
            return weighted_sum(x, a.typ)
        case "sum", True:
            return f"SUM(DISTINCT CAST({x} AS {sql_type(a.typ)}))"
        case ("min" | "max"), _:
            return minmax(x, a.func, a.typ)
        case ("bool_or" | "bool_and"), _:
            return f"{a.func}({x})"
        case "any_value", _:
            return f"any_value({x})"
        case _ if is_folded(a):
            # the values (NULL: skipped), folded afterwards (compute.render.float_stats)
            return f"{'collect_set' if a.distinct else 'collect_list'}({x if a.func not in float_stats.SINGLE else f'CAST({x} AS DOUBLE)'})"
        case ("stddev_samp" | "stddev_pop" | "var_samp" | "var_pop"), _ if a.typ.name == "numeric":
            # the exact values (in their own scale, never rounded), for compute.render.numeric_stats
            return f"{'collect_set' if a.distinct else 'collect_list'}({x})"
        case ("string_agg" | "array_agg" | "jsonb_agg" | "jsonb_object_agg"), _:
            # the records (NULL: filtered out); ordered, distinct and finished afterwards
            return f"collect_list({x})"
    raise SqlError(INTERNAL_ERROR, f"aggregate {a.func} has no Basic rendering")


def _compare(order: tuple[ColumnOrder, ...]) -> str:
    """A comparator lambda for array_sort over records, ordering by the record fields."""
    out = "0"
    for o in reversed(order):
        a, b = f"l.f{o.column}", f"r.f{o.column}"
        lt, gt = ("1", "-1") if o.desc else ("-1", "1")
        nf, nl = ("1", "-1") if o.nulls_last else ("-1", "1")
        out = (f"CASE WHEN {a} IS NULL AND {b} IS NULL THEN {out} WHEN {a} IS NULL THEN {nf} WHEN {b} IS NULL THEN {nl}"
               f" WHEN {a} < {b} THEN {lt} WHEN {a} > {b} THEN {gt} ELSE {out} END")
    return f"(l, r) -> {out}"


def is_folded(a: AggregateExpr) -> bool:
    """Float statistics computed like Postgres' float8_accum / float8_regr_accum."""
    return a.func in float_stats.FOLDED and a.typ.name == "float8"


def finish_cast(a: AggregateExpr, v: str) -> str:
    """The finished value `v` of `a` in its result type; a numeric statistic keeps its own
    scale (compute.render.numeric_stats: exact to 24 digits, never rounded to 10)."""
    if a.func in float_stats.SINGLE and a.typ.name == "numeric":
        return v
    return f"CAST({v} AS {sql_type(a.typ)})"


def finish_aggregate(a: AggregateExpr, v: str) -> str:
    """The aggregate's value from what `_basic_aggregate` computed into column `v`."""
    if is_folded(a):
        return float_stats.fold(a.func, v)
    if a.func in float_stats.SINGLE and a.typ.name == "numeric":
        return numeric_stats.call(v, a.func, a.expr.typ)
    if a.func not in LIST_AGGREGATES:
        return v
    recs = f"array_distinct({v})" if a.distinct else v
    if a.order_by:
        recs = f"array_sort({recs}, {_compare(a.order_by)})"
    if a.func == "array_agg":
        # no rows: NULL, not an empty array
        return f"(CASE WHEN size({v}) > 0 THEN transform({recs}, s -> s.f0) END)"
    if a.func == "jsonb_agg":
        # the values' jsonb texts (SQL NULL is JSON null) in an array's canonical text
        return f"(CASE WHEN size({v}) > 0 THEN concat('[', array_join(transform({recs}, s -> s.f0), ', ', 'null'), ']') END)"
    if a.func == "jsonb_object_agg":
        return checked(f"mz_jsonb_object_agg(transform({recs}, s -> s.f0), transform({recs}, s -> s.f1))")
    # string_agg: NULL values are skipped; every value but the first is preceded by its
    # own row's separator (a NULL separator adds nothing)
    vals = f"filter({recs}, s -> s.f0 IS NOT NULL)"
    if a.typ.name == "bytea":
        parts = f"transform({vals}, (s, i) -> CASE WHEN i = 0 THEN s.f0 ELSE concat(coalesce(s.f1, X''), s.f0) END)"
        return f"(CASE WHEN exists({v}, s -> s.f0 IS NOT NULL) THEN aggregate({parts}, X'', (acc, p) -> concat(acc, p)) END)"
    joined = f"array_join(transform({vals}, (s, i) -> CASE WHEN i = 0 THEN s.f0 ELSE concat(coalesce(s.f1, ''), s.f0) END), '')"
    # Postgres' buffer holds every value with its separator (the first one's is skipped at
    # the end): over the 1 GB limit it fails before Spark builds the string
    total = f"aggregate({vals}, 0L, (acc, s) -> acc + octet_length(s.f0) + coalesce(octet_length(s.f1), 0))"
    joined = limits.joined_text(total, joined)
    return f"(CASE WHEN exists({v}, s -> s.f0 IS NOT NULL) THEN {joined} END)"
