package dev.lantern.cpu;
import jdk.incubator.vector.FloatVector;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import static dev.lantern.cpu.CpuConfig.F;
/** 6 rows × 2 vectors, A in 6-row panels (A[r, p] at ai + 6·p + r): the tile MLAS uses on FMA3. C2 spills 4 accumulators. */
final class Kernel6x16 {
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    static void run(float[] a, int ai, MemorySegment bp, long b, int kc, float[] c, int co, int ldc) {
        final int w = F.length();
        FloatVector c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
        c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = FloatVector.zero(F);
        final long vb = w * 4L;
        for (int p = 0; p < kc; p++, b += 2 * vb) {
            final int i = ai + 6 * p;
            FloatVector b0 = FloatVector.fromMemorySegment(F, bp, b, LE);
            FloatVector b1 = FloatVector.fromMemorySegment(F, bp, b + vb, LE);
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
            x = FloatVector.broadcast(F, a[i + 4]);
            c40 = x.fma(b0, c40);
            c41 = x.fma(b1, c41);
            x = FloatVector.broadcast(F, a[i + 5]);
            c50 = x.fma(b0, c50);
            c51 = x.fma(b1, c51);
        }
        c00.intoArray(c, co);
        c01.intoArray(c, co + w);
        c10.intoArray(c, co + ldc);
        c11.intoArray(c, co + ldc + w);
        c20.intoArray(c, co + 2 * ldc);
        c21.intoArray(c, co + 2 * ldc + w);
        c30.intoArray(c, co + 3 * ldc);
        c31.intoArray(c, co + 3 * ldc + w);
        c40.intoArray(c, co + 4 * ldc);
        c41.intoArray(c, co + 4 * ldc + w);
        c50.intoArray(c, co + 5 * ldc);
        c51.intoArray(c, co + 5 * ldc + w);
    }
}
