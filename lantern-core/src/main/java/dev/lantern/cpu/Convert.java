package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.tensor.Half;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShape;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Loads and stores between storage and f32 working arrays: the one place where dtypes differ.
 * Every kernel computes on {@code float[]} rows or chunks (f32 accumulation); bf16 and f16 convert
 * here on the way in and round to nearest even on the way out. Offsets and strides count elements.
 */
public final class Convert {
    private Convert() {}

    static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private static final VectorSpecies<Float> F = CpuConfig.F;
    private static final VectorSpecies<Integer> I = F.withLanes(int.class);
    /** Half-width shorts: one 16-bit lane per float lane. */
    private static final VectorSpecies<Short> S = VectorSpecies.of(short.class, VectorShape.forBitSize(F.vectorBitSize() / 2));
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /**
     * Rows up to this many f32 elements are copied by a vector loop rather than {@link MemorySegment#copy}, whose
     * checks cost about 30 ns a call: most of what the attention kernel spent packing a head's 64-float q, k and v
     * rows (2026-12-04, AMD EPYC with AVX-512).
     */
    private static final int SHORT_ROW = 256;

    /** One element at element index {@code i}. */
    public static float get(MemorySegment s, DType t, long i) {
        return switch (t) {
            case F32 -> s.getAtIndex(F32, i);
            case BF16 -> Half.fromBf16(s.getAtIndex(I16, i));
            case F16 -> Float.float16ToFloat(s.getAtIndex(I16, i));
            case I32 -> s.getAtIndex(I32, i);
            case I64 -> s.getAtIndex(I64, i);
            case BOOL -> s.get(ValueLayout.JAVA_BYTE, i) != 0 ? 1f : 0f;
        };
    }

    /** One element at element index {@code i}, rounded to the storage type. */
    public static void set(MemorySegment s, DType t, long i, float v) {
        switch (t) {
            case F32 -> s.setAtIndex(F32, i, v);
            case BF16 -> s.setAtIndex(I16, i, Half.toBf16(v));
            case F16 -> s.setAtIndex(I16, i, Float.floatToFloat16(v));
            case I32 -> s.setAtIndex(I32, i, (int) v);
            case I64 -> s.setAtIndex(I64, i, (long) v);
            case BOOL -> s.set(ValueLayout.JAVA_BYTE, i, (byte) (v != 0 ? 1 : 0));
        }
    }

    /** dst[d .. d+n) = elements off, off+stride, ... (stride 0 repeats one element). */
    public static void load(MemorySegment s, DType t, long off, long stride, float[] dst, int d, int n) {
        if (stride == 0) {
            java.util.Arrays.fill(dst, d, d + n, get(s, t, off));
        } else if (stride == 1 && t == DType.F32 && n <= SHORT_ROW && CpuConfig.VECTOR) {
            int i = 0;
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                FloatVector.fromMemorySegment(F, s, (off + i) * 4, LE).intoArray(dst, d + i);
            }
            for (; i < n; i++) {
                dst[d + i] = s.getAtIndex(F32, off + i);
            }
        } else if (stride == 1 && t == DType.F32) {
            MemorySegment.copy(s, F32, off * 4, dst, d, n);
        } else if (stride == 1 && t == DType.BF16) {
            int i = 0;
            for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
                // bf16 is the top half of an f32: widen, shift into place
                ShortVector h = ShortVector.fromMemorySegment(S, s, (off + i) * 2, LE);
                ((IntVector) h.convertShape(VectorOperators.S2I, I, 0)).lanewise(VectorOperators.LSHL, 16)
                        .reinterpretAsFloats().intoArray(dst, d + i);
            }
            for (; i < n; i++) {
                dst[d + i] = Float.intBitsToFloat((s.getAtIndex(I16, off + i) & 0xFFFF) << 16);
            }
        } else if (stride == 1 && t == DType.F16) {
            for (int i = 0; i < n; i++) {
                dst[d + i] = Float.float16ToFloat(s.getAtIndex(I16, off + i));
            }
        } else {
            for (int i = 0; i < n; i++) {
                dst[d + i] = get(s, t, off + i * stride);
            }
        }
    }

    /** Elements off, off+stride, ... = src[d .. d+n), rounded to the storage type. */
    public static void store(float[] src, int d, MemorySegment s, DType t, long off, long stride, int n) {
        if (stride == 1 && t == DType.F32 && n <= SHORT_ROW && CpuConfig.VECTOR) {
            int i = 0;
            for (int bound = F.loopBound(n); i < bound; i += F.length()) {
                FloatVector.fromArray(F, src, d + i).intoMemorySegment(s, (off + i) * 4, LE);
            }
            for (; i < n; i++) {
                s.setAtIndex(F32, off + i, src[d + i]);
            }
        } else if (stride == 1 && t == DType.F32) {
            MemorySegment.copy(src, d, s, F32, off * 4, n);
        } else if (stride == 1 && t == DType.BF16) {
            int i = 0;
            for (int bound = CpuConfig.vectorBound(n); i < bound; i += F.length()) {
                // round to nearest even exactly as Half.toBf16: bits + 0x7FFF + lsb, top half; NaN stays quiet NaN
                FloatVector f = FloatVector.fromArray(F, src, d + i);
                IntVector bits = f.reinterpretAsInts();
                IntVector top = bits.lanewise(VectorOperators.LSHR, 16);
                IntVector rounded = bits.add(top.and(1).add(0x7FFF)).lanewise(VectorOperators.LSHR, 16);
                rounded = rounded.blend(top.or(0x40), f.test(VectorOperators.IS_NAN).cast(I));
                ((ShortVector) rounded.convertShape(VectorOperators.I2S, S, 0)).intoMemorySegment(s, (off + i) * 2, LE);
            }
            for (; i < n; i++) {
                s.setAtIndex(I16, off + i, Half.toBf16(src[d + i]));
            }
        } else {
            for (int i = 0; i < n; i++) {
                set(s, t, off + i * stride, src[d + i]);
            }
        }
    }

    /** A whole contiguous row of a view: the last axis starting at element {@code off}. A scalar is one row of one. */
    public static void loadRow(View v, long off, float[] dst, int n) {
        load(v.segment(), v.dtype(), off, rowStride(v), dst, 0, n);
    }

    public static void storeRow(float[] src, View v, long off, int n) {
        store(src, 0, v.segment(), v.dtype(), off, rowStride(v), n);
    }

    private static long rowStride(View v) {
        return v.rank() == 0 ? 1 : v.strides()[v.rank() - 1];
    }
}
