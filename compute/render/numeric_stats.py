"""var_pop / var_samp / stddev_pop / stddev_samp over integers and numerics, exactly as
PostgreSQL computes them (numeric.c, numeric_stddev_internal), as an Arrow Python UDF over a
group's collected values:

    numerator = N * sum(x^2) - sum(x)^2  (exact; 0 when it is not positive)
    var = numerator / (N * N)  (pop)  or  numerator / (N * (N - 1))  (samp), rounded half
          away from zero to select_div_scale's scale (at least 16 significant digits, and
          not less than the numerator's display scale, 2 * the inputs' largest one)
    stddev = sqrt(var) rounded to the same scale
    NULL for no values (samp: for fewer than 2).

The value is returned as decimal(38, 24), 0A000 when its digits do not fit (never rounded to
other digits). The inputs' display scale: a numeric(p, s)'s is s (Postgres stores its values
with scale s); an unconstrained numeric's is taken from its digits (mzspark does not keep its
trailing zeros)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal, localcontext

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compute.render.jsonb import checked
from compute.render.numeric_udfs import fit
from sql.types import SqlType

_MIN_SIG_DIGITS = 16  # NUMERIC_MIN_SIG_DIGITS
_DEC_DIGITS = 4  # decimal digits per NBASE digit


def _dscale(v: Decimal) -> int:
    e = v.normalize().as_tuple().exponent
    return max(0, -e) if isinstance(e, int) else 0


def _weight_first(v: Decimal) -> tuple[int, int]:
    """(weight, first NBASE digit) of v > 0 in base 10000."""
    w = v.adjusted() // _DEC_DIGITS
    return w, int(v.scaleb(-_DEC_DIGITS * w))


def select_div_scale(num: Decimal, den: Decimal, dscale: int) -> int:
    """The result scale Postgres chooses for num / den (both > 0)."""
    w1, f1 = _weight_first(num)
    w2, f2 = _weight_first(den)
    qweight = w1 - w2 - (1 if f1 <= f2 else 0)
    return min(max(_MIN_SIG_DIGITS - qweight * _DEC_DIGITS, dscale, 0), 1000)


def _round(v: Decimal, scale: int) -> Decimal:
    return v.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)


def numeric_stat(values: list[Decimal | None] | None, func: str, typed_scale: bool = False) -> Decimal | None:
    """The statistic `func` of the non-NULL values, as Postgres' numeric computes it, in
    mzspark's storage scale; `typed_scale`: the values' own exponent is their display scale
    (numeric(p, s) values), else their digits'."""
    xs = [Decimal(v) for v in (values or []) if v is not None]
    n = len(xs)
    sample = func.endswith("_samp")
    if n == 0 or sample and n <= 1:
        return None
    with localcontext(Context(prec=200, rounding=ROUND_HALF_UP)):
        sx = sum(xs, Decimal(0))
        sxx = sum((x * x for x in xs), Decimal(0))
        numerator = n * sxx - sx * sx
        if numerator <= 0:
            return Decimal(0)
        den = Decimal(n * (n - 1) if sample else n * n)
        dscale = max(max(0, -int(x.as_tuple().exponent)) if typed_scale else _dscale(x) for x in xs)
        scale = select_div_scale(numerator, den, 2 * dscale)
        out = _round(numerator / den, scale)
        if func.startswith("stddev"):
            out = _round(out.sqrt(), scale)
        return out


# the statistic's Spark type: 14 integer digits, 24 fractional ones (a value needing more is
# 0A000, compute.render.numeric_udfs)
RESULT_SCALE = 24


def _udf(values: list[Decimal | None] | None, func: str, typed_scale: bool) -> str | None:
    """The statistic as text, or ERR + a `[SQLSTATE] message` when it does not fit."""
    v = numeric_stat(values, func, typed_scale)
    if v is None:
        return None
    return fit(v, RESULT_SCALE)


def call(values: str, func: str, arg: SqlType) -> str:
    """The Spark SQL expression of the statistic over the collected values of type `arg`."""
    typed = "TRUE" if arg.numeric_precision_scale() is not None else "FALSE"
    return checked(f"mz_numeric_stat({values}, '{func}', {typed})", f"DECIMAL(38,{RESULT_SCALE})")


def register(spark: SparkSession) -> None:
    spark.udf.register("mz_numeric_stat", F.udf(_udf, T.StringType(), useArrow=True))
