package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static dev.lantern.cpu.CpuConfig.F;

/**
 * The register-tiled micro-kernel: an MR × NR tile of C (MR rows × 2 vectors) updated by kc rank-1
 * steps from packed panels: 8×32 with 512-bit vectors (16 accumulators), 4×16 on AVX2 (8; see {@link #MR}).
 * A is one MR-row panel of a heap array, packed ({@link #PACKED_A}: A[r, p] at ai + MR·p + r; the
 * scalar kernel, with vectors off, reads MR rows in place instead: A[r, p] at ao + r·lda + p), bp holds
 * B's NR columns row by row (bp[p·NR + c] = B[p, c]). Per step: 2 vector loads of B, MR broadcasts of A, 2·MR FMAs. Eight rows
 * rather than six on AVX-512: 5–10 % more GFLOP/s per core (CPU time, one thread, packed weights:
 * 128×768×2304 144 → 157–161, 256×1024×256 111–121 → 121–145), 32 vector registers holding the
 * 16 accumulators, 2 B vectors and the broadcasts with room to spare.
 * C is a padded f32 tile buffer (row stride ldc), loaded first when {@code accumulate}.
 *
 * <p>NOTE: the B panels are read from native {@link MemorySegment}s, not with {@code fromArray}: C2
 * hoists the segment bounds checks out of the k loop but not the array ones (70 vs 43 GFLOP/s per
 * core on AVX2). And only native ones: the Vector API's segment loads share JDK-internal call
 * sites, and once any code in the JVM loads vectors from heap segments too, the profile there
 * turns polymorphic and this loop drops to about 15 GFLOP/s. Every tensor and packing buffer is
 * native; keep it so. Deriving both panel offsets from one int induction variable (so that C2 could
 * drop the check on each scalar A load, which JFR shows) was tried on 2026-12-02 and was slower: cpu-small's
 * two big GEMMs at one thread 0.91-0.92 ms → 0.96-0.98 ms, alternating runs of both builds.
 * A's scalar loads come from a heap array with an int loop instead (2026-12-02). Packed into MR-row
 * panels there ({@link #PACKED_A}), one index register addresses every broadcast of a step.
 * Reading A's rows in place from the native tensor instead ran at 100–150 GFLOP/s.
 */
final class GemmKernel {
    private GemmKernel() {}

    /**
     * Rows of the register tile: 8 with 32 vector registers (AVX-512); 4 with AVX2's 16. There the
     * 8-row tile needs 16 accumulators + 2 B vectors + a broadcast, and C2 keeps accumulators on the
     * stack (a load, FMA and store per step): 31 GFLOP/s, kernel alone, one core of an AMD EPYC (Zen 3,
     * AVX2), 2026-12-02. Six rows (12 + 2 + 1) fit only when C2 interleaves the broadcasts with the
     * FMAs: it did under G1 (88 GFLOP/s), but under the Parallel and Serial collectors, which every
     * Lantern launcher uses, it hoisted all six broadcasts and spilled (38). Four rows fit even so
     * (8 + 2 + 4): 62–78 under every collector.
     */
    static final int MR = CpuConfig.VECTOR && F.length() <= 8 ? 4 : 8;
    /** Two vectors of the preferred species (16 on AVX2); 16 when vectorisation is off. */
    static final int NR = CpuConfig.VECTOR ? 2 * F.length() : 16;

    private static final ValueLayout.OfInt IL = ValueLayout.JAVA_INT_UNALIGNED;
    private static final ValueLayout.OfFloat FL = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    /**
     * Whether A is packed into MR-row panels, A[r, p] at {@code panel + MR·p + r} ({@link Gemm}'s
     * copy of A, {@link HeadAttentionKernel}'s q and probability blocks), rather than read as MR rows
     * in place: always with vectors; the row-major vector kernels were removed on 2026-12-03, once the
     * attention kernels packed too (cpu-small 1.5 %, decoder-small 1.1 % less CPU per forward). The
     * 4-row tile on AVX2 needs it (84–90 against 58–60 GFLOP/s); the 8-row tile ran
     * both layouts at 201 GFLOP/s on an AMD EPYC with AVX-512 (2026-12-02), and the packed one at 224
     * against 192 on an Intel Xeon with AVX-512 (2026-12-03, kernel alone, one core; GPT-2 b1 10 %
     * less CPU per forward, cpu-small 5.6 %, decoder-small 6.9 %: {@code scripts/bench/cpu-ab.sh}).
     */
    static final boolean PACKED_A = CpuConfig.VECTOR;

