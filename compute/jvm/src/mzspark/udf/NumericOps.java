package mzspark.udf;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * PostgreSQL's numeric division, product, round / trunc and sqrt, value for value as
 * sql/numeric_ops.py computes them (the planner folds constants with that module; the two
 * are compared with PostgreSQL 15 by tests/integration/test_numeric_jvm_vs_postgres.py).
 *
 * <p>a / b is the exact quotient rounded half away from zero to select_div_scale(a, b) =
 * max(16 - 4 * qweight, dscale(a), dscale(b), 0), qweight the base-10000 weight of the
 * quotient (less one when a's first base-10000 digit is at most b's). A result of more than
 * 39 significant digits (Materialize's numeric precision) is 22003, never other digits.
 */
public final class NumericOps {
    static final int MIN_SIG_DIGITS = 16;
    static final int MAX_DISPLAY_SCALE = 1000;
    static final int DEC_DIGITS = 4;
    static final int MAX_DIGITS = 39;
    /** numeric_ops' working precision: a result of more digits is 22003 there too. */
    static final int PREC = 160;
    private static final MathContext SQRT_CONTEXT = new MathContext(PREC, RoundingMode.HALF_EVEN);

    private NumericOps() {}

    /** A failure with its SQLSTATE, returned to Spark as an error-marked string. */
    public static final class NumericError extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String sqlstate;

        NumericError(String sqlstate, String message) {
            super(message, null, false, false);
            this.sqlstate = sqlstate;
        }
    }

    static NumericError overflow() {
        return new NumericError("22003", "value overflows numeric format");
    }

    static int dscale(BigDecimal v) {
        return Math.max(0, v.scale());
    }

    /** The decimal exponent of v's first digit (Python's Decimal.adjusted), v nonzero. */
    static int adjusted(BigDecimal v) {
        return v.precision() - v.scale() - 1;
    }

    /** The base-10000 weight of |v| (0 for zero). */
    static int weight(BigDecimal v) {
        return v.signum() == 0 ? 0 : Math.floorDiv(adjusted(v), DEC_DIGITS);
    }

    /** The first base-10000 digit of |v| (0 for zero). */
    static int firstDigit(BigDecimal v) {
        if (v.signum() == 0) {
            return 0;
        }
        return v.abs().scaleByPowerOfTen(-DEC_DIGITS * weight(v)).intValue();
    }

    static int selectDivScale(BigDecimal a, BigDecimal b) {
        int qweight = weight(a) - weight(b) - (firstDigit(a) <= firstDigit(b) ? 1 : 0);
        long s = Math.max(Math.max((long) MIN_SIG_DIGITS - (long) qweight * DEC_DIGITS, dscale(a)), Math.max(dscale(b), 0));
        return (int) Math.min(s, MAX_DISPLAY_SCALE);
    }

    /** v (already at its scale) unless it has more digits than numeric_ops keeps (22003) or
     * more than MAX_DIGITS significant ones (22003). */
    static BigDecimal checkedDigits(BigDecimal q) {
        if (q.precision() > PREC) {
            throw overflow();
        }
        if (q.signum() != 0 && q.stripTrailingZeros().precision() > MAX_DIGITS) {
            throw tooManyDigits();
        }
        return q;
    }

    static NumericError tooManyDigits() {
        return new NumericError("22003", "numeric result has more than " + MAX_DIGITS
                + " significant digits (Materialize's numeric precision)");
    }

    /** v rounded half away from zero to `scale` (numeric_ops.checked). */
    static BigDecimal checked(BigDecimal v, int scale) {
        return checkedDigits(v.setScale(scale, RoundingMode.HALF_UP));
    }

    public static BigDecimal div(BigDecimal a, BigDecimal b) {
        if (b.signum() == 0) {
            throw new NumericError("22012", "division by zero");
        }
        return checkedDigits(a.divide(b, selectDivScale(a, b), RoundingMode.HALF_UP));
    }

    /** a * b rounded half away from zero to `scale`. */
    public static BigDecimal mul(BigDecimal a, BigDecimal b, int scale) {
        return checked(a.multiply(b), scale);
    }

    /** round(x, n) / trunc(x, n): half away from zero (or toward zero) at 10^-n, written with
     * max(n, 0) fractional digits; 0 when n is beyond every digit. */
    public static BigDecimal roundTo(BigDecimal x, long n0, boolean truncate) {
        long n = Math.max(Math.min(n0, MAX_DISPLAY_SCALE), Integer.MIN_VALUE);
        int scale = (int) Math.max(n, 0);
        if (x.signum() == 0 || n < -(long) adjusted(x) - 1) {
            return BigDecimal.ZERO.setScale(scale);
        }
        // exact: x's digits and at most MAX_DISPLAY_SCALE zeros (no working precision applies)
        BigDecimal q = x.setScale((int) n, truncate ? RoundingMode.DOWN : RoundingMode.HALF_UP).setScale(scale);
        if (q.signum() != 0 && q.stripTrailingZeros().precision() > MAX_DIGITS) {
            throw tooManyDigits();
        }
        return q;
    }

    public static BigDecimal sqrt(BigDecimal x) {
        if (x.signum() < 0) {
            throw new NumericError("2201F", "cannot take square root of a negative number");
        }
        int sweight = (weight(x) + 1) * DEC_DIGITS / 2 - 1;
        int rscale = Math.min(Math.max(Math.max(MIN_SIG_DIGITS - sweight, dscale(x)), 0), MAX_DISPLAY_SCALE);
        // correctly rounded to PREC digits as Python's Decimal.sqrt, then rounded to rscale
        return checked(x.sqrt(SQRT_CONTEXT), rscale);
    }

    /** The fewest fractional digits that represent x exactly (numeric_min_scale). */
    public static int minScale(BigDecimal x) {
        return x.signum() == 0 ? 0 : Math.max(0, x.stripTrailingZeros().scale());
    }

    /** x without trailing fractional zeros (numeric_trim_scale). */
    public static BigDecimal trimScale(BigDecimal x) {
        return x.setScale(minScale(x));
    }
}
