package dev.lantern.checkpoint;

import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.weights.SafetensorsDType;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

/**
 * One tensor of a checkpoint: any safetensors dtype (f32, bf16, f16, i32, i64, ...), its shape,
 * and its elements row-major, little-endian. Restored tensors own a heap copy, so that they outlive
 * the checkpoint's files (which retention may delete).
 */
public record StoredTensor(SafetensorsDType dtype, long[] shape, MemorySegment data) {
    public StoredTensor {
        shape = shape.clone();
        long numel = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in " + Arrays.toString(shape));
            }
            numel = Math.multiplyExact(numel, d);
        }
        if (data.byteSize() != Math.multiplyExact(numel, dtype.bytes())) {
            throw new IllegalArgumentException(dtype + " " + Arrays.toString(shape) + " needs " + numel * dtype.bytes()
                    + " bytes, data has " + data.byteSize());
        }
    }

    /** A Lantern tensor's storage (read when the checkpoint is written, not copied here). */
    public static StoredTensor of(Tensor t) {
        long[] dims = Arrays.stream(t.shape().dims()).asLongStream().toArray();
        return new StoredTensor(SafetensorsDType.of(t.dtype()), dims, t.segment());
    }

    /** f32 values of the given shape, copied. */
    public static StoredTensor f32(long[] shape, float[] values) {
        MemorySegment s = Arena.ofAuto().allocate((long) values.length * 4, 8);
        MemorySegment.copy(values, 0, s, ValueLayout.JAVA_FLOAT_UNALIGNED, 0, values.length);
        return new StoredTensor(SafetensorsDType.F32, shape, s);
    }

    /** i64 values of the given shape, copied. */
    public static StoredTensor i64(long[] shape, long[] values) {
        MemorySegment s = Arena.ofAuto().allocate((long) values.length * 8, 8);
        MemorySegment.copy(values, 0, s, ValueLayout.JAVA_LONG_UNALIGNED, 0, values.length);
        return new StoredTensor(SafetensorsDType.I64, shape, s);
    }

    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** As a Lantern tensor (a copy); only for the dtypes Lantern computes in. */
    public Tensor toTensor() {
        if (dtype.irType() == null) {
            throw new IllegalStateException(dtype + " has no Lantern dtype");
        }
        Tensor t = Tensor.allocate(dtype.irType(), Shape.of(Arrays.stream(shape).mapToInt(Math::toIntExact).toArray()));
        MemorySegment.copy(data, 0, t.segment(), 0, data.byteSize());
        return t;
    }

    /** The elements' bytes as a heap array (for comparisons and hashing). */
    public byte[] bytes() {
        return data.toArray(ValueLayout.JAVA_BYTE);
    }

    /** Same dtype, shape and bytes. */
    public boolean sameAs(StoredTensor o) {
        return dtype == o.dtype && Arrays.equals(shape, o.shape) && data.mismatch(o.data) == -1;
    }
}
