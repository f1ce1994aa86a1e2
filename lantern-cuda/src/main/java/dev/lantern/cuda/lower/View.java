package dev.lantern.cuda.lower;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import java.util.Arrays;
import java.util.List;

/** A value as a kernel reads it: the buffer its bytes live in, element strides, dtype and logical shape. */
record View(Buf buf, DType dtype, Shape shape, long[] strides) {
    boolean contiguous() {
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
