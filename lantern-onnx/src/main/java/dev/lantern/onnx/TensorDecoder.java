package dev.lantern.onnx;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Half;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.TensorProto;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Reads a TensorProto's values, as a {@link HostTensor} for folding or as a Lantern {@link Tensor} for a
 * weight. Every declared size is checked against the bytes actually present before anything is allocated,
 * so a model that claims a 10^12-element tensor in a few bytes is refused, not believed.
 */
final class TensorDecoder {
    private final ImportLimits limits;
    private final ExternalData external;

    TensorDecoder(ImportLimits limits, ExternalData external) {
        this.limits = limits;
        this.external = external;
    }

    /** The dims of {@code t}, checked: non-negative, rank and element count within the limits. */
    long[] dims(TensorProto t) {
        long[] dims = new long[t.getDimsCount()];
        for (int i = 0; i < dims.length; i++) {
            dims[i] = t.getDims(i);
        }
        checkShape(dims, limits, "tensor '" + t.getName() + "'");
        return dims;
    }

    static long checkShape(long[] dims, ImportLimits limits, String what) {
        if (dims.length > limits.maxRank()) {
            throw new OnnxImportException(what + " has rank " + dims.length + ", more than the limit " + limits.maxRank());
        }
        long n = 1;
        for (long d : dims) {
            if (d < 0) {
                throw new OnnxImportException(what + " has a negative dimension: " + Arrays.toString(dims));
            }
            n = d == 0 ? 0 : (n > limits.maxElements() / d ? -1 : n * d);
            if (n < 0) {
                throw new OnnxImportException(what + " has shape " + Arrays.toString(dims) + ", more than " + limits.maxElements() + " elements");
            }
        }
        return n;
    }

    /** The values of {@code t} on the host; refused past {@link ImportLimits#maxFoldElements()}. */
    HostTensor host(TensorProto t) {
        long[] dims = dims(t);
        long n = HostTensor.numel(dims);
        if (n > limits.maxFoldElements()) {
            throw new OnnxImportException("tensor '" + t.getName() + "' " + Arrays.toString(dims) + " is too large to evaluate at import time");
        }
        int type = t.getDataType();
        ByteBuffer raw = bytes(t, n); // checks the declared size against the data before the array below
        double[] v = new double[(int) n];
        if (raw != null) {
            for (int i = 0; i < v.length; i++) {
                v[i] = readRaw(raw, type, i);
            }
        } else {
            for (int i = 0; i < v.length; i++) {
                v[i] = readTyped(t, type, i);
            }
        }
        return new HostTensor(type, dims, v);
    }

    /** The values of {@code t} as a Lantern tensor of its runtime dtype. */
    Tensor tensor(TensorProto t) {
        long[] dims = dims(t);
        long n = HostTensor.numel(dims);
        DType d = OnnxTypes.dtype(t.getDataType());
        if (d == null) {
            throw new OnnxImportException("tensor '" + t.getName() + "' has element type " + OnnxTypes.name(t.getDataType()) + ", which Lantern cannot hold at run time");
        }
        ByteBuffer raw = bytes(t, n); // checks the declared size against the data before allocating
        Shape shape = Shape.of(Arrays.stream(dims).mapToInt(x -> (int) x).toArray());
        Tensor out = Tensor.allocate(d, shape);
        if (raw != null) {
            MemorySegment.copy(MemorySegment.ofBuffer(raw), 0, out.segment(), 0, n * d.bytes());
        } else {
            for (long i = 0; i < n; i++) {
                out.set(i, (float) readTyped(t, t.getDataType(), (int) i));
            }
        }
        return out;
    }

    /** The little-endian bytes of {@code t} (raw or external), checked to hold exactly n elements; null for typed fields. */
    private ByteBuffer bytes(TensorProto t, long n) {
        int type = t.getDataType();
        int size = OnnxTypes.size(type);
        if (size == 0) {
            throw new OnnxImportException("tensor '" + t.getName() + "' has element type " + OnnxTypes.name(type) + ", which Lantern does not read");
        }
        if (t.hasSegment()) {
            throw new OnnxImportException("tensor '" + t.getName() + "' is segmented, which Lantern does not read");
        }
        long want = n * size;
        ByteBuffer b;
        if (t.getDataLocation() == TensorProto.DataLocation.EXTERNAL) {
            b = external.read(t, want);
        } else if (t.hasRawData()) {
            if (t.getRawData().size() != want) {
                throw new OnnxImportException("tensor '" + t.getName() + "' declares " + n + " " + OnnxTypes.name(type)
                        + " elements (" + want + " bytes) but holds " + t.getRawData().size() + " bytes");
            }
            b = t.getRawData().asReadOnlyByteBuffer();
        } else {
            long have = typedCount(t, type);
            if (have != n) {
                throw new OnnxImportException("tensor '" + t.getName() + "' declares " + n + " elements but holds " + have);
            }
            return null;
        }
        return b.order(ByteOrder.LITTLE_ENDIAN);
    }

    private static long typedCount(TensorProto t, int type) {
        return switch (type) {
            case OnnxTypes.FLOAT -> t.getFloatDataCount();
            case OnnxTypes.DOUBLE -> t.getDoubleDataCount();
            case OnnxTypes.INT64 -> t.getInt64DataCount();
            case OnnxTypes.UINT32, OnnxTypes.UINT64 -> t.getUint64DataCount();
            default -> t.getInt32DataCount();
        };
    }

    private static double readTyped(TensorProto t, int type, int i) {
        return switch (type) {
            case OnnxTypes.FLOAT -> t.getFloatData(i);
            case OnnxTypes.DOUBLE -> t.getDoubleData(i);
            case OnnxTypes.INT64 -> t.getInt64Data(i);
            case OnnxTypes.UINT32, OnnxTypes.UINT64 -> t.getUint64Data(i);
            case OnnxTypes.FLOAT16 -> Half.fromF16((short) t.getInt32Data(i));
            case OnnxTypes.BFLOAT16 -> Half.fromBf16((short) t.getInt32Data(i));
            case OnnxTypes.BOOL -> t.getInt32Data(i) != 0 ? 1 : 0;
            default -> t.getInt32Data(i);
        };
    }

    private static double readRaw(ByteBuffer b, int type, int i) {
        return switch (type) {
            case OnnxTypes.FLOAT -> b.getFloat(4 * i);
            case OnnxTypes.DOUBLE -> b.getDouble(8 * i);
            case OnnxTypes.INT64 -> b.getLong(8 * i);
            case OnnxTypes.UINT64 -> b.getLong(8 * i);
            case OnnxTypes.INT32 -> b.getInt(4 * i);
            case OnnxTypes.UINT32 -> Integer.toUnsignedLong(b.getInt(4 * i));
            case OnnxTypes.INT16 -> b.getShort(2 * i);
            case OnnxTypes.UINT16 -> Short.toUnsignedInt(b.getShort(2 * i));
            case OnnxTypes.FLOAT16 -> Half.fromF16(b.getShort(2 * i));
            case OnnxTypes.BFLOAT16 -> Half.fromBf16(b.getShort(2 * i));
            case OnnxTypes.INT8 -> b.get(i);
            case OnnxTypes.UINT8 -> Byte.toUnsignedInt(b.get(i));
            case OnnxTypes.BOOL -> b.get(i) != 0 ? 1 : 0;
            default -> throw new OnnxImportException("cannot read element type " + OnnxTypes.name(type));
        };
    }
}
