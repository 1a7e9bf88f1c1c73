"""The numeric Java UDFs (compute/jvm/src, mzspark.udf.NumericUdfs) against sql.numeric_ops and
PostgreSQL 15, input for input: each case runs through the Java UDF in Spark, through the
Python reference (compute.render.numeric_udfs._udf over sql.numeric_ops, what the planner's
constant folding computes) and through PostgreSQL.

- Java and Python return the same text: the same digits at the same scale, or the same error
  marker (SQLSTATE and message);
- a value is PostgreSQL's (its text, display scale included; a product rounded half away
  from zero to the call's scale S, as numeric_udfs renders it);
- 22012 / 2201F are PostgreSQL's errors; 22003 is a value PostgreSQL computes with more than
  39 significant digits (Materialize's precision); 0A000 a value whose digits do not fit
  Spark's decimal(38, S). NULL in, NULL out.

PostgreSQL gets the argument each UDF sees: an unconstrained numeric ('0' keep flag) without
its trailing zeros (mzspark does not keep a display scale through storage).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Context, Decimal

import psycopg
import pytest

from tests.pgref import reference_postgres

pytestmark = pytest.mark.spark

BIG = "9" * 38
# (function, a, b, keep): b an integer for round / trunc (int4) and for div_avg's 'L' count (int8)
CASES: list[tuple[str, str | None, str | int | None, str]] = [
    ("div", "1", "3", "11"), ("div", "2", "3", "11"), ("div", "-2", "3", "11"), ("div", "2", "-3", "11"),
    ("div", "0.01", "7.125", "11"), ("div", "98", "3.0", "11"), ("div", "1.000", "3", "11"),
    ("div", "1.000", "3", "01"), ("div", "12345678901234567890", "123", "11"), ("div", "0.0001", "0.0001", "11"),
    ("div", "0", "5", "11"), ("div", "0.00", "-5", "11"), ("div", "5", "0", "11"), ("div", "0", "0.000", "11"),
    ("div", "1", "7", "11"), ("div", "9999", "1", "11"), ("div", "10000", "1", "11"), ("div", "1", "9999", "11"),
    ("div", "1", "10000", "11"), ("div", "123456.789", "1.1", "11"), ("div", "-2.5", "0.7", "11"),
    ("div", BIG, "0.01", "11"), ("div", BIG, "3", "11"), ("div", "0." + "0" * 20 + "1", "3", "11"),
    ("div", "1", "3" + "0" * 30, "11"), ("div", "1", "0." + "0" * 30 + "3", "11"), ("div", "5", "2", "11"),
    ("div", "-5", "2", "11"), ("div", "0.5", "3", "11"), ("div", "1" + "0" * 25, "7", "00"),
    ("div", "12.3400", "2.00", "00"), ("div", "12.3400", "2.00", "10"), ("div", None, "2", "11"), ("div", "2", None, "11"),
    ("div_avg", "7", "L3", "11"), ("div_avg", "-0.05", "L3", "11"), ("div_avg", "0.00", "L2", "11"),
    ("div_avg", "299999999999.96", "L3", "11"), ("div_avg", "176.00", "L7", "11"), ("div_avg", "1", "L0", "11"),
    ("div_avg", "10000.01", "L3", "10"), ("div_avg", BIG, "L7", "11"), ("div_avg", None, "L3", "11"),
    ("mul", "1.5", "2.25", "11"), ("mul", "-0.0001", "0.0001", "11"), ("mul", "0.00", "-3", "11"),
    ("mul", "0.333333333333333333333333", "3", "11"), ("mul", "0.123456789012345678901234", "0.5", "11"),
    ("mul", BIG, BIG, "11"), ("mul", BIG, "0.1", "11"), ("mul", "12345678901234567890", "98765432109876543210", "11"),
    ("mul", "1" + "0" * 20, "1" + "0" * 20, "00"), ("mul", None, "1", "11"),
    ("round", "2.5", 0, "11"), ("round", "-2.5", 0, "11"), ("round", "1234.5678", 2, "11"), ("round", "1234.5678", -2, "11"),
    ("round", "1234.5678", -4, "11"), ("round", "5678", -4, "11"), ("round", "1234.5678", -5, "11"),
    ("round", "0.0049", 2, "11"), ("round", "0.005", 2, "11"), ("round", "-0.005", 2, "11"), ("round", "0.00", 5, "11"),
    ("round", "9.995", 2, "11"), ("round", "1.5", 30, "11"), ("round", "1.5", 1000, "11"), ("round", "1.5", -2147483648, "11"),
    ("round", BIG, -37, "11"), ("round", BIG, -38, "11"), ("round", "2.5", None, "11"), ("round", None, 2, "11"),
    ("trunc", "2.5", 0, "11"), ("trunc", "-2.5", 0, "11"), ("trunc", "1234.5678", 2, "11"), ("trunc", "1234.5678", -2, "11"),
    ("trunc", "-1234.5678", -3, "11"), ("trunc", "0.0049", 2, "11"), ("trunc", "9.999", 2, "11"), ("trunc", "1.5", 20, "11"),
    ("sqrt", "2", "", "11"), ("sqrt", "2.0", "", "11"), ("sqrt", "0", "", "11"), ("sqrt", "0.000", "", "11"),
    ("sqrt", "0.0000000001", "", "11"), ("sqrt", "1" + "0" * 20, "", "11"), ("sqrt", "144", "", "11"),
    ("sqrt", "-1", "", "11"), ("sqrt", BIG, "", "11"), ("sqrt", "0." + "0" * 30 + "2", "", "11"), ("sqrt", None, "", "11"),
    ("min_scale", "1.2300", "", "11"), ("min_scale", "0.000", "", "11"), ("min_scale", "-5.0", "", "11"),
    ("min_scale", "0." + "0" * 20 + "1", "", "11"),
    ("trim_scale", "1.2300", "", "11"), ("trim_scale", "0.000", "", "11"), ("trim_scale", "-5.0", "", "11"),
    ("trim_scale", "100.00", "", "11"), ("trim_scale", None, "", "11"),
]
SCALES = (0, 10, 24, 38)
_CTX = Context(prec=2000, rounding=ROUND_HALF_UP)  # exact for every value here


def _random_cases(n: int, seed: int) -> list[tuple[str, str | None, str | int | None, str]]:
    rng = random.Random(seed)

    def value() -> str:
        digits = rng.randint(1, 38)
        scale = rng.randint(0, digits)
        coef = rng.randint(1, 10 ** digits - 1)
        if rng.random() < 0.3:  # trailing zeros
            coef = min(int(str(coef)[:rng.randint(1, len(str(coef)))]) * 10 ** rng.randint(0, 10), 10 ** 38 - 1)
        return format(Decimal(coef).scaleb(-scale) * rng.choice((1, -1)), "f")

    out: list[tuple[str, str | None, str | int | None, str]] = []
    for _ in range(n):
        f = rng.choice(("div", "div", "div_avg", "mul", "round", "trunc", "sqrt"))
        keep = rng.choice("01") + rng.choice("01")
        a = value()
        b: str | int
        match f:
            case "round" | "trunc":
                b = rng.randint(-40, 45)
            case "div_avg":
                b = f"L{rng.choice((1, 2, 3, 7, rng.randint(1, 10 ** 6)))}"
            case "sqrt":
                a, b = a.lstrip("-"), ""
            case _:
                b = value()
        out.append((f, a, b, keep))
    return out


ALL = CASES + _random_cases(150, 17)


def _decimal_sql(v: str | None) -> str:
    if v is None:
        return "CAST(NULL AS DECIMAL(38,2))"
    s = max(0, -Decimal(v).as_tuple().exponent)  # type: ignore[operator]
    return f"CAST('{v}' AS DECIMAL(38,{s}))"


def _spark_call(case: tuple[str, str | None, str | int | None, str], scale: int) -> str:
    from compute.render.numeric_udfs import JVM_UDFS

    f, a, b, keep = case
    name = f"mz_numeric_{JVM_UDFS[f].lower()}"
    match f:
        case "round" | "trunc":
            args = [_decimal_sql(a), "CAST(NULL AS INT)" if b is None else f"CAST({b} AS INT)"]
        case "div_avg":
            args = [_decimal_sql(a), "CAST(NULL AS BIGINT)" if b is None else f"CAST({str(b)[1:]} AS BIGINT)"]
        case "sqrt" | "min_scale" | "trim_scale":
            args = [_decimal_sql(a)]
        case _:
            args = [_decimal_sql(a), _decimal_sql(b)]  # type: ignore[arg-type]
    return f"{name}({', '.join(args)}, {scale}, '{keep}')"


def _python(case: tuple[str, str | None, str | int | None, str], scale: int) -> str | None:
    from compute.render.numeric_udfs import _udf

    f, a, b, keep = case
    arg_b: object = None if b is None or b == "" else int(b[1:]) if isinstance(b, str) and b.startswith("L") \
        else b if isinstance(b, int) else Decimal(b)
    return _udf(f, None if a is None else Decimal(a), arg_b, scale, keep)


def _pg_sql(case: tuple[str, str | None, str | int | None, str]) -> str:
    """PostgreSQL's text of the call, its numeric arguments as the UDF sees them."""
    from compute.render.numeric_udfs import _arg

    f, a, b, keep = case

    def num(v: str | None, i: int) -> str:
        return "NULL::numeric" if v is None else f"'{format(_arg(Decimal(v), keep[i]), 'f')}'::numeric"

    match f:
        case "div":
            return f"({num(a, 0)} / {num(b, 1)})::text"  # type: ignore[arg-type]
        case "div_avg":
            return f"({num(a, 0)} / {'NULL' if b is None else str(b)[1:]}::int8)::text"
        case "mul":
            return f"({num(a, 0)} * {num(b, 1)})::text"  # type: ignore[arg-type]
        case "round" | "trunc":
            return f"{f}({num(a, 0)}, ({'NULL' if b is None else b})::int4)::text"
        case _:
            return f"{f}({num(a, 0)})::text"


