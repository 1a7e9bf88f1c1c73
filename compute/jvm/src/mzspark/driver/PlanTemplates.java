package mzspark.driver;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.trees.Origin;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.Row;

import scala.Option;
import scala.PartialFunction;
import scala.jdk.javaapi.CollectionConverters;
import scala.jdk.javaapi.FunctionConverters;

/**
 * Analysed plans of generated SQL texts reused across bound parameter values
 * (compute.render.templates).
 *
 * <p>A text's parameter values are spans between an open and a close marker (bracketed
 * comments, which Spark's parser skips); each span is one literal expression, e.g.
 * {@code CAST(5 AS int)}, holding exactly one {@link Literal}. Two texts equal outside their
 * spans, whose spans parse to the same expressions but for their literals' values (same
 * types), analyse to the same plan but for those literals:
 *
 * <pre>  analyze(text[v']) = analyze(text[v]) with the span literals v replaced by v'</pre>
 *
 * <p>So the first execution keeps its analysed plan (the template), keyed by the session,
 * the text outside the spans and the spans' expressions with their literals made NULL of
 * their type; later ones parse only their spans, substitute the new literals (found in the
 * template by identity: the literals whose origin lies in the span) and skip parsing and
 * analysis. The analysis checks still run on the substituted plan; optimization and planning
 * run as for any Dataset. Every view a generated text reads has a name no other view ever
 * had (a new name per batch set, per state), so a text's meaning never changes while its
 * key stays the same. Templates are kept least recently used first, at most CAPACITY.
 */
public final class PlanTemplates {
    private PlanTemplates() {}

    static final int CAPACITY = 256;

    private static final AtomicLong HITS = new AtomicLong();
    private static final AtomicLong MISSES = new AtomicLong();

    /** A kept analysed plan and, per span, the template's literal instances in it. */
    private record Template(LogicalPlan plan, List<List<Expression>> slots) {}

    private static final Map<List<Object>, Template> TEMPLATES =
        new LinkedHashMap<List<Object>, Template>(16, 0.75f, true) {
            private static final long serialVersionUID = 1L;

            @Override
            protected boolean removeEldestEntry(Map.Entry<List<Object>, Template> eldest) {
                return size() > CAPACITY;
            }
        };

    /** Templates used / texts analysed in full (with spans) since the JVM started. */
    public static long hits() {
        return HITS.get();
    }

    public static long misses() {
        return MISSES.get();
    }

    /** Drop every template (a test's or a restart's clean slate). */
    public static void clear() {
        synchronized (TEMPLATES) {
            TEMPLATES.clear();
        }
    }

    /**
     * {@code session.sql(text)}; from a template when one fits. {@code open} / {@code close}:
     * the span markers.
     */
    public static Dataset<Row> frame(SparkSession session, String text, String open, String close) {
        List<int[]> spans = spans(text, open, close);
        if (spans == null || spans.isEmpty()) {
            return session.sql(text);
        }
        List<Literal> values = new ArrayList<>(spans.size());
        List<Object> key = new ArrayList<>(spans.size() + 2);
        key.add(session.sessionUUID());
        StringBuilder outside = new StringBuilder(text.length());
        int at = 0;
        for (int[] s : spans) {
            outside.append(text, at, s[0]).append('\u0000');
            at = s[1];
            Expression e;
            try {
                e = session.sessionState().sqlParser().parseExpression(text.substring(s[0], s[1]));
            } catch (ParseException err) {
                return session.sql(text);  // (fails as the whole text does)
            }
            List<Literal> lits = new ArrayList<>();
            literals(e, lits);
            if (lits.size() != 1) {
                return session.sql(text);
            }
            Literal v = lits.get(0);
            values.add(v);
            key.add(replace(e, v, new Literal(null, v.dataType())));
        }
        outside.append(text, at, text.length());
        key.add(1, outside.toString());
        Template t;
        synchronized (TEMPLATES) {
            t = TEMPLATES.get(key);
        }
        if (t != null) {
            IdentityHashMap<Expression, Expression> sub = new IdentityHashMap<>();
            for (int i = 0; i < values.size(); i++) {
                for (Expression old : t.slots().get(i)) {
                    sub.put(old, values.get(i));
                }
            }
            LogicalPlan plan = t.plan().transformAllExpressionsWithSubqueries(
                pf(e -> sub.getOrDefault(e, e)));
            session.sessionState().analyzer().checkAnalysis(plan);
            plan.setAnalyzed();
            HITS.incrementAndGet();
            return Dataset.ofRows(session, plan);
        }
        Dataset<Row> df = session.sql(text);
        LogicalPlan analyzed = df.queryExecution().analyzed();
        List<List<Expression>> slots = slots(analyzed, text, spans);
        if (slots != null) {
            synchronized (TEMPLATES) {
                TEMPLATES.put(key, new Template(analyzed, slots));
            }
        }
        MISSES.incrementAndGet();
        return df;
    }

    /** The [start, end) of each span's contents; null when the markers do not pair up. */
    static List<int[]> spans(String text, String open, String close) {
        List<int[]> out = new ArrayList<>();
        int at = 0;
        while (true) {
            int o = text.indexOf(open, at);
            if (o < 0) {
                return text.indexOf(close, at) < 0 ? out : null;
            }
            int c = text.indexOf(close, o + open.length());
            if (c < 0) {
                return null;
            }
            out.add(new int[] {o + open.length(), c});
            at = c + close.length();
        }
    }

    /** Per span, the distinct literal instances of {@code plan} whose origin (in {@code text})
     * starts in it; null when a span has none. */
    static List<List<Expression>> slots(LogicalPlan plan, String text, List<int[]> spans) {
        List<List<Expression>> out = new ArrayList<>(spans.size());
        for (int i = 0; i < spans.size(); i++) {
            out.add(new ArrayList<>());
        }
        IdentityHashMap<Expression, Boolean> seen = new IdentityHashMap<>();
        plan.transformAllExpressionsWithSubqueries(pf(e -> {
            if (e instanceof Literal && !seen.containsKey(e)) {
                seen.put(e, true);
                Origin o = e.origin();
                Option<String> sql = o.sqlText();
                Option<Object> start = o.startIndex();
                if (sql.isDefined() && sql.get().equals(text) && start.isDefined()) {
                    int s = (Integer) start.get();
                    for (int i = 0; i < spans.size(); i++) {
                        if (s >= spans.get(i)[0] && s < spans.get(i)[1]) {
                            out.get(i).add(e);
                        }
                    }
                }
            }
            return e;
        }));
        for (List<Expression> s : out) {
            if (s.isEmpty()) {
                return null;
            }
        }
        return out;
    }

    private static void literals(Expression e, List<Literal> out) {
        if (e instanceof Literal l) {
            out.add(l);
        }
        for (Expression c : CollectionConverters.asJava(e.children())) {
            literals(c, out);
        }
    }

    private static Expression replace(Expression e, Expression from, Expression to) {
        return e.transformUp(pf(x -> x == from ? to : x));
    }

    private static PartialFunction<Expression, Expression> pf(java.util.function.Function<Expression, Expression> f) {
        return PartialFunction.fromFunction(FunctionConverters.asScalaFromFunction(f));
    }
}
