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
        assertEquals(0, d.devices().deviceCount());
        assertEquals(0, d.devices().deviceGet(0));
        assertEquals("", d.devices().deviceName(0));
        assertEquals(0, d.devices().deviceAttribute(CudaDeviceApi.ATTR_MULTIPROCESSOR_COUNT, 0));
        assertEquals(0, d.devices().deviceTotalMem(0));
        assertEquals(0, d.devices().devicePrimaryCtxRetain(0));
        d.devices().devicePrimaryCtxRelease(0);
        d.devices().devicePrimaryCtxReset(0);
        d.devices().ctxSetCurrent(0);
        d.devices().ctxSynchronize();
        assertArrayEquals(new int[] {0, 0}, d.devices().ctxGetStreamPriorityRange());
        assertEquals(0, d.memory().memAlloc(1 << 20));
        d.memory().memFree(0);
        assertArrayEquals(new long[] {0, 0}, d.memory().memGetInfo());
        assertEquals(0, d.memory().memHostAlloc(4096, CudaMemoryApi.CU_MEMHOSTALLOC_PORTABLE));
        d.memory().memFreeHost(0);
        d.memory().memsetD8Async(0, (byte) 1, 16, 0);
        d.memory().memsetD32Async(0, 7, 16, 0);
        d.memory().memcpyHtoD(0, 0, 0);
        d.memory().memcpyDtoH(0, 0, 0);
        d.memory().memcpyDtoD(0, 0, 0);
        d.memory().memcpyHtoDAsync(0, 0, 0, 0);
        d.memory().memcpyDtoHAsync(0, 0, 0, 0);
        d.memory().memcpyDtoDAsync(0, 0, 0, 0);
        assertEquals(0, d.streams().streamCreateWithPriority(CudaStreamApi.CU_STREAM_NON_BLOCKING, -1));
        d.streams().streamDestroy(0);
        d.streams().streamSynchronize(0);
        d.streams().streamWaitEvent(0, 0);
        assertEquals(0, d.streams().eventCreate(0));
        d.streams().eventRecord(0, 0);
        assertTrue(d.streams().eventQuery(0));
        d.streams().eventSynchronize(0);
        assertEquals(0f, d.streams().eventElapsedTime(0, 0));
        d.streams().eventDestroy(0);
        try (Arena a = Arena.ofConfined()) {
            assertEquals(0, d.modules().moduleLoadData(a.allocate(16)));
        }
        d.modules().moduleUnload(0);
        assertEquals(0, d.modules().moduleGetFunction(0, "k"));
        d.modules().funcSetAttribute(0, CudaModuleApi.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 16);
        d.modules().launchKernel(0, 1, 1, 1, 32, 1, 1, 0, 0, 0);
        assertEquals(0, d.modules().occupancyMaxActiveBlocksPerMultiprocessor(0, 256, 0));
        try (Arena a = Arena.ofConfined()) {
            d.modules().tensorMapEncodeTiled(a.allocate(128, 64), CudaModuleApi.TMAP_BF16, 0, new long[] {128, 64, 2, 1},
                    new long[] {256, 16384, 32768}, new int[] {64, 64, 1, 1}, CudaModuleApi.TMAP_SWIZZLE_128B,
                    CudaModuleApi.TMAP_L2_128B);
        }
        d.graphs().streamBeginCapture(0, CudaGraphApi.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        assertArrayEquals(new long[] {0, 0}, d.graphs().streamEndCapture(0));
        assertEquals(0, d.graphs().streamIsCapturing(0));
        assertEquals(0, d.graphs().graphInstantiate(0, 0));
        d.graphs().graphLaunch(0, 0);
        assertEquals(0, d.graphs().graphExecUpdate(0, 0));
        d.graphs().graphDestroy(0);
        d.graphs().graphExecDestroy(0);
        assertEquals(0, d.graphs().graphGetNodes(0).length);
        assertEquals(0, d.graphs().graphNodeGetType(0));
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
