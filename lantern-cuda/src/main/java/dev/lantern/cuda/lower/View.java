package dev.lantern.cuda.lower;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import java.util.Arrays;
import java.util.List;

/**
 * A value as a kernel reads it: the buffer its bytes live in, the element {@code offset} of its
 * first element there (non-zero only for a slice read in place, {@link SliceAlias}), element
 * strides, dtype and logical shape.
 */
record View(Buf buf, DType dtype, Shape shape, long[] strides, long offset) {
    View {
        if (offset < 0) {
            throw new IllegalArgumentException("negative view offset " + offset);
        }
    }

    View(Buf buf, DType dtype, Shape shape, long[] strides) {
        this(buf, dtype, shape, strides, 0);
    }

    /** Dense from the buffer's start: what code that takes {@link #buf()} alone (a GEMM operand) may use as it is. */
    boolean contiguous() {
        return offset == 0 && Arrays.equals(strides, shape.contiguousStrides());
    }

    /** Row-major strides, wherever the view starts: what a kernel taking a pointer (offset included, {@link LoweringContext#ptr(View)}) reads as dense. */
    boolean denseStrides() {
        return Arrays.equals(strides, shape.contiguousStrides());
    }

    List<Long> strideList() {
        return Arrays.stream(strides).boxed().toList();
    }

    /** A dense view of {@code shape} over all of {@code buf}. */
    static View dense(Buf buf, DType dtype, Shape shape) {
        return new View(buf, dtype, shape, shape.contiguousStrides());
    }
}
