"""PostgreSQL's numeric division and transcendental functions on Python decimals (numeric.c).

Each result is the exact value rounded half away from zero to the scale Postgres chooses:

- a / b: select_div_scale = max(16 - 4 * qweight, dscale(a), dscale(b), 0), qweight the
  base-10000 weight of the quotient (less one when a's first base-10000 digit <= b's)
- power(b, e), e an int4 integer: b ^ e to max(16, dscale(b)); otherwise
  exp(e * ln(b)) to max(16 - trunc(log10(result)), dscale(b), dscale(e), 0)
- exp(x): to max(16 - trunc(x * log10(e)), dscale(x), 0)
- ln(x): to max(16 - ln_dweight(x), dscale(x), 0);  log(b, x) = ln(x) / ln(b) to
  max(16 - (ln_dweight(x) - ln_dweight(b)), dscale(b), dscale(x), 0);  log10(x) = log(10, x)
- sqrt(x): to max(16 - ((weight(x) + 1) * 4 / 2 - 1), dscale(x), 0)

A result of more than MAX_DIGITS significant digits (Materialize's numeric precision) is
22003, never rounded to other digits. dscale(v) is the decimal's own exponent (a literal's
written scale; mzspark does not keep Postgres' display scale through storage).
"""

from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_UP, Context, Decimal, InvalidOperation, localcontext

from sql.errors import NUMERIC_VALUE_OUT_OF_RANGE, SqlError

MIN_SIG_DIGITS = 16  # NUMERIC_MIN_SIG_DIGITS
MAX_DISPLAY_SCALE = 1000  # NUMERIC_MAX_DISPLAY_SCALE
DEC_DIGITS = 4  # decimal digits per NBASE (10000) digit
MAX_DIGITS = 39  # Materialize's numeric precision
_PREC = 160  # working precision: far beyond MAX_DIGITS plus any scale kept


def context(rounding: str = ROUND_HALF_UP, prec: int = _PREC) -> Context:
    return Context(prec=prec, rounding=rounding, Emax=999_999, Emin=-999_999)


def dscale(v: Decimal) -> int:
    e = v.as_tuple().exponent
    return max(0, -e) if isinstance(e, int) else 0


def _weight_first(v: Decimal) -> tuple[int, int]:
    """(weight, first base-10000 digit) of |v| (0, 0 for zero)."""
    if v == 0:
        return 0, 0
    v = abs(v)
    w = v.adjusted() // DEC_DIGITS
    return w, int(v.scaleb(-DEC_DIGITS * w))


def select_div_scale(a: Decimal, b: Decimal) -> int:
    w1, f1 = _weight_first(a)
    w2, f2 = _weight_first(b)
    qweight = w1 - w2 - (1 if f1 <= f2 else 0)
    return min(max(MIN_SIG_DIGITS - qweight * DEC_DIGITS, dscale(a), dscale(b), 0), MAX_DISPLAY_SCALE)


def at_scale(v: int, scale: int) -> Decimal:
    """The integer v written with `scale` fractional digits (1 at scale 2 is 1.00)."""
    return Decimal(v).quantize(Decimal(1).scaleb(-scale), context=context())


