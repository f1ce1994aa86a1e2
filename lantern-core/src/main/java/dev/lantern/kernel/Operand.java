package dev.lantern.kernel;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

import java.util.Arrays;

/**
 * A tensor a kernel reads or writes: the SSA value, its role in the kernel ({@code a}, {@code bias},
 * {@code residual0}, {@code out}, ...), dtype, shape and element strides (the layout it is read with),
 * and where its bytes live: {@code storage}, the value whose memory holds them (itself, or the base
 * of the free views it is read through), {@code storageBytes} that memory's size, and {@code origin},
 * what kind of value the storage is. A backend reads all of it here, never the graph.
 */
public record Operand(String value, String role, DType dtype, Shape shape, long[] strides,
                      String storage, long storageBytes, Origin origin) {
    /** What holds an operand's bytes: a graph input, a parameter, a constant, or a kernel's output / scratch. */
    public enum Origin { INPUT, PARAM, CONSTANT, INTERMEDIATE }

    public Operand {
        strides = strides.clone();
    }

    /** An operand whose storage is its own dense value (kernel outputs, scratch). */
    public Operand(String value, String role, DType dtype, Shape shape, long[] strides) {
        this(value, role, dtype, shape, strides, value, shape.numel() * dtype.bytes(), Origin.INTERMEDIATE);
    }

    public static Operand of(String value, String role, TensorType t) {
        return new Operand(value, role, t.dtype(), t.shape(), t.layout().strides(t.shape()));
    }

    /** This operand read from {@code storage} ({@code bytes} long) of {@code origin}. */
    public Operand stored(String storage, long bytes, Origin origin) {
        return new Operand(value, role, dtype, shape, strides, storage, bytes, origin);
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
                && shape.equals(x.shape) && Arrays.equals(strides, x.strides) && storage.equals(x.storage)
                && storageBytes == x.storageBytes && origin == x.origin;
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
