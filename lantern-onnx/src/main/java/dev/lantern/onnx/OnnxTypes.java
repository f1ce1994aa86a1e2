package dev.lantern.onnx;

import dev.lantern.ir.DType;

/** ONNX element types (TensorProto.DataType numbers): their sizes, names and Lantern dtypes. */
final class OnnxTypes {
    static final int FLOAT = 1;
    static final int UINT8 = 2;
    static final int INT8 = 3;
    static final int UINT16 = 4;
    static final int INT16 = 5;
    static final int INT32 = 6;
    static final int INT64 = 7;
    static final int BOOL = 9;
    static final int FLOAT16 = 10;
    static final int DOUBLE = 11;
    static final int UINT32 = 12;
    static final int UINT64 = 13;
    static final int BFLOAT16 = 16;

    private OnnxTypes() {}

    /** Bytes per element, or 0 for types Lantern does not read (strings, complex, 4-bit and 8-bit floats). */
    static int size(int t) {
        return switch (t) {
            case UINT8, INT8, BOOL -> 1;
            case UINT16, INT16, FLOAT16, BFLOAT16 -> 2;
            case FLOAT, INT32, UINT32 -> 4;
            case INT64, DOUBLE, UINT64 -> 8;
            default -> 0;
        };
    }

    static boolean isFloat(int t) {
        return t == FLOAT || t == FLOAT16 || t == BFLOAT16 || t == DOUBLE;
    }

    /** The Lantern dtype of a runtime tensor of ONNX type {@code t}, or {@code null} when the IR has none. */
    static DType dtype(int t) {
        return switch (t) {
            case FLOAT -> DType.F32;
            case FLOAT16 -> DType.F16;
            case BFLOAT16 -> DType.BF16;
            case INT32 -> DType.I32;
            case INT64 -> DType.I64;
            case BOOL -> DType.BOOL;
            default -> null;
        };
    }

    static int fromDtype(DType d) {
        return switch (d) {
            case F32 -> FLOAT;
            case F16 -> FLOAT16;
            case BF16 -> BFLOAT16;
            case I32 -> INT32;
            case I64 -> INT64;
            case BOOL -> BOOL;
        };
    }

    static String name(int t) {
        return switch (t) {
            case FLOAT -> "float";
            case UINT8 -> "uint8";
            case INT8 -> "int8";
            case UINT16 -> "uint16";
            case INT16 -> "int16";
            case INT32 -> "int32";
            case INT64 -> "int64";
            case 8 -> "string";
            case BOOL -> "bool";
            case FLOAT16 -> "float16";
            case DOUBLE -> "double";
            case UINT32 -> "uint32";
            case UINT64 -> "uint64";
            case BFLOAT16 -> "bfloat16";
            default -> "type " + t;
        };
    }

    /** Rounds {@code v} as a value of type {@code t} would hold it: integers truncate, bools are 0/1, f32 rounds. */
    static double round(int t, double v) {
        return switch (t) {
            case FLOAT -> (float) v;
            case FLOAT16 -> dev.lantern.tensor.Half.roundF16((float) v);
            case BFLOAT16 -> dev.lantern.tensor.Half.roundBf16((float) v);
            case DOUBLE -> v;
            case BOOL -> v != 0 ? 1 : 0;
            default -> Double.isNaN(v) ? 0 : (double) (long) v;
        };
    }
}