def _fits(v: Decimal, scale: int) -> bool:
    """Do v's digits (trailing zeros aside) fit Spark's decimal(38, scale)?"""
    t = v.normalize(_CTX) if v != 0 else Decimal(0)
    return -t.as_tuple().exponent <= scale and (t == 0 or t.adjusted() < 38 - scale)  # type: ignore[operator]


def _significant(v: Decimal) -> int:
    return 0 if v == 0 else len(v.normalize(_CTX).as_tuple().digits)


def _expected(f: str, pg: str, scale: int) -> Decimal:
    """The value mzspark computes from PostgreSQL's: a product rounded to the call's scale."""
    v = Decimal(pg)
    return v.quantize(Decimal(1).scaleb(-scale), context=_CTX) if f == "mul" else v


@pytest.fixture(scope="module")
def outcomes() -> Iterator[dict[str, list]]:
    """Per case: the Java UDF's text for each scale, the Python reference's, and PostgreSQL's
    text (or `error SQLSTATE`)."""
    from compute.render.spark import spark_session

    spark = spark_session()
    calls = [(i, s) for i in range(len(ALL)) for s in SCALES]
    java: dict[tuple[int, int], str | None] = {}
    for k in range(0, len(calls), 100):
        chunk = calls[k:k + 100]
        row = spark.sql("SELECT " + ", ".join(_spark_call(ALL[i], s) for i, s in chunk) + " FROM range(1)").collect()[0]
        java.update(zip(chunk, row, strict=True))
    pg: list[str | None] = []
    with reference_postgres("pgnumjvm-") as dsn, psycopg.connect(dsn, autocommit=True) as conn:
        for case in ALL:
            try:
                pg.append(conn.execute(f"SELECT {_pg_sql(case)}").fetchone()[0])  # type: ignore[index]
            except psycopg.Error as e:
                pg.append(f"error {e.sqlstate}")
    yield {"java": [[java[i, s] for s in SCALES] for i in range(len(ALL))],
           "python": [[_python(case, s) for s in SCALES] for case in ALL], "pg": pg}


