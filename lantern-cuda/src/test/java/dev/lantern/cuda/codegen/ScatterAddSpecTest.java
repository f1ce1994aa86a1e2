package dev.lantern.cuda.codegen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.DType;
import org.junit.jupiter.api.Test;

/**
 * scatter_add's launch: one CTA per output row and block of columns, so that a small vocabulary's
 * embedding gradient (64 rows of 4096) fills the GPU instead of 64 CTAs walking the ids 16 times.
 */
class ScatterAddSpecTest {
    @Test
    void oneCtaPerRowAndColumnBlock() {
        CudaKernelSource wide = new ScatterAddSpec("lt_sa", 1, 16384, 64, 4096, DType.F32, DType.I64).render(CudaTarget.H200);
        assertEquals(64L * 16, wide.launch().gridX(), "64 rows x 16 blocks of 256 columns");
        assertTrue(wide.source().contains("COL_BLOCKS = 16LL"), wide.source());
        CudaKernelSource odd = new ScatterAddSpec("lt_sa", 3, 77, 7, 13, DType.BF16, DType.I32).render(CudaTarget.H200);
        assertEquals(3L * 7, odd.launch().gridX(), "13 columns fit one block of 32 threads");
        assertEquals(32, odd.launch().blockX());
        CudaKernelSource ragged = new ScatterAddSpec("lt_sa", 1, 5, 3, 257, DType.F32, DType.I64).render(CudaTarget.H200);
        assertEquals(3L * 2, ragged.launch().gridX(), "257 columns: a full block of 256 and one of 1");
    }
}
