package dev.lantern.cuda.codegen;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The row-by-row gather kernel without a GPU: its split for the training steps' lookups (the
 * LLaMA-shaped model's 2048 ids into 32000 × 2048 f32, the decoder block's 16 384 ids into
 * 64 × 4096), the kernel's task loop replayed in Java over seeded random odd shapes (outer &gt; 1,
 * prime counts, odd and vector-wide rows, negative and out-of-range ids, small grids so that the
 * grid-stride wraps, the aligned vector path and the element fallback) with every output element
 * written exactly once from the right table element or as NaN, and nvcc compiling every variant for
 * sm_90. The numbers on the device are BackwardOpsGpuTest's gather cases.
 */
class GatherSpecTest {
    @TempDir
    Path tmp;

    @Test
    void theTrainingStepsLookupsGoRowByRowIn16ByteVectors() {
        GatherSpec llama = new GatherSpec("lt_gather", 1, 2048, 32000, 2048, DType.F32, DType.I64);
        assertEquals(new GatherSpec.Tiling(4, 512, 256, 2, 1, 2048), llama.tiling(), "a CTA per row, 2 vectors a thread");
        CudaKernelSource src = llama.render(CudaTarget.H200);
        assertEquals(2048, src.launch().gridX());
        assertEquals(GatherSpec.THREADS, src.launch().blockX());
        assertTrue(src.source().contains("__ldg(s4"), "16-byte loads");
        GatherSpec block = new GatherSpec("lt_gather", 1, 16384, 64, 4096, DType.F32, DType.I64);
        assertEquals(new GatherSpec.Tiling(4, 1024, 256, 4, 1, 16384), block.tiling());
        assertEquals(16L * CudaTarget.H200.smCount(), block.render(CudaTarget.H200).launch().gridX(), "grid-stride past 16 CTAs an SM");
        // narrow rows share a CTA; odd widths go element by element; wide rows split into blocks
        assertEquals(new GatherSpec.Tiling(8, 3, 4, 1, 1, 7 * 2), new GatherSpec("g", 2, 7, 5, 24, DType.BF16, DType.I32).tiling());
        assertEquals(new GatherSpec.Tiling(1, 7, 8, 1, 1, 13), new GatherSpec("g", 1, 13, 5, 7, DType.F32, DType.I64).tiling());
        assertEquals(new GatherSpec.Tiling(4, 1250, 256, 4, 2, 2 * 3), new GatherSpec("g", 1, 3, 5, 5000, DType.F32, DType.I64).tiling());
        assertTrue(!new GatherSpec("g", 1, 13, 5, 7, DType.F32, DType.I64).render(CudaTarget.H200).source().contains("__ldg(s4"),
                "no vector path where the width is not a multiple of 16 bytes");
    }

    @Test
    void everyOutputElementIsWrittenOnceFromItsRow() {
        SplittableRandom r = new SplittableRandom(16);
        long[] widths = {1, 2, 3, 4, 7, 8, 16, 24, 129, 1000, 1028, 4100};
        int checked = 0;
        for (int trial = 0; trial < 60; trial++) {
            long outer = 1 + r.nextInt(3);
            long count = new long[] {1, 2, 13, 37, 97}[r.nextInt(5)];
            long rows = 1 + r.nextInt(40);
            long inner = widths[r.nextInt(widths.length)];
            DType dtype = new DType[] {DType.F32, DType.BF16, DType.F16}[r.nextInt(3)];
            GatherSpec s = new GatherSpec("g", outer, count, rows, inner, dtype, r.nextBoolean() ? DType.I64 : DType.I32);
            long[] ids = new long[(int) count];
            for (int k = 0; k < count; k++) {
                // in range, negative (from the end), or out of range either way: one in five
                ids[k] = switch (r.nextInt(10)) {
                    case 0 -> rows + r.nextInt(3);
                    case 1 -> -rows - 1 - r.nextInt(3);
                    case 2, 3 -> -1 - r.nextInt((int) rows);
                    default -> r.nextInt((int) rows);
                };
            }
            long[] want = reference(s, ids);
            int launched = (int) s.render(CudaTarget.H200).launch().gridX();
            for (int grid : new int[] {launched, 1, 3}) {
                for (boolean aligned : new boolean[] {true, false}) {
                    long[] got = replay(s, ids, grid, aligned);
                    assertArrayEquals(want, got, s + " grid " + grid + " aligned " + aligned + " ids " + Arrays.toString(ids));
                    checked++;
                }
            }
        }
        assertEquals(360, checked);
    }

