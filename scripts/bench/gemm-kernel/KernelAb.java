package dev.lantern.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The GEMM micro-kernel alone, one thread, candidate register tiles interleaved in one JVM: each round runs every
 * variant for 0.3 s of thread CPU time over a 120 × 256 packed A block (in L2) and 240 columns of B panels
 * (K block 256, as Gemm's KC), and records GFLOP per CPU second; the summary is the median per variant and the
 * median over rounds of each variant's ratio to the first (the production kernel, GemmKernel.vector4Packed).
 * Run by scripts/bench/gemm-kernel.sh (package dev.lantern.cpu: the kernels are package-private).
 */
public final class KernelAb {
    static final int KC = 256, M = 120, N = 240;

    /** One candidate: a tile of rows × cols over panels of cols columns, A packed in rows-row panels. */
    record Variant(String name, int rows, int cols, Tile tile) {}

    interface Tile {
        void run(float[] a, int ai, MemorySegment bp, long b, int kc, float[] c, int co, int ldc);
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        if (GemmKernel.MR == 8) {
            // 512-bit vectors: the production tile is 8 x NR (vector8Packed); the candidates below are 256-bit
            // designs (their panels assume 8-lane vectors), so only the production kernel is measured
            System.out.println("512-bit vectors: timing the production 8x" + GemmKernel.NR + " tile alone (the candidates are 256-bit tiles)");
            all8(rounds);
            return;
        }
        List<Variant> all = List.of(
                new Variant("4x16", 4, 16, (a, ai, bp, b, kc, c, co, ldc) -> GemmKernel.vector4Packed(a, ai, bp, b, kc, c, co, ldc, false)),
                new Variant("6x16", 6, 16, Kernel6x16::run),
                new Variant("3x24", 3, 24, Kernel3x24::run),
                new Variant("4x16-unroll2", 4, 16, Kernel4x16Unrolled::run),
                new Variant("4x16-heapB", 4, 16, Kernel4x16Heap::run));
        List<Variant> vs = new ArrayList<>();
        for (Variant v : all) {
            if (args.length <= 1 || Arrays.asList(args).subList(1, args.length).contains(v.name()) || v == all.getFirst()) {
                vs.add(v);
            }
        }
        float[] a = new float[M * KC];
        for (int i = 0; i < a.length; i++) {
            a[i] = (float) Math.sin(i);
        }
        MemorySegment bp = Arena.global().allocate((long) KC * N * 4, 64);
        for (long i = 0; i < (long) KC * N; i++) {
            bp.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) Math.cos(i));
        }
        float[] c = new float[M * N];
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double[][] g = new double[vs.size()][rounds];
        for (int r = -3; r < rounds; r++) { // three warm-up rounds
            for (int v = 0; v < vs.size(); v++) {
                Variant x = vs.get(v);
                long t0 = mx.getCurrentThreadCpuTime();
                long reps = 0;
                do {
                    for (int jr = 0; jr < N / x.cols(); jr++) {
                        for (int ir = 0; ir < M / x.rows(); ir++) {
                            x.tile().run(a, ir * x.rows() * KC, bp, (long) jr * KC * x.cols() * 4, KC, c, ir * x.rows() * N + jr * x.cols(), N);
                        }
                    }
                    reps++;
                } while (mx.getCurrentThreadCpuTime() - t0 < 300_000_000L);
                double sec = (mx.getCurrentThreadCpuTime() - t0) * 1e-9;
                if (r >= 0) {
                    g[v][r] = reps * 2.0 * M * KC * N / sec / 1e9;
                }
            }
        }
        for (int v = 0; v < vs.size(); v++) {
            double[] ratio = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                ratio[r] = g[v][r] / g[0][r];
            }
            double[] s = g[v].clone();
            Arrays.sort(s);
            Arrays.sort(ratio);
            System.out.printf("%-14s median %6.1f GFLOP/s per CPU second (max %6.1f); ÷ %s median %.3f (min %.3f, max %.3f)%n",
                    vs.get(v).name(), s[rounds / 2], s[rounds - 1], vs.getFirst().name(), ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
        }
    }

    /** The 8 x NR production tile over a 256 x KC packed A block (L2) and NR-column B panels of KC rows (L1), GFLOP per CPU second. */
    private static void all8(int rounds) {
        int nr = GemmKernel.NR;
        int m = 256;
        int n = 2 * nr;
        float[] a = new float[m * KC];
        for (int i = 0; i < a.length; i++) {
            a[i] = (float) Math.sin(i) * 1e-3f;
        }
        MemorySegment bp = Arena.global().allocate((long) KC * n * 4, 64);
        for (long i = 0; i < (long) KC * n; i++) {
            bp.setAtIndex(ValueLayout.JAVA_FLOAT, i, (float) Math.cos(i) * 1e-3f);
        }
        float[] c = new float[m * n];
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        double[] g = new double[rounds];
        for (int r = -3; r < rounds; r++) {
            long t0 = mx.getCurrentThreadCpuTime();
            long reps = 0;
            do {
                for (int jr = 0; jr < n / nr; jr++) {
                    for (int ir = 0; ir < m / 8; ir++) {
                        GemmKernel.vector8Packed(a, ir * 8 * KC, bp, (long) jr * KC * nr * 4, KC, c, ir * 8 * n + jr * nr, n, false);
                    }
                }
                reps++;
            } while (mx.getCurrentThreadCpuTime() - t0 < 300_000_000L);
            if (r >= 0) {
                g[r] = reps * 2.0 * m * KC * n / ((mx.getCurrentThreadCpuTime() - t0) * 1e-9) / 1e9;
            }
        }
        Arrays.sort(g);
        System.out.printf("%-14s median %6.1f GFLOP/s per CPU second (max %6.1f)%n", "8x" + nr, g[rounds / 2], g[rounds - 1]);
    }
}
