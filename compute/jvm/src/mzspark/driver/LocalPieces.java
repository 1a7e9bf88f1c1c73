package mzspark.driver;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.catalog.TemporaryViewRelation;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.arrow.ArrowConverters$;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.ArraySeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * A maintained step's small pieces held as local relations (compute.render.arrangement
 * store_local), made in the driver JVM in one py4j call each, with no Dataset analyzed for them.
 *
 * <p>{@code store} is {@code df.collectAsList()} + {@code createDataFrame(rows, df.schema)} +
 * {@code createOrReplaceGlobalTempView}: the same rows in a local relation of the same schema
 * under the view name, but the rows are taken from the optimized plan when the optimizer
 * already folded it into a local relation (no physical planning), else from
 * {@code executedPlan().executeCollect()} (no SQL execution wrapper around it: ~240 analyzer /
 * optimizer rule runs a piece), and kept as Spark's internal rows (no conversion to external
 * rows and back, no analysis of a new Dataset).
 */
public final class LocalPieces {
    private LocalPieces() {}

    /**
     * Compute {@code df}; if it has at most {@code limit} rows, register them as the global
     * temporary view {@code view} (a new name; a local relation of {@code df}'s schema) and
     * return their count, followed by {@code ;} and the values of the bigint column
     * {@code hashField} joined by commas when asked ({@code hashField} not null) and none is
     * null; null (nothing registered) when it has more rows.
     */
    public static String store(SparkSession session, Dataset<?> df, int limit, String hashField, String view) {
        QueryExecution qe = df.queryExecution();
        StructType schema = df.schema();
        Seq<InternalRow> rows = session.withActive(() -> rows(qe));
        if (rows.size() > limit) {
            return null;
        }
        Views.registerPlan(session, relation(schema, rows), view);
        StringBuilder b = new StringBuilder().append(rows.size());
        if (hashField != null) {
            String hashes = longs(schema, rows, hashField);
            if (hashes != null) {
                b.append(';').append(hashes);
            }
        }
        return b.toString();
    }

    /**
     * A Dataset of the local view {@code view}'s rows without its last column (a step's output
     * without its key hash): a local relation of the other columns.
     */
    public static Dataset<?> withoutLast(SparkSession session, String view) {
        LocalRelation rel = local(session, view);
        if (rel == null) {
            return null;
        }
        StructType schema = rel.schema();
        StructField[] fields = schema.fields();
        StructField[] kept = java.util.Arrays.copyOf(fields, fields.length - 1);
        List<InternalRow> out = new ArrayList<>(rel.data().size());
        Iterator<InternalRow> it = rel.data().iterator();
        while (it.hasNext()) {
            InternalRow r = it.next();
            Object[] values = new Object[kept.length];
            for (int i = 0; i < kept.length; i++) {
                values[i] = r.isNullAt(i) ? null : r.get(i, kept[i].dataType());
            }
            out.add(new GenericInternalRow(values));
        }
        return Dataset.ofRows(session, relation(new StructType(kept), CollectionConverters.asScala(out).toSeq()));
    }

    /**
     * {@code df}'s rows as compute.render.spark.collect_local converts them when its analyzed or
     * optimized plan is a local relation (no physical planning, no Spark job): its schema's
     * JSON (UTF-8), then its Arrow record batches, each framed by its length (4 bytes,
     * big-endian); else null.
     */
    public static byte[] arrow(Dataset<?> df, String timeZone) {
        QueryExecution qe = df.queryExecution();
        LogicalPlan plan = qe.analyzed();
        if (!(plan instanceof LocalRelation)) {
            plan = df.sparkSession().withActive(qe::optimizedPlan);
        }
        if (!(plan instanceof LocalRelation)) {
            return null;
        }
        // (no large variable-width types, as compute.render.spark.collect_arrow)
        Iterator<byte[]> batches = ArrowConverters$.MODULE$.toBatchIterator(
            ((LocalRelation) plan).data().iterator(), df.schema(), 1L << 30, timeZone, true, false, null);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] schema = df.schema().json().getBytes(StandardCharsets.UTF_8);
        out.write(ByteBuffer.allocate(4).putInt(schema.length).array(), 0, 4);
        out.write(schema, 0, schema.length);
        while (batches.hasNext()) {
            byte[] b = batches.next();
            out.write(ByteBuffer.allocate(4).putInt(b.length).array(), 0, 4);
            out.write(b, 0, b.length);
        }
        return out.toByteArray();
    }

    private static Seq<InternalRow> rows(QueryExecution qe) {
        LogicalPlan optimized = qe.optimizedPlan();
        if (optimized instanceof LocalRelation) {
            return ((LocalRelation) optimized).data();
        }
        return ArraySeq.unsafeWrapArray(qe.executedPlan().executeCollect());
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static LocalRelation relation(StructType schema, Seq<InternalRow> rows) {
        Seq<Attribute> output = (Seq) DataTypeUtils.toAttributes(schema);
        return new LocalRelation(output, rows, false, Option.empty());
    }

    /** The local relation registered as the global temporary view {@code view}, or null. */
    private static LocalRelation local(SparkSession session, String view) {
        Option<TemporaryViewRelation> raw = session.sessionState().catalog().getRawGlobalTempView(view);
        if (raw.isEmpty() || raw.get().plan().isEmpty()) {
            return null;
        }
        LogicalPlan plan = raw.get().plan().get();
        return plan instanceof LocalRelation ? (LocalRelation) plan : null;
    }

    private static String longs(StructType schema, Seq<InternalRow> rows, String field) {
        int index = schema.fieldIndex(field);
        if (!schema.fields()[index].dataType().equals(DataTypes.LongType)) {
            return null;
        }
        StringBuilder b = new StringBuilder(rows.size() * 20);
        Iterator<InternalRow> it = rows.iterator();
        boolean first = true;
        while (it.hasNext()) {
            InternalRow r = it.next();
            if (r.isNullAt(index)) {
                return null;
            }
            if (!first) {
                b.append(',');
            }
            first = false;
            b.append(r.getLong(index));
        }
        return b.toString();
    }
}