    /**
     * The micro-kernel: with {@link #PACKED_A}, {@code ao} is the packed panel's offset plus MR·p0
     * for the K block's first column p0 (lda unused); otherwise (vectors off) the scalar kernel on MR
     * rows read in place, row r at {@code ao + r·lda}. bp: the native B panels, bo an element offset.
     */
    static void runPacked(float[] a, int ao, int lda, MemorySegment bp, long bo, int kc, float[] c, int co, int ldc, boolean accumulate) {
        if (PACKED_A && MR == 4) {
            vector4Packed(a, ao, bp, bo * 4L, kc, c, co, ldc, accumulate);
        } else if (PACKED_A) {
            vector8Packed(a, ao, bp, bo * 4L, kc, c, co, ldc, accumulate);
        } else {
            scalar(a, ao, lda, bp, bo, kc, c, co, ldc, accumulate);
        }
    }

    /**
     * The 8 × NR tile on a packed A panel: A[r, p] at {@code ai + 8·p + r}, as {@link #vector4Packed}
     * for four rows. One index addresses all eight broadcasts: 224 against 192 GFLOP/s for the row-major
     * form that read eight row streams (removed), kernel alone, one core of an Intel Xeon with AVX-512,
     * 2026-12-03 (on the AMD EPYC of 2026-12-02 both ran 201).
     */
    static void vector8Packed(float[] a, int ai, MemorySegment bp, long b, int kc, float[] c, int co, int ldc, boolean accumulate) {
        final int w = F.length();
        FloatVector c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
        if (accumulate) {
            c00 = FloatVector.fromArray(F, c, co);
            c01 = FloatVector.fromArray(F, c, co + w);
            c10 = FloatVector.fromArray(F, c, co + ldc);
            c11 = FloatVector.fromArray(F, c, co + ldc + w);
            c20 = FloatVector.fromArray(F, c, co + 2 * ldc);
            c21 = FloatVector.fromArray(F, c, co + 2 * ldc + w);
            c30 = FloatVector.fromArray(F, c, co + 3 * ldc);
            c31 = FloatVector.fromArray(F, c, co + 3 * ldc + w);
            c40 = FloatVector.fromArray(F, c, co + 4 * ldc);
            c41 = FloatVector.fromArray(F, c, co + 4 * ldc + w);
            c50 = FloatVector.fromArray(F, c, co + 5 * ldc);
            c51 = FloatVector.fromArray(F, c, co + 5 * ldc + w);
            c60 = FloatVector.fromArray(F, c, co + 6 * ldc);
            c61 = FloatVector.fromArray(F, c, co + 6 * ldc + w);
            c70 = FloatVector.fromArray(F, c, co + 7 * ldc);
            c71 = FloatVector.fromArray(F, c, co + 7 * ldc + w);
        } else {
            c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = c60 = c61 = c70 = c71 = FloatVector.zero(F);
        }
        final long vb = w * 4L;
        for (int p = 0; p < kc; p++, b += 2 * vb) {
            final int i = ai + 8 * p;
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
            x = FloatVector.broadcast(F, a[i + 6]);
            c60 = x.fma(b0, c60);
            c61 = x.fma(b1, c61);
            x = FloatVector.broadcast(F, a[i + 7]);
            c70 = x.fma(b0, c70);
            c71 = x.fma(b1, c71);
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
        c60.intoArray(c, co + 6 * ldc);
        c61.intoArray(c, co + 6 * ldc + w);
        c70.intoArray(c, co + 7 * ldc);
        c71.intoArray(c, co + 7 * ldc + w);
    }

    /**
     * {@link #vector8Packed} that also loads one int every k step from byte {@code touch} on, 8 bytes
     * apart: one cache line of another B panel every 8 steps (kc / 8 lines in all), so that the panel
     * the tile reads next arrives while this one is computed ({@link GemmTile}). The loads' values are
     * or-ed into the result, which the caller keeps so that the JIT keeps the loads; C is the same,
     * bit for bit, as {@link #vector8Packed}'s. A plain load, since Java has no prefetch instruction;
     * one a step keeps the loop the shape C2 schedules well (a load every 8 steps in a nested loop
     * made the kernel itself 20–25 % slower, in a loop unrolled by hand 5–10 %, tried the same day).
     * It stays a copy of {@link #vector8Packed} rather than the one kernel: the load a step would
     * then run in every micro-kernel, also where there is nothing to touch. b and touch are byte
     * offsets into bp.
     */
    static int vector8PackedTouch(float[] a, int ai, MemorySegment bp, long b, int kc, float[] c, int co, int ldc, boolean accumulate,
                                  long touch) {
        final int w = F.length();
        FloatVector c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51, c60, c61, c70, c71;
        if (accumulate) {
            c00 = FloatVector.fromArray(F, c, co);
            c01 = FloatVector.fromArray(F, c, co + w);
            c10 = FloatVector.fromArray(F, c, co + ldc);
            c11 = FloatVector.fromArray(F, c, co + ldc + w);
            c20 = FloatVector.fromArray(F, c, co + 2 * ldc);
            c21 = FloatVector.fromArray(F, c, co + 2 * ldc + w);
            c30 = FloatVector.fromArray(F, c, co + 3 * ldc);
            c31 = FloatVector.fromArray(F, c, co + 3 * ldc + w);
            c40 = FloatVector.fromArray(F, c, co + 4 * ldc);
            c41 = FloatVector.fromArray(F, c, co + 4 * ldc + w);
            c50 = FloatVector.fromArray(F, c, co + 5 * ldc);
            c51 = FloatVector.fromArray(F, c, co + 5 * ldc + w);
            c60 = FloatVector.fromArray(F, c, co + 6 * ldc);
            c61 = FloatVector.fromArray(F, c, co + 6 * ldc + w);
            c70 = FloatVector.fromArray(F, c, co + 7 * ldc);
            c71 = FloatVector.fromArray(F, c, co + 7 * ldc + w);
        } else {
            c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = c60 = c61 = c70 = c71 = FloatVector.zero(F);
        }
        final long vb = w * 4L;
        int sink = 0;
        for (int p = 0; p < kc; p++, b += 2 * vb, touch += 8) {
            sink |= bp.get(IL, touch);
            final int i = ai + 8 * p;
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
            x = FloatVector.broadcast(F, a[i + 6]);
            c60 = x.fma(b0, c60);
            c61 = x.fma(b1, c61);
            x = FloatVector.broadcast(F, a[i + 7]);
            c70 = x.fma(b0, c70);
            c71 = x.fma(b1, c71);
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
        c60.intoArray(c, co + 6 * ldc);
        c61.intoArray(c, co + 6 * ldc + w);
        c70.intoArray(c, co + 7 * ldc);
        c71.intoArray(c, co + 7 * ldc + w);
        return sink;
    }

    /**
     * The 4 × NR tile on a packed A panel: A[r, p] at {@code ai + 4·p + r}. One index register
     * addresses all four broadcasts (constant displacements); the row-major form needs an address
     * computation per row per step and ran at 58–60 GFLOP/s against 84–90 for this one (kernel alone,
     * one core, AVX2, K block 256, 16 B panels, interleaved in one JVM, Parallel and G1 collectors alike).
     */
    static void vector4Packed(float[] a, int ai, MemorySegment bp, long b, int kc, float[] c, int co, int ldc, boolean accumulate) {
        final int w = F.length();
        FloatVector c00, c01, c10, c11, c20, c21, c30, c31;
        if (accumulate) {
            c00 = FloatVector.fromArray(F, c, co);
            c01 = FloatVector.fromArray(F, c, co + w);
            c10 = FloatVector.fromArray(F, c, co + ldc);
            c11 = FloatVector.fromArray(F, c, co + ldc + w);
            c20 = FloatVector.fromArray(F, c, co + 2 * ldc);
            c21 = FloatVector.fromArray(F, c, co + 2 * ldc + w);
            c30 = FloatVector.fromArray(F, c, co + 3 * ldc);
            c31 = FloatVector.fromArray(F, c, co + 3 * ldc + w);
        } else {
            c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = FloatVector.zero(F);
        }
        final long vb = w * 4L;
        for (int p = 0; p < kc; p++, b += 2 * vb) {
            final int i = ai + 4 * p;
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

    /** The tile with vectors off: MR rows of A read in place, row r at {@code ao + r·lda}. */
    static void scalar(float[] ap, int ao, int lda, MemorySegment bp, long bo, int kc, float[] c, int co, int ldc, boolean accumulate) {
        float[] acc = new float[MR * NR];
        if (accumulate) {
            for (int r = 0; r < MR; r++) {
                System.arraycopy(c, co + r * ldc, acc, r * NR, NR);
            }
        }
        for (int p = 0; p < kc; p++) {
            for (int r = 0; r < MR; r++) {
                float a = ap[ao + r * lda + p];
                for (int j = 0; j < NR; j++) {
                    acc[r * NR + j] = Math.fma(a, bp.getAtIndex(FL, bo + p * NR + j), acc[r * NR + j]);
                }
            }
        }
        for (int r = 0; r < MR; r++) {
            System.arraycopy(acc, r * NR, c, co + r * ldc, NR);
        }
    }
}
