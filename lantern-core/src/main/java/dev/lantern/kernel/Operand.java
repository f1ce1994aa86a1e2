package dev.lantern.kernel;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

import java.util.Arrays;

/**
 * A tensor a kernel reads or writes: the SSA value, its role in the kernel ({@code a}, {@code bias},
 * {@code residual0}, {@code out}, ...), dtype, shape and element strides (the layout it is read with).
 */
public record Operand(String value, String role, DType dtype, Shape shape, long[] strides) {
    public Operand {
        strides = strides.clone();
    }

    public static Operand of(String value, String role, TensorType t) {
        return new Operand(value, role, t.dtype(), t.shape(), t.layout().strides(t.shape()));
    }

    public boolean contiguous() {
        return Arrays.equals(strides, shape.contiguousStrides());
    }

    public long bytes() {
        return shape.numel() * dtype.bytes();
    }

    /** The layout as the text format writes it: "" when contiguous, else "@[s0,s1,...]". */
    public String layoutText() {
        if (contiguous()) {
            return "";
        }
        StringBuilder b = new StringBuilder("@[");
        for (int i = 0; i < strides.length; i++) {
            b.append(i == 0 ? "" : ",").append(strides[i]);
        }
        return b.append(']').toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Operand x && value.equals(x.value) && role.equals(x.role) && dtype == x.dtype
                && shape.equals(x.shape) && Arrays.equals(strides, x.strides);
    }

    @Override
    public int hashCode() {
        return value.hashCode() * 31 + role.hashCode();
    }

    /** {@code role=%value: f32[2,128,256]@[...]}. */
    @Override
    public String toString() {
        return role + "=%" + value + ": " + dtype + shape + layoutText();
    }
}