    /** Per output element, the table element it holds, or -1 for NaN (an id out of range), as ONNX's Gather defines it. */
    private static long[] reference(GatherSpec s, long[] ids) {
        long[] out = new long[Math.toIntExact(s.numel())];
        for (long b = 0; b < s.outer(); b++) {
            for (int k = 0; k < s.count(); k++) {
                long id = ids[k] < 0 ? ids[k] + s.rows() : ids[k];
                for (long j = 0; j < s.inner(); j++) {
                    out[(int) ((b * s.count() + k) * s.inner() + j)] = id >= 0 && id < s.rows() ? (b * s.rows() + id) * s.inner() + j : -1;
                }
            }
        }
        return out;
    }

    /** The kernel's loops, thread by thread, as GatherSpec emits them; a second write to an element fails. */
    private static long[] replay(GatherSpec s, long[] ids, int grid, boolean aligned) {
        GatherSpec.Tiling t = s.tiling();
        long[] out = new long[Math.toIntExact(s.numel())];
        Arrays.fill(out, Long.MIN_VALUE);
        int tpr = t.threadsPerRow();
        int u = t.unroll();
        int v = t.vector();
        for (int block = 0; block < grid; block++) {
            for (int thread = 0; thread < GatherSpec.THREADS; thread++) {
                int lane = thread % tpr;
                for (long task = (long) block * t.slots() + thread / tpr; task < t.tasks(); task += (long) grid * t.slots()) {
                    long c = task % t.colBlocks();
                    long row = task / t.colBlocks();
                    long k = row % s.count();
                    long b = row / s.count();
                    long id = ids[(int) k] < 0 ? ids[(int) k] + s.rows() : ids[(int) k];
                    boolean ok = id >= 0 && id < s.rows();
                    long src = (b * s.rows() + (ok ? id : 0)) * s.inner();
                    long dst = row * s.inner();
                    if (v > 1 && aligned) {
                        long v0 = c * tpr * u + lane;
                        for (int x = 0; x < u; x++) {
                            long unit = v0 + (long) x * tpr;
                            if (unit < t.units()) {
                                for (int i = 0; i < v; i++) {
                                    write(out, dst + unit * v + i, ok ? src + unit * v + i : -1);
                                }
                            }
                        }
                        continue;
                    }
                    long e0 = c * tpr * u * v;
                    long e1 = Math.min(e0 + (long) tpr * u * v, s.inner());
                    for (long j = e0 + lane; j < e1; j += tpr) {
                        write(out, dst + j, ok ? src + j : -1);
                    }
                }
            }
        }
        return out;
    }

    private static void write(long[] out, long at, long value) {
        if (out[(int) at] != Long.MIN_VALUE) {
            throw new AssertionError("output element " + at + " written twice");
        }
        out[(int) at] = value;
    }

    @Test
    void nvccCompilesEveryVariantForSm90() throws Exception {
        if (!NvccOnPath.found()) {
            throw new AssertionError("nvcc is not on PATH: install the CUDA toolkit (13.0) to compile the generated kernels");
        }
        StringBuilder failures = new StringBuilder();
        int n = 0;
        for (DType t : new DType[] {DType.F32, DType.BF16, DType.F16}) {
            for (DType ids : new DType[] {DType.I32, DType.I64}) {
                // vector-wide rows (one CTA, blocks of a wide row, rows sharing a CTA) and odd ones
                for (long[] shape : new long[][] {{1, 2048, 32000, 2048}, {3, 37, 11, 4104}, {2, 97, 5, 24}, {1, 13, 7, 129}}) {
                    GatherSpec s = new GatherSpec("lt_gather_" + n, shape[0], shape[1], shape[2], shape[3], t, ids);
                    Path dir = Files.createDirectories(tmp.resolve("g" + n++));
                    failures.append(NvccOnPath.compileCubin(s.render(CudaTarget.H200), CudaTarget.H200, dir, 120));
                }
            }
        }
        assertEquals("", failures.toString());
    }
}
