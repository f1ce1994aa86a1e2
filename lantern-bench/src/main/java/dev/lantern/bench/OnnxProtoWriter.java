package dev.lantern.bench;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A minimal protobuf writer, enough to spell an ONNX model by hand: varint and length-delimited
 * fields only (the only wire types ONNX's structural messages need). Messages nest by writing a
 * child writer's bytes as a length-delimited field. Avoids a protobuf dependency for one model.
 */
final class OnnxProtoWriter {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    /** Field {@code field} as a varint (wire type 0): int32, int64, enum, bool. */
    OnnxProtoWriter varint(int field, long value) {
        tag(field, 0);
        rawVarint(value);
        return this;
    }

    /** Field {@code field} as UTF-8 text (wire type 2). */
    OnnxProtoWriter string(int field, String value) {
        return bytes(field, value.getBytes(StandardCharsets.UTF_8));
    }

    /** Field {@code field} as an embedded message (wire type 2). */
    OnnxProtoWriter message(int field, OnnxProtoWriter child) {
        return bytes(field, child.toByteArray());
    }

    OnnxProtoWriter bytes(int field, byte[] b) {
        tag(field, 2);
        rawVarint(b.length);
        out.writeBytes(b);
        return this;
    }

    byte[] toByteArray() {
        return out.toByteArray();
    }

    private void tag(int field, int wireType) {
        rawVarint(((long) field << 3) | wireType);
    }

    private void rawVarint(long v) {
        while ((v & ~0x7FL) != 0) {
            out.write((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }
}
