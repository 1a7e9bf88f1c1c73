package mzspark.udf;

import java.util.regex.Pattern;

import org.apache.spark.sql.api.java.UDF2;

/**
 * Regular-expression matching that fails only its statement when java.util.regex runs out of
 * stack: Java's backtracking matcher recurses once per repetition of a group such as
 * (a|b)*, so a long subject throws StackOverflowError, which Spark treats as fatal to the
 * executor (in local mode: the driver's JVM). Called as compute/render/scalar.py renders it:
 * mz_regex_find(s, p) = does Java regex p match somewhere in s (Spark's regexp_like); NULL
 * when an argument is. A stack overflow becomes [STACK_DEPTH_LIMIT_EXCEEDED], which
 * compute/render/errors.py reports as PostgreSQL's 54001.
 */
public final class RegexUdfs {
    private RegexUdfs() {}

    /** The error a statement fails with when matching overflows the stack. */
    public static final class StackDepthLimitExceeded extends RuntimeException {
        StackDepthLimitExceeded() {
            super("[STACK_DEPTH_LIMIT_EXCEEDED] stack depth limit exceeded while matching a regular expression");
        }
    }

    /** mz_regex_find(s, p): Pattern.compile(p).matcher(s).find(), the last pattern compiled once. */
    public static final class Find implements UDF2<String, String, Boolean> {
        private transient String lastSource;
        private transient Pattern last;

        @Override
        public Boolean call(String s, String p) {
            if (s == null || p == null) {
                return null;
            }
            if (!p.equals(lastSource)) {
                last = Pattern.compile(p);
                lastSource = p;
            }
            try {
                return last.matcher(s).find();
            } catch (StackOverflowError e) {
                throw new StackDepthLimitExceeded();
            }
        }
    }
}
