package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import static dev.lantern.cpu.CpuConfig.F;

/** 3 rows × 3 vectors over 24-column B panels: 9 accumulators + 3 B + 3 broadcasts fit 16 registers, but C2 keeps two B bounds checks per step. */
final class Kernel3x24 {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /** 3 rows x 3 vectors; A packed 3-row panel A[r,p] at ai + 3p + r; B panel of 24 columns. */
    static void run(float[] a, int ai, MemorySegment bp, long b, int kc, float[] c, int co, int ldc) {
        final int w = F.length();
        FloatVector c00, c01, c02, c10, c11, c12, c20, c21, c22;
        c00 = c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 = FloatVector.zero(F);
        final long vb = w * 4L;
        for (int p = 0; p < kc; p++, b += 3 * vb) {
            final int i = ai + 3 * p;
            FloatVector b0 = FloatVector.fromMemorySegment(F, bp, b, LE);
            FloatVector b1 = FloatVector.fromMemorySegment(F, bp, b + vb, LE);
            FloatVector b2 = FloatVector.fromMemorySegment(F, bp, b + 2 * vb, LE);
            FloatVector x = FloatVector.broadcast(F, a[i]);
            c00 = x.fma(b0, c00); c01 = x.fma(b1, c01); c02 = x.fma(b2, c02);
            x = FloatVector.broadcast(F, a[i + 1]);
            c10 = x.fma(b0, c10); c11 = x.fma(b1, c11); c12 = x.fma(b2, c12);
            x = FloatVector.broadcast(F, a[i + 2]);
            c20 = x.fma(b0, c20); c21 = x.fma(b1, c21); c22 = x.fma(b2, c22);
        }
        c00.intoArray(c, co); c01.intoArray(c, co + w); c02.intoArray(c, co + 2 * w);
        c10.intoArray(c, co + ldc); c11.intoArray(c, co + ldc + w); c12.intoArray(c, co + ldc + 2 * w);
        c20.intoArray(c, co + 2 * ldc); c21.intoArray(c, co + 2 * ldc + w); c22.intoArray(c, co + 2 * ldc + 2 * w);
    }
}
