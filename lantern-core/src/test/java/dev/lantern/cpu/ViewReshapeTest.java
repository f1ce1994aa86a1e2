package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link View#reshape} on a strided view: in place where the strides allow it (a slice's rows split into
 * heads, as GPT-2's q|k|v columns reach the attention), refused where they do not; every element read
 * through the reshaped view is the one row-major order puts there.
 */
class ViewReshapeTest {
    private static View iota(int... dims) {
        Tensor t = Tensor.allocate(DType.F32, Shape.of(dims));
        for (long i = 0; i < t.numel(); i++) {
            t.segment().setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i, i);
        }
        return View.of(t);
    }

    private static float[] rowMajor(View v) {
        float[] out = new float[(int) v.numel()];
        for (int i = 0; i < out.length; i++) {
            out[i] = v.getFlat(i);
        }
        return out;
    }

    @Test
    void aColumnBlockSplitsIntoHeadsInPlace() {
        View qkv = iota(2, 5, 24);                    // (batch, seq, 3 · hidden), hidden 8
        View k = qkv.slice(2, 8, 16);                  // the middle column block: rows 24 apart
        View heads = k.reshape(Shape.of(2, 5, 2, 4));  // two heads of 4
        assertArrayEquals(new long[] {120, 24, 4, 1}, heads.strides());
        assertEquals(k.offset(), heads.offset());
        assertArrayEquals(rowMajor(k), rowMajor(heads));
        View merged = heads.reshape(Shape.of(10, 8));  // batch and seq merge: 5 rows of 24 nest in 120
        assertArrayEquals(new long[] {24, 1}, merged.strides());
        assertArrayEquals(rowMajor(k), rowMajor(merged));
    }

    @Test
    void aReshapeAcrossTheGapIsRefused() {
        View k = iota(2, 5, 24).slice(2, 8, 16);
        // merging a row's 8 columns with the next row's would need the 16 columns between them
        assertThrows(IllegalArgumentException.class, () -> k.reshape(Shape.of(2, 40)));
        assertThrows(IllegalArgumentException.class, () -> k.reshape(Shape.of(2, 5, 9)));
    }

    @Test
    void aTransposedViewSplitsItsOuterAxis() {
        View t = iota(6, 4).permute(1, 0);             // (4, 6), strides (1, 4)
        View split = t.reshape(Shape.of(4, 2, 3));     // the 6 split into 2 × 3: strides (1, 12, 4)
        assertArrayEquals(new long[] {1, 12, 4}, split.strides());
        assertArrayEquals(rowMajor(t), rowMajor(split));
        assertThrows(IllegalArgumentException.class, () -> t.reshape(Shape.of(24)));
    }
}
