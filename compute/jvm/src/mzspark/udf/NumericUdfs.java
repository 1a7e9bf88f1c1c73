package mzspark.udf;

import java.math.BigDecimal;

import org.apache.spark.sql.api.java.UDF3;
import org.apache.spark.sql.api.java.UDF4;

/**
 * Spark Java UDFs over NumericOps (each registered class names its UDF interface itself:
 * Spark's registerJava looks only at a class's own interfaces), called as compute/render/numeric_udfs.py renders them:
 * mz_numeric_NAME(a[, b], S, keep) returns the result's text when its digits fit Spark's
 * decimal(38, S), else an error marker (U+0001 "[SQLSTATE] message") the caller raises only
 * where the value is used. NULL when an argument is. keep is one character per argument:
 * '1' when the value carries its display scale (numeric(p, s)), '0' when trailing zeros are
 * storage's (they are dropped, as Materialize prints the value).
 */
public final class NumericUdfs {
    static final String ERR = "\u0001";

    private NumericUdfs() {}

    static BigDecimal decimal(Object v) {
        if (v instanceof BigDecimal d) {
            return d;
        }
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return BigDecimal.valueOf(((Number) v).longValue());
        }
        if (v instanceof String s) {
            return new BigDecimal(s);
        }
        throw new IllegalArgumentException("not a numeric argument: " + v.getClass().getName());
    }

    /** An argument's value; an unconstrained numeric's trailing zeros are dropped. */
    static BigDecimal arg(Object v, String keep, int i) {
        BigDecimal d = decimal(v);
        if (keep.charAt(i) == '1' || d.signum() == 0) {
            return d;
        }
        BigDecimal t = d.stripTrailingZeros();
        return t.scale() < 0 ? t.setScale(0) : t;
    }

    /** v's text when its digits (trailing zeros aside) fit decimal(38, scale), else ERR + 0A000. */
    static String fit(BigDecimal v, int scale) {
        BigDecimal t = v.signum() == 0 ? BigDecimal.ZERO : v.stripTrailingZeros();
        if (t.scale() > scale || (t.signum() != 0 && NumericOps.adjusted(t) >= 38 - scale)) {
            return ERR + "[0A000] numeric result " + t.toPlainString() + " in a computation keeping " + (38 - scale)
                    + " integer and " + scale + " fractional digits (Spark's decimal(38," + scale + "))";
        }
        return v.toPlainString();
    }

    static String error(NumericOps.NumericError e) {
        return ERR + "[" + e.sqlstate + "] " + e.getMessage();
    }

    /** mz_numeric_div(a, b, S, keep): a / b (also avg's sum / count, b an integer). */
    public static final class Div implements UDF4<Object, Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String call(Object a, Object b, Integer scale, String keep) {
            if (a == null || b == null) {
                return null;
            }
            try {
                return fit(NumericOps.div(arg(a, keep, 0), arg(b, keep, 1)), scale);
            } catch (NumericOps.NumericError e) {
                return error(e);
            }
        }
    }

    /** mz_numeric_mul(a, b, S, keep): a * b rounded half away from zero to S. */
    public static final class Mul implements UDF4<Object, Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        public String call(Object a, Object b, Integer scale, String keep) {
            if (a == null || b == null) {
                return null;
            }
            try {
                return fit(NumericOps.mul(arg(a, keep, 0), arg(b, keep, 1), scale), scale);
            } catch (NumericOps.NumericError e) {
                return error(e);
            }
        }
    }

    /** mz_numeric_round(x, n, S, keep) / mz_numeric_trunc: x at 10^-n, n an integer. */
    public static class Round implements UDF4<Object, Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        boolean truncate() {
            return false;
        }

        @Override
        public String call(Object x, Object n, Integer scale, String keep) {
            if (x == null || n == null) {
                return null;
            }
            try {
                return fit(NumericOps.roundTo(arg(x, keep, 0), ((Number) n).longValue(), truncate()), scale);
            } catch (NumericOps.NumericError e) {
                return error(e);
            }
        }
    }

    public static final class Trunc extends Round implements UDF4<Object, Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        boolean truncate() {
            return true;
        }
    }

    /** A one-argument function: mz_numeric_NAME(x, S, keep). */
    abstract static class Unary implements UDF3<Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        abstract BigDecimal apply(BigDecimal x);

        @Override
        public String call(Object x, Integer scale, String keep) {
            if (x == null) {
                return null;
            }
            try {
                return fit(apply(arg(x, keep, 0)), scale);
            } catch (NumericOps.NumericError e) {
                return error(e);
            }
        }
    }

    public static final class Sqrt extends Unary implements UDF3<Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        BigDecimal apply(BigDecimal x) {
            return NumericOps.sqrt(x);
        }
    }

    public static final class MinScale extends Unary implements UDF3<Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        BigDecimal apply(BigDecimal x) {
            return BigDecimal.valueOf(NumericOps.minScale(x));
        }
    }

    public static final class TrimScale extends Unary implements UDF3<Object, Integer, String, String> {
        private static final long serialVersionUID = 1L;

        @Override
        BigDecimal apply(BigDecimal x) {
            return NumericOps.trimScale(x);
        }
    }
}
