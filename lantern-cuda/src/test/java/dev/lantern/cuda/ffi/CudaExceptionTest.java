package dev.lantern.cuda.ffi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CudaExceptionTest {
    @Test
    void messageNamesTheCallAndTheErrorName() {
        CudaException e = new CudaException("cuMemAlloc_v2", 2, CuResult.name(2), null);
        assertEquals("cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY", e.getMessage());
        assertEquals("cuMemAlloc_v2", e.call());
        assertEquals(2, e.code());
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
    }

    @Test
    void detailIsAppendedInParentheses() {
        assertEquals("cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (kernel 'foo')",
                CudaException.format("cuModuleGetFunction", CuResult.name(500), "kernel 'foo'"));
        assertEquals("x failed: Y", CudaException.format("x", "Y", "  "));
    }

    @Test
    void headerTableCoversTheCommonCodesAndUnknownOnesStayReadable() {
        assertEquals("CUDA_SUCCESS", CuResult.name(0));
        assertEquals("CUDA_ERROR_INVALID_VALUE", CuResult.name(1));
        assertEquals("CUDA_ERROR_NO_DEVICE", CuResult.name(100));
        assertEquals("CUDA_ERROR_NOT_READY", CuResult.name(600));
        assertEquals("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", CuResult.name(901));
        assertEquals("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", CuResult.name(900));
        assertEquals("CUresult(123456)", CuResult.name(123456));
    }

    @Test
    void outOfMemoryIsTypedAndCarriesTheSize() {
        CudaOutOfMemoryException e = new CudaOutOfMemoryException("cuMemAlloc_v2", 1L << 50, null);
        assertEquals(1L << 50, e.requestedBytes());
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", e.errorName());
        assertTrue(e.getMessage().startsWith("cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (requested "
                + (1L << 50) + " bytes"), e.getMessage());
    }

    @Test
    void cublasStatusNames() {
        assertEquals("CUBLAS_STATUS_NOT_SUPPORTED", CublasLt.statusName(15));
        assertEquals("cublasStatus_t(99)", CublasLt.statusName(99));
    }
}
