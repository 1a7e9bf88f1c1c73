package mzspark.driver;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.arrow.ArrowConverters$;

import scala.jdk.javaapi.CollectionConverters;

/**
 * Driver-side helpers called through py4j (compute.render.arrangement, compute.render.spark):
 * one call returns what would otherwise take a py4j call per row or per element.
 */
public final class LocalRows {
    private LocalRows() {}

    /**
     * The column named {@code field} of {@code rows} (rows with a schema, as collected) as
     * decimal text joined by commas, or null when a value is not a (non-null) long.
     */
    public static String longs(List<Row> rows, String field) {
        StringBuilder b = new StringBuilder(rows.size() * 20);
        int index = rows.isEmpty() ? -1 : rows.get(0).fieldIndex(field);
        for (int i = 0; i < rows.size(); i++) {
            Object v = rows.get(i).get(index);
            if (!(v instanceof Long)) {
                return null;
            }
            if (i > 0) {
                b.append(',');
            }
            b.append(((Long) v).longValue());
        }
        return b.toString();
    }

    /** The byte arrays {@code blobs} in one array, each preceded by its length (4 bytes, big-endian). */
    public static byte[] framed(byte[][] blobs) {
        int total = 0;
        for (byte[] b : blobs) {
            total += 4 + b.length;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(total);
        for (byte[] b : blobs) {
            out.write(ByteBuffer.allocate(4).putInt(b.length).array(), 0, 4);
            out.write(b, 0, b.length);
        }
        return out.toByteArray();
    }

    /**
     * The rows of {@code df} when Spark folded its plan into a local relation (its executed
     * plan a LocalTableScan: no Spark job), as compute.render.spark.collect_local converts
     * them: the schema's JSON (UTF-8, after its length), then the Arrow record batches framed
     * as {@link #framed}; null for any other plan.
     */
    public static byte[] localArrow(Dataset<Row> df) {
        SparkPlan plan = df.queryExecution().executedPlan();
        if (!plan.nodeName().equals("LocalTableScan")) {
            return null;
        }
        InternalRow[] rows = plan.executeCollect();
        scala.collection.Iterator<byte[]> batches = ArrowConverters$.MODULE$.toBatchIterator(
            CollectionConverters.asScala(Arrays.asList(rows).iterator()), df.schema(), 1L << 30, "UTC", true, false, null);
        byte[] schema = df.schema().json().getBytes(StandardCharsets.UTF_8);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(ByteBuffer.allocate(4).putInt(schema.length).array(), 0, 4);
        out.write(schema, 0, schema.length);
        while (batches.hasNext()) {
            byte[] b = batches.next();
            out.write(ByteBuffer.allocate(4).putInt(b.length).array(), 0, 4);
            out.write(b, 0, b.length);
        }
        return out.toByteArray();
    }
}
