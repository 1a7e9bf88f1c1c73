package mzspark.driver;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * Driver-side helpers called through py4j (compute.render.spark):
 * one call returns what would otherwise take a py4j call per row or per element.
 */
public final class LocalRows {
    private LocalRows() {}

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
