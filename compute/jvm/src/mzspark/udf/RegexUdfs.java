package mzspark.udf;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.api.java.UDF3;

/**
 * Regular-expression functions that fail only their statement when java.util.regex runs out
 * of stack: Java's backtracking matcher recurses once per repetition of a group such as
 * (a|b)* (or of the N-th-match regexes of sql/regex.py), so a long subject throws
 * StackOverflowError, which Spark treats as fatal to the executor (in local mode: the
 * driver's JVM). Each UDF is the Spark built-in of the same name with that guard
 * (compute/render/regex.py renders every regex call with them): the same Java regex, the
 * same find loop, the same results. NULL when an argument is. A stack overflow becomes
 * [STACK_DEPTH_LIMIT_EXCEEDED] (PostgreSQL's 54001), a pattern Java cannot compile
 * [INVALID_REGULAR_EXPRESSION] (2201B), as compute/render/errors.py reports them.
 */
public final class RegexUdfs {
    private RegexUdfs() {}

    /** The error a statement fails with when matching overflows the stack. */
    public static final class StackDepthLimitExceeded extends RuntimeException {
        StackDepthLimitExceeded() {
            super("[STACK_DEPTH_LIMIT_EXCEEDED] stack depth limit exceeded while matching a regular expression");
        }
    }

    /** The error a statement fails with when a (computed) pattern does not compile. */
    public static final class InvalidRegularExpression extends RuntimeException {
        InvalidRegularExpression(String why) {
            super("[INVALID_REGULAR_EXPRESSION] invalid regular expression: " + why);
        }
    }

    /** The last pattern compiled, kept per UDF instance (one per task thread). */
    abstract static class Cached {
        private transient String lastSource;
        private transient Pattern last;

        final Pattern pattern(String p) {
            if (!p.equals(lastSource)) {
                try {
                    last = Pattern.compile(p);
                } catch (PatternSyntaxException e) {
                    throw new InvalidRegularExpression(e.getDescription());
                }
                lastSource = p;
            }
            return last;
        }
    }

    /** mz_regex_find(s, p): does p match somewhere in s (Spark's regexp_like / RLIKE). */
    public static final class Find extends Cached implements UDF2<String, String, Boolean> {
        @Override
        public Boolean call(String s, String p) {
            if (s == null || p == null) {
                return null;
            }
            try {
                return pattern(p).matcher(s).find();
            } catch (StackOverflowError e) {
                throw new StackDepthLimitExceeded();
            }
        }
    }

    /** mz_regexp_replace(s, p, r): every match of p in s replaced by r, in Java's replacement
     * syntax ($1, \$) (Spark's regexp_replace). */
    public static final class Replace extends Cached implements UDF3<String, String, String, String> {
        @Override
        public String call(String s, String p, String r) {
            if (s == null || p == null || r == null) {
                return null;
            }
            try {
                return pattern(p).matcher(s).replaceAll(r);
            } catch (StackOverflowError e) {
                throw new StackDepthLimitExceeded();
            }
        }
    }

    /** mz_regexp_extract(s, p, g): group g of the first match of p in s, '' when nothing
     * matches or the group took no part (Spark's regexp_extract). */
    public static final class Extract extends Cached implements UDF3<String, String, Integer, String> {
        @Override
        public String call(String s, String p, Integer g) {
            if (s == null || p == null || g == null) {
                return null;
            }
            try {
                Matcher m = pattern(p).matcher(s);
                if (!m.find()) {
                    return "";
                }
                String got = m.group(g);
                return got == null ? "" : got;
            } catch (StackOverflowError e) {
                throw new StackDepthLimitExceeded();
            }
        }
    }

    /** mz_regexp_extract_all(s, p, g): group g of every match of p in s, '' where the group
     * took no part (Spark's regexp_extract_all). */
    public static final class ExtractAll extends Cached implements UDF3<String, String, Integer, List<String>> {
        @Override
        public List<String> call(String s, String p, Integer g) {
            if (s == null || p == null || g == null) {
                return null;
            }
            try {
                Matcher m = pattern(p).matcher(s);
                List<String> out = new ArrayList<>();
                while (m.find()) {
                    String got = m.group(g);
                    out.add(got == null ? "" : got);
                }
                return out;
            } catch (StackOverflowError e) {
                throw new StackDepthLimitExceeded();
            }
        }
    }

    /** mz_regexp_count(s, p): how many matches of p the find loop meets in s (Spark's
     * regexp_count). */
    public static final class Count extends Cached implements UDF2<String, String, Integer> {
        @Override
        public Integer call(String s, String p) {
            if (s == null || p == null) {
                return null;
            }
            try {
                Matcher m = pattern(p).matcher(s);
                int n = 0;
                while (m.find()) {
                    n++;
                }
                return n;
            } catch (StackOverflowError e) {
                throw new StackDepthLimitExceeded();
            }
        }
    }

    /** mz_regexp_split(s, p): s split around the matches of p, trailing empty parts kept
     * (Spark's split(s, p, -1), Java's String.split(p, -1)). */
    public static final class Split extends Cached implements UDF2<String, String, List<String>> {
        @Override
        public List<String> call(String s, String p) {
            if (s == null || p == null) {
                return null;
            }
            try {
                return Arrays.asList(pattern(p).split(s, -1));
            } catch (StackOverflowError e) {
                throw new StackDepthLimitExceeded();
            }
        }
    }
}
