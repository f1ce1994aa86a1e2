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
        assertEquals((2048 + 128) * 8, sort.launch().dynamicSharedBytes(), "2048 keys of 8 bytes and a padding slot every 16");
        CudaKernelSource odd = spec(ScatterAddSortedSpec.Stage.SORT, 1, 77, 7, 13, DType.BF16, DType.I32).render(CudaTarget.H200);
        assertEquals((128 + 8) * 8, odd.launch().dynamicSharedBytes(), "77 ids padded to 128 keys, and a padding slot every 16");
        CudaKernelSource sum = spec(ScatterAddSortedSpec.Stage.SUM, 1, 2048, 32000, 2048, DType.F32, DType.I64).render(CudaTarget.H200);
        assertEquals(32000L * 8, sum.launch().gridX(), "32000 rows x 8 blocks of 256 columns");
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
     * The sort keeps a thread's keys in registers at every length (1 to 16 a thread): a stage whose
     * partner index were not a constant would put them in local memory, a stack frame of at least the
     * keys' bytes in ptxas's report. At 16 keys a thread (16 384 ids, 64 registers under 1024 threads)
     * ptxas spills 4 bytes of something else; 512 threads with 32 keys each spill 104.
     */
    @Test
    void theSortKeepsItsKeysInRegistersAtEveryLength() throws Exception {
        if (!NvccOnPath.found()) {
            throw new AssertionError("nvcc is not on PATH: install the CUDA toolkit (13.0) to compile the generated kernels");
        }
        for (long count : new long[] {1, 31, 33, 1000, 1025, 4097, 16384}) {
            CudaKernelSource src = spec(ScatterAddSortedSpec.Stage.SORT, 1, count, 64, 4096, DType.F32, DType.I32).render(CudaTarget.H200);
            NvccOnPath.Ptxas px = NvccOnPath.ptxas(src, CudaTarget.H200, Files.createDirectories(tmp.resolve("n" + count)), 120);
            assertEquals("", px.failure(), count + " ids");
            assertTrue(px.spillStores() >= 0 && px.spillStores() <= (count > 8192 ? 8 : 0), count + " ids:\n" + px.log());
        }
    }
}