def overflow() -> SqlError:
    return SqlError(NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")


def checked(v: Decimal, scale: int, prec: int = _PREC) -> Decimal:
    """v rounded half away from zero to `scale`; 22003 beyond MAX_DIGITS significant digits
    (or `prec` digits in all)."""
    try:
        q = v.quantize(Decimal(1).scaleb(-scale), context=context(prec=prec))
    except InvalidOperation:
        raise overflow() from None
    if q != 0 and len(q.normalize(context()).as_tuple().digits) > MAX_DIGITS:
        raise SqlError(NUMERIC_VALUE_OUT_OF_RANGE,
                       f"numeric result has more than {MAX_DIGITS} significant digits (Materialize's numeric precision)")
    return q.copy_abs() if q.is_zero() else q  # numeric has no negative zero (0 * -1.0 is 0.0)


def div(a: Decimal, b: Decimal) -> Decimal:
    if b == 0:
        raise SqlError("22012", "division by zero")
    with localcontext(context(ROUND_DOWN)):  # truncated: rounding once, in checked()
        return checked(a / b, select_div_scale(a, b))


def _ln_dweight(x: Decimal) -> int:
    """estimate_ln_dweight: the decimal weight of ln(x), x > 0."""
    if Decimal("0.9") <= x <= Decimal("1.1"):
        d = x - 1
        return 0 if d == 0 else d.adjusted()
    import math

    # ln(x) ~ ln(first two base-10000 digits) + their decimal weight * ln(10)
    w, _ = _weight_first(x)
    digits = int(x.scaleb(-DEC_DIGITS * (w - 1)))
    return int(math.log10(abs(math.log(digits) + DEC_DIGITS * (w - 1) * 2.302585092994046)))


def _check_log_arg(x: Decimal) -> None:
    if x == 0:
        raise SqlError("2201E", "cannot take logarithm of zero")
    if x < 0:
        raise SqlError("2201E", "cannot take logarithm of a negative number")


def ln(x: Decimal) -> Decimal:
    _check_log_arg(x)
    rscale = min(max(MIN_SIG_DIGITS - _ln_dweight(x), dscale(x), 0), MAX_DISPLAY_SCALE)
    with localcontext(context()):
        return checked(x.ln(), rscale)


def log(b: Decimal, x: Decimal) -> Decimal:
    _check_log_arg(b)
    _check_log_arg(x)
    rscale = MIN_SIG_DIGITS - (_ln_dweight(x) - _ln_dweight(b))
    rscale = min(max(rscale, dscale(b), dscale(x), 0), MAX_DISPLAY_SCALE)
    with localcontext(context()):
        lb = b.ln()
        if lb == 0:
            raise SqlError("22012", "division by zero")
        return checked(x.ln() / lb, rscale)


def log10(x: Decimal) -> Decimal:
    return log(Decimal(10), x)


def exp(x: Decimal) -> Decimal:
    val = float(x) * 0.434294481903252
    if val > MAX_DIGITS + 1:
        raise overflow()
    val = max(val, -float(MAX_DISPLAY_SCALE) * 3)
    rscale = min(max(MIN_SIG_DIGITS - int(val), dscale(x), 0), MAX_DISPLAY_SCALE)
    if val < -rscale - 1:
        return at_scale(0, rscale)
    with localcontext(context()):
        return checked(x.exp(), rscale)


def sqrt(x: Decimal) -> Decimal:
    if x < 0:
        raise SqlError("2201F", "cannot take square root of a negative number")
    w, _ = _weight_first(x)
    sweight = (w + 1) * DEC_DIGITS // 2 - 1
    rscale = min(max(MIN_SIG_DIGITS - sweight, dscale(x), 0), MAX_DISPLAY_SCALE)
    with localcontext(context()):
        return checked(x.sqrt(), rscale)


def min_scale(x: Decimal) -> Decimal:
    """The fewest fractional digits that represent x exactly (numeric_min_scale)."""
    if x == 0:
        return Decimal(0)
    e = x.normalize(context()).as_tuple().exponent
    assert isinstance(e, int)
    return Decimal(max(0, -e))


def trim_scale(x: Decimal) -> Decimal:
    """x without trailing fractional zeros (numeric_trim_scale)."""
    return x.quantize(Decimal(1).scaleb(-int(min_scale(x))), context=context())


def _int4(e: Decimal) -> int | None:
    if e != e.to_integral_value() or not -(2**31) <= e < 2**31:
        return None
    return int(e)


def power(b: Decimal, e: Decimal) -> Decimal:
    if b == 0 and e < 0:
        raise SqlError("2201F", "zero raised to a negative power is undefined")
    if b < 0 and e != e.to_integral_value():
        raise SqlError("2201F", "a negative number raised to a non-integer power yields a complex result")
    n = _int4(e)
    if n is not None:
        rscale = min(max(MIN_SIG_DIGITS, dscale(b), 0), MAX_DISPLAY_SCALE)
        if b == 0 or n == 0:
            return at_scale(1 if n == 0 else 0, rscale)
        import math

        mag = n * math.log10(abs(b))  # the result's decimal weight, roughly
        if mag > MAX_DIGITS + 1:
            raise overflow()
        if mag + 1 < -rscale:
            return at_scale(0, rscale)
        with localcontext(context()):
            return checked(b ** n, rscale)
    if b == 0:
        return at_scale(0, MIN_SIG_DIGITS)
    sign = -1 if b < 0 and e % 2 != 0 else 1  # unreachable for non-integers (checked above)
    with localcontext(context()):
        lnr = e * abs(b).ln()
        val = float(lnr) * 0.434294481903252
        if val > MAX_DIGITS + 1:
            raise overflow()
        rscale = min(max(MIN_SIG_DIGITS - int(val), dscale(b), dscale(e), 0), MAX_DISPLAY_SCALE)
        if val < -rscale - 1:
            return at_scale(0, rscale)
        return checked(sign * lnr.exp(), rscale)


def round_to(x: Decimal, n: int, truncate: bool = False) -> Decimal:
    """round(x, n) / trunc(x, n): half away from zero (or toward zero) at 10^-n, written with
    max(n, 0) fractional digits; 0 when n is beyond every digit."""
    n = max(min(n, MAX_DISPLAY_SCALE), -(2**31))
    scale = max(n, 0)
    if x == 0 or n < -x.adjusted() - 1:
        return at_scale(0, scale)
    # every digit of x and up to MAX_DISPLAY_SCALE zeros after them (round(1.5, 1000))
    prec = max(x.adjusted() + 2, 0) + MAX_DISPLAY_SCALE
    q = x.quantize(Decimal(1).scaleb(-n), context=context(ROUND_DOWN if truncate else ROUND_HALF_UP, prec))
    return checked(q, scale, prec)
