package dev.lantern.cuda.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * The CUDA driver API ({@code libcuda.so.1}), one Java method per C function, names as in
 * {@code cuda.h} after its version macros (cuMemAlloc → cuMemAlloc_v2, cuGraphInstantiate →
 * cuGraphInstantiateWithFlags, cuEventElapsedTime → cuEventElapsedTime_v2, ...).
 *
 * <p>This class binds initialisation, the version and the error names, and hands out the API
 * groups, one class each: {@link #devices()} (devices and contexts), {@link #memory()},
 * {@link #streams()} (streams and events), {@link #modules()} (modules, launches, tensor maps),
 * {@link #graphs()} (stream capture and graphs) and {@link #vmm()} (virtual memory). Every
 * group reports its failures through {@link #check} and {@link #failure}.
 *
 * <p>Opaque handles (CUcontext, CUstream, CUevent, CUmodule, CUfunction, CUgraph,
 * CUgraphExec, CUgraphNode), device pointers and host pointers are carried as {@code long}:
 * on LP64 a pointer and a 64-bit integer are passed alike, and a long needs no wrapping.
 * Every status is checked; a failure throws {@link CudaException} naming the real symbol.
 * Calls that need a context assume the caller made it current ({@code CudaDevice} does).
 */
public final class CudaDriver {
    // Descriptors shared by the API groups: CUresult (int) of A = address, I = int, L = long, V = nothing.
    static final FunctionDescriptor I_I = FunctionDescriptor.of(JAVA_INT, JAVA_INT);
    static final FunctionDescriptor I_A = FunctionDescriptor.of(JAVA_INT, ADDRESS);
    static final FunctionDescriptor I_L = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);
    static final FunctionDescriptor I_V = FunctionDescriptor.of(JAVA_INT);
    static final FunctionDescriptor I_AA = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS);
    static final FunctionDescriptor I_AL = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG);
    static final FunctionDescriptor I_AI = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
    static final FunctionDescriptor I_LL = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG);
    static final FunctionDescriptor I_LI = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT);
    static final FunctionDescriptor I_LLL = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG);
    static final FunctionDescriptor I_LLLL =
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG);

    private final NativeLibrary lib;
    private final CudaDeviceApi devices;
    private final CudaMemoryApi memory;
    private final CudaStreamApi streams;
    private final CudaModuleApi modules;
    private final CudaGraphApi graphs;
    private CudaVmm vmm;

    private final Fn cuGetErrorName;
    private final Fn cuGetErrorString;
    private final Fn cuInit;
    private final Fn cuDriverGetVersion;

    public CudaDriver(NativeLibrary lib) {
        this.lib = lib;
        cuGetErrorName = lib.fn(I_IA(), "cuGetErrorName");
        cuGetErrorString = lib.fn(I_IA(), "cuGetErrorString");
        cuInit = lib.fn(I_I, "cuInit");
        cuDriverGetVersion = lib.fn(I_A, "cuDriverGetVersion");
        devices = new CudaDeviceApi(lib, this);
        memory = new CudaMemoryApi(lib, this);
        streams = new CudaStreamApi(lib, this);
        modules = new CudaModuleApi(lib, this);
        graphs = new CudaGraphApi(lib, this);
    }

    private static FunctionDescriptor I_IA() {
        return FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS);
    }

    public LibraryProbe probe() {
        return lib.probe();
    }

    // ---- errors ----------------------------------------------------------------------------

    /** "CUDA_ERROR_OUT_OF_MEMORY": from the driver when it can say, else from the header table. */
    public String errorName(int rc) {
        String name = cString(cuGetErrorName, rc);
        return name != null ? name : CuResult.name(rc);
    }

    public String errorString(int rc) {
        return cString(cuGetErrorString, rc);
    }

    private static String cString(Fn fn, int rc) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(ADDRESS);
            int r = (int) fn.handle().invokeExact(rc, out);
            MemorySegment p = out.get(ADDRESS, 0);
            if (r != 0 || p.address() == 0) {
                return null;
            }
            return p.reinterpret(4096).getString(0);
        } catch (Throwable t) {
            return null;
        }
    }

    /** Throws the typed exception for a failed call; OOM gets {@link CudaOutOfMemoryException}. */
    public void check(Fn fn, int rc) {
        if (rc != 0) {
            throw failure(fn.name(), rc);
        }
    }

    /**
     * The exception for a failed call. A sticky code ({@link CuResult#isContextLost}) marks the
     * context current on this thread as lost and becomes {@link CudaContextLostException}; once
     * that context is lost, every failure on it is reported as that loss ({@link ContextHealth}).
     */
    public CudaException failure(String call, int rc) {
        return ContextHealth.classifyOnCurrentThread(new CudaException(call, rc, errorName(rc), errorString(rc)));
    }

    static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException r) {
            return r;
        }
        if (t instanceof Error e) {
            throw e;
        }
        return new IllegalStateException(t);
    }

    // ---- initialisation, version, the API groups -------------------------------------------

    public void init() {
        try {
            check(cuInit, (int) cuInit.handle().invokeExact(0));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** e.g. 13000 for CUDA 13.0. Needs no cuInit. */
    public int driverVersion() {
        return outInt(cuDriverGetVersion);
    }

    /** Devices, their primary contexts and the current context (cuDevice*, cuDevicePrimaryCtx*, cuCtx*). */
    public CudaDeviceApi devices() {
        return devices;
    }

    /** Device and page-locked host memory, memset and memcpy (cuMem*). */
    public CudaMemoryApi memory() {
        return memory;
    }

    /** Streams and events (cuStream*, cuEvent*). */
    public CudaStreamApi streams() {
        return streams;
    }

    /** Modules, kernels, launches and tensor maps (cuModule*, cuFunc*, cuLaunchKernel, cuTensorMap*). */
    public CudaModuleApi modules() {
        return modules;
    }

    /** Stream capture and graphs (cuStream*Capture*, cuGraph*). */
    public CudaGraphApi graphs() {
        return graphs;
    }

    /** The virtual-memory part of this driver (cuMemCreate, cuMemMap, ...), bound on first use. */
    public synchronized CudaVmm vmm() {
        if (vmm == null) {
            vmm = new CudaVmm(lib, this);
        }
        return vmm;
    }

    // ---- helpers of the API groups ---------------------------------------------------------

    /** Calls {@code fn} with no argument but its int out-parameter and returns that. */
    int outInt(Fn fn) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_INT);
            check(fn, (int) fn.handle().invokeExact(out));
            return out.get(JAVA_INT, 0);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    /** Calls {@code fn} with one 64-bit argument (a handle or a pointer) and checks its status. */
    void callL(Fn fn, long arg) {
        try {
            check(fn, (int) fn.handle().invokeExact(arg));
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }
}
