package dev.lantern.cuda.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sorted scatter_add's two kernels: their launches, their limits, and that nvcc compiles them for
 * sm_90 (the numbers are the gpu tier's: BackwardOpsGpuTest's scatter_add cases against float64).
 */
class ScatterAddSortedSpecTest {
    @TempDir
    Path tmp;

    private static ScatterAddSortedSpec spec(ScatterAddSortedSpec.Stage st, long outer, long count, long size, long inner, DType t, DType ids) {
        return new ScatterAddSortedSpec(st == ScatterAddSortedSpec.Stage.SORT ? "lt_scatter_sort" : "lt_scatter_add", st, outer, count, size,
                inner, t, ids);
    }

    @Test
    void oneCtaSortsAndEveryRowAndColumnBlockSums() {
        CudaKernelSource sort = spec(ScatterAddSortedSpec.Stage.SORT, 1, 2048, 32000, 2048, DType.F32, DType.I64).render(CudaTarget.H200);
        assertEquals(1, sort.launch().gridX());
        assertEquals(2048 * 4 + 256 * 33 * 4 + 2 * 2048 * 2, sort.launch().dynamicSharedBytes(),
                "2048 rows of 4 bytes, 256 digits x 33 warp counters, two buffers of 16-bit positions");
        CudaKernelSource odd = spec(ScatterAddSortedSpec.Stage.SORT, 1, 77, 7, 13, DType.BF16, DType.I32).render(CudaTarget.H200);
        assertEquals(77 * 4 + 256 * 33 * 4 + 2 * 78 * 2, odd.launch().dynamicSharedBytes(), "77 ids: each position buffer rounded to an even count");
        CudaKernelSource sum = spec(ScatterAddSortedSpec.Stage.SUM, 1, 2048, 32000, 2048, DType.F32, DType.I64).render(CudaTarget.H200);
        assertEquals(32000L * 8, sum.launch().gridX(), "32000 rows x 8 blocks of 256 columns");
    }

    @Test
    void theSortRunsOneDigitPassPerByteOfTheLargestRow() {
        assertEquals(1, ScatterAddSortedSpec.passes(64), "rows 0..63 and 64 for an id out of range: 7 bits");
        assertEquals(1, ScatterAddSortedSpec.passes(255));
        assertEquals(2, ScatterAddSortedSpec.passes(256), "the value 256 itself marks an id out of range");
        assertEquals(2, ScatterAddSortedSpec.passes(32000));
        assertEquals(3, ScatterAddSortedSpec.passes(100_000));
        assertEquals(4, ScatterAddSortedSpec.passes(0xFFFFFFFEL));
        assertEquals(32, ScatterAddSortedSpec.chunk(1), "one round of 32 for warp 0");
        assertEquals(32, ScatterAddSortedSpec.chunk(1024));
        assertEquals(64, ScatterAddSortedSpec.chunk(1025), "33 ids a warp: two rounds");
        assertEquals(512, ScatterAddSortedSpec.chunk(16384));
    }

    @Test
    void tooManyIdsOrRowsAreRefusedAndTheLoweringKeepsTheScan() {
        assertTrue(ScatterAddSortedSpec.applies(16384, 32000, CudaTarget.H200));
        assertFalse(ScatterAddSortedSpec.applies(16385, 32000, CudaTarget.H200), "past one CTA's sort");
        assertFalse(ScatterAddSortedSpec.applies(10, 0xFFFFFFFFL, CudaTarget.H200), "row 0xFFFFFFFF marks an id out of range");
        CodegenException e = assertThrows(CodegenException.class,
                () -> spec(ScatterAddSortedSpec.Stage.SORT, 1, 16385, 10, 4, DType.F32, DType.I64));
        assertTrue(e.getMessage().contains("16384"), e.getMessage());
    }

    @Test
    void nvccCompilesBothKernelsForSm90() throws Exception {
        if (!NvccOnPath.found()) {
            throw new AssertionError("nvcc is not on PATH: install the CUDA toolkit (13.0) to compile the generated kernels");
        }
        for (ScatterAddSortedSpec.Stage st : ScatterAddSortedSpec.Stage.values()) {
            for (DType t : new DType[] {DType.F32, DType.BF16}) {
                CudaKernelSource src = spec(st, 2, 333, 97, 129, t, DType.I64).render(CudaTarget.H200);
                Path dir = Files.createDirectories(tmp.resolve(st + "-" + t));
                String log = NvccOnPath.compileCubin(src, CudaTarget.H200, dir, 120);
                assertEquals("", log);
            }
        }

    }

    /**
     * Neither kernel spills: the sort keeps nothing per id in registers across its phases (each pass
     * recounts the ranks it places), nor does the sum.
     */
    @Test
    void neitherKernelSpills() throws Exception {
        if (!NvccOnPath.found()) {
            throw new AssertionError("nvcc is not on PATH: install the CUDA toolkit (13.0) to compile the generated kernels");
        }
        for (long count : new long[] {1, 31, 33, 1000, 1025, 4097, 16384}) {
            for (long size : new long[] {64, 70_000}) {
                CudaKernelSource src = spec(ScatterAddSortedSpec.Stage.SORT, 1, count, size, 4096, DType.F32, DType.I32).render(CudaTarget.H200);
                NvccOnPath.Ptxas px = NvccOnPath.ptxas(src, CudaTarget.H200, Files.createDirectories(tmp.resolve("n" + count + "-" + size)), 120);
                assertEquals("", px.failure(), count + " ids");
                assertEquals(0, px.spillStores(), count + " ids into " + size + " rows:\n" + px.log());
            }
        }
        CudaKernelSource sum = spec(ScatterAddSortedSpec.Stage.SUM, 1, 16384, 64, 4096, DType.BF16, DType.I64).render(CudaTarget.H200);
        NvccOnPath.Ptxas px = NvccOnPath.ptxas(sum, CudaTarget.H200, Files.createDirectories(tmp.resolve("sum")), 120);
        assertEquals("", px.failure());
        assertEquals(0, px.spillStores(), px.log());
    }
}
