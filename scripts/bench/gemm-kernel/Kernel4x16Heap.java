package dev.lantern.cpu;
import jdk.incubator.vector.FloatVector;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import static dev.lantern.cpu.CpuConfig.F;
/**
 * The production 4×16 with B read from a heap float[] (a copy of the packed panels) instead of a native segment:
 * int array indexing where the segment takes long offsets, to see whether the k loop's scalar work shrinks.
 */
final class Kernel4x16Heap {
    private static float[] heap;
    private static MemorySegment of;

    static void run(float[] a, int ai, MemorySegment bp, long b, int kc, float[] c, int co, int ldc) {
        if (of != bp) {
            heap = bp.toArray(ValueLayout.JAVA_FLOAT);
            of = bp;
        }
        kernel(a, ai, heap, (int) (b >>> 2), kc, c, co, ldc);
    }

    private static void kernel(float[] a, int ai, float[] bh, int bi, int kc, float[] c, int co, int ldc) {
        final int w = F.length();
        FloatVector c00, c01, c10, c11, c20, c21, c30, c31;
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = FloatVector.zero(F);
        for (int p = 0; p < kc; p++) {
            final int i = ai + 4 * p;
            final int j = bi + 2 * w * p;
            FloatVector b0 = FloatVector.fromArray(F, bh, j);
            FloatVector b1 = FloatVector.fromArray(F, bh, j + w);
            FloatVector x = FloatVector.broadcast(F, a[i]);
            c00 = x.fma(b0, c00);
            c01 = x.fma(b1, c01);
            x = FloatVector.broadcast(F, a[i + 1]);
            c10 = x.fma(b0, c10);
            c11 = x.fma(b1, c11);
            x = FloatVector.broadcast(F, a[i + 2]);
            c20 = x.fma(b0, c20);
            c21 = x.fma(b1, c21);
            x = FloatVector.broadcast(F, a[i + 3]);
            c30 = x.fma(b0, c30);
            c31 = x.fma(b1, c31);
        }
        c00.intoArray(c, co);
        c01.intoArray(c, co + w);
        c10.intoArray(c, co + ldc);
        c11.intoArray(c, co + ldc + w);
        c20.intoArray(c, co + 2 * ldc);
        c21.intoArray(c, co + 2 * ldc + w);
        c30.intoArray(c, co + 3 * ldc);
        c31.intoArray(c, co + 3 * ldc + w);
    }
}
