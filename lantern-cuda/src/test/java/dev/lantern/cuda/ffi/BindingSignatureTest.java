package dev.lantern.cuda.ffi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Every binding method's {@code invokeExact} call site must match its FunctionDescriptor, or
 * the call throws WrongMethodTypeException at run time — on the GPU machine, too late. Here
 * every symbol resolves to libc's {@code sched_yield}, which ignores its arguments and
 * returns 0 (CUDA_SUCCESS / NVRTC_SUCCESS / CUBLAS_STATUS_SUCCESS), so each method runs its
 * real downcall path on a machine with no GPU. Out-parameters stay zero.
 */
class BindingSignatureTest {
    static NativeLibrary fake(String label) {
        MemorySegment yield = Linker.nativeLinker().defaultLookup().find("sched_yield").orElseThrow();
        SymbolLookup everything = name -> Optional.of(yield);
        return new NativeLibrary(new LibraryProbe(label, List.of("fake"), List.of("test"), "sched_yield", List.of()),
                everything);
    }

    @Test
    void driverCallSitesMatchTheirDescriptors() {
        CudaDriver d = new CudaDriver(fake("driver"));
        d.init();
        assertEquals(0, d.driverVersion());
        assertEquals(0, d.deviceCount());
        assertEquals(0, d.deviceGet(0));
        assertEquals("", d.deviceName(0));
        assertEquals(0, d.deviceAttribute(CudaDriver.ATTR_MULTIPROCESSOR_COUNT, 0));
        assertEquals(0, d.deviceTotalMem(0));
        assertEquals(0, d.devicePrimaryCtxRetain(0));
        d.devicePrimaryCtxRelease(0);
        d.devicePrimaryCtxReset(0);
        d.ctxSetCurrent(0);
        d.ctxSynchronize();
        assertArrayEquals(new int[] {0, 0}, d.ctxGetStreamPriorityRange());
        assertEquals(0, d.memAlloc(1 << 20));
        d.memFree(0);
        assertArrayEquals(new long[] {0, 0}, d.memGetInfo());
        assertEquals(0, d.memHostAlloc(4096, CudaDriver.CU_MEMHOSTALLOC_PORTABLE));
        d.memFreeHost(0);
        d.memsetD8Async(0, (byte) 1, 16, 0);
        d.memsetD32Async(0, 7, 16, 0);
        d.memcpyHtoD(0, 0, 0);
        d.memcpyDtoH(0, 0, 0);
        d.memcpyDtoD(0, 0, 0);
        d.memcpyHtoDAsync(0, 0, 0, 0);
        d.memcpyDtoHAsync(0, 0, 0, 0);
        d.memcpyDtoDAsync(0, 0, 0, 0);
        assertEquals(0, d.streamCreateWithPriority(CudaDriver.CU_STREAM_NON_BLOCKING, -1));
        d.streamDestroy(0);
        d.streamSynchronize(0);
        d.streamWaitEvent(0, 0);
        assertEquals(0, d.eventCreate(0));
        d.eventRecord(0, 0);
        assertTrue(d.eventQuery(0));
        d.eventSynchronize(0);
        assertEquals(0f, d.eventElapsedTime(0, 0));
        d.eventDestroy(0);
        try (Arena a = Arena.ofConfined()) {
            assertEquals(0, d.moduleLoadData(a.allocate(16)));
        }
        d.moduleUnload(0);
        assertEquals(0, d.moduleGetFunction(0, "k"));
        d.funcSetAttribute(0, CudaDriver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 16);
        d.launchKernel(0, 1, 1, 1, 32, 1, 1, 0, 0, 0);
        assertEquals(0, d.occupancyMaxActiveBlocksPerMultiprocessor(0, 256, 0));
        d.streamBeginCapture(0, CudaDriver.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        assertArrayEquals(new long[] {0, 0}, d.streamEndCapture(0));
        assertEquals(0, d.streamIsCapturing(0));
        assertEquals(0, d.graphInstantiate(0, 0));
        d.graphLaunch(0, 0);
        assertEquals(0, d.graphExecUpdate(0, 0));
        d.graphDestroy(0);
        d.graphExecDestroy(0);
        assertEquals(0, d.graphGetNodes(0).length);
        assertEquals(0, d.graphNodeGetType(0));
        assertEquals(0, d.vmm().memGetAllocationGranularity(0, false));
        assertEquals(0, d.vmm().memAddressReserve(1L << 30, 1L << 21));
        d.vmm().memAddressFree(0, 1L << 30);
        assertEquals(0, d.vmm().memCreate(1L << 21, 0));
        d.vmm().memMap(0, 1L << 21, 0, 0);
        d.vmm().memSetAccessReadWrite(0, 1L << 21, 0);
        d.vmm().memUnmap(0, 1L << 21);
        d.vmm().memRelease(0);
        // cuGetErrorName "succeeds" with a NULL string: the header table answers instead.
        assertEquals("CUDA_ERROR_OUT_OF_MEMORY", d.errorName(2));
        assertEquals("cuMemAlloc_v2", d.failure("cuMemAlloc_v2", 2).call());
    }

    @Test
    void nvrtcCallSitesMatchTheirDescriptors() {
        Nvrtc n = new Nvrtc(fake("nvrtc"));
        assertArrayEquals(new int[] {0, 0}, n.version());
        assertEquals("nvrtcResult(6)", n.errorName(6));
        Nvrtc.Output out = n.compile("extern \"C\" __global__ void k() {}", "k.cu",
                List.of("--gpu-architecture=sm_90", "-default-device"));
        assertTrue(out.ok());
        assertEquals(0, out.cubin().length);
        assertEquals("", out.log());
    }

    @Test
    void cublasLtCallSitesMatchTheirDescriptors() {
        CublasLt lt = new CublasLt(fake("cublasLt"));
        assertEquals(0, lt.version());
        long h = lt.create();
        long desc = lt.matmulDescCreate(CublasLt.CUBLAS_COMPUTE_32F, CublasLt.CUDA_R_32F);
        lt.matmulDescSetInt(desc, CublasLt.MATMUL_DESC_TRANSA, CublasLt.CUBLAS_OP_T);
        lt.matmulDescSetLong(desc, CublasLt.MATMUL_DESC_BIAS_POINTER, 0x1000);
        long layout = lt.matrixLayoutCreate(CublasLt.CUDA_R_16BF, 64, 32, 64);
        lt.matrixLayoutSetInt(layout, CublasLt.LAYOUT_BATCH_COUNT, 4);
        lt.matrixLayoutSetLong(layout, CublasLt.LAYOUT_STRIDED_BATCH_OFFSET, 2048);
        long pref = lt.preferenceCreate();
        lt.preferenceSetLong(pref, CublasLt.PREF_MAX_WORKSPACE_BYTES, 1 << 25);
        assertEquals(0, lt.algoGetHeuristic(h, desc, layout, layout, layout, layout, pref, 4).size());
        lt.matmul(h, desc, 1f, 0, layout, 0, layout, 0f, 0, layout, 0, layout, new byte[64], 0, 0, 0);
        lt.matmul(h, desc, 1f, 0, layout, 0, layout, 0f, 0, layout, 0, layout, null, 0, 0, 0);
        lt.preferenceDestroy(pref);
        lt.matrixLayoutDestroy(layout);
        lt.matmulDescDestroy(desc);
        lt.destroy(h);
    }

    @Test
    void nvtxCallSitesMatchTheirDescriptors() {
        Nvtx nvtx = Nvtx.of(fake("nvtx"));
        assertTrue(nvtx.enabled());
        nvtx.push("range");
        nvtx.pop();
    }
}