@pytest.mark.parametrize("i", range(len(ALL)), ids=[f"{c[0]}({c[1]},{c[2]})/{c[3]}" for c in ALL])
def test_java_python_and_postgres_agree(outcomes: dict[str, list], i: int) -> None:
    f = ALL[i][0]
    pg = outcomes["pg"][i]
    for s, java, python in zip(SCALES, outcomes["java"][i], outcomes["python"][i], strict=True):
        assert java == python, f"S={s}"
        if java is None:
            assert pg is None, f"S={s}"
        elif not java.startswith("\u0001"):
            assert pg is not None and not pg.startswith("error"), f"S={s}: {java} where PostgreSQL: {pg}"
            if f == "mul":
                assert Decimal(java) == _expected(f, pg, s), f"S={s}"
            else:
                assert java == pg, f"S={s}"
        else:
            state = java[2:7]
            if state in ("22012", "2201F"):
                assert pg == f"error {state}", f"S={s}: {java!r}"
                continue
            assert pg is not None and not pg.startswith("error"), f"S={s}: {java!r} where PostgreSQL: {pg}"
            if state == "22003":
                assert _significant(_expected(f, pg, s)) > 39, f"S={s}: {java!r} where PostgreSQL: {pg}"
            else:
                assert state == "0A000", java
                assert not _fits(_expected(f, pg, s), s), f"S={s}: {java!r} where PostgreSQL: {pg}"


def test_every_case_kind_is_covered(outcomes: dict[str, list]) -> None:
    """The curated cases reach every outcome the tests above distinguish."""
    seen = {(ALL[i][0], "NULL" if j is None else j[2:7] if j.startswith("\u0001") else "value")
            for i, row in enumerate(outcomes["java"]) for j in row}
    for want in [("div", "value"), ("div", "22012"), ("div", "0A000"), ("div", "22003"), ("div", "NULL"),
                 ("div_avg", "value"), ("div_avg", "22012"), ("mul", "value"), ("mul", "22003"), ("mul", "0A000"),
                 ("round", "value"), ("trunc", "value"), ("sqrt", "value"), ("sqrt", "2201F"),
                 ("min_scale", "value"), ("trim_scale", "value")]:
        assert want in seen, want
