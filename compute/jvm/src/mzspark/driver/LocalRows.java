package mzspark.driver;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.List;

import org.apache.spark.sql.Row;

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
}
