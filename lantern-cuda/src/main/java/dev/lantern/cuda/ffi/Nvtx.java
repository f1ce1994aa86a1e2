package dev.lantern.cuda.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;

/**
 * NVTX ranges for profiler traces (Nsight Systems). Optional: when {@code libnvtx3interop}
 * is absent every call is a no-op, and NVTX's return codes are advisory so none is checked.
 */
public final class Nvtx {
    private static final Nvtx NONE = new Nvtx(null);

    private final Fn push;
    private final Fn pop;

    private Nvtx(NativeLibrary lib) {
        this.push = lib == null ? null : lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS), "nvtxRangePushA");
        this.pop = lib == null ? null : lib.fn(FunctionDescriptor.of(JAVA_INT), "nvtxRangePop");
    }

    public static Nvtx of(NativeLibrary lib) {
        return lib == null || !lib.has("nvtxRangePushA") ? NONE : new Nvtx(lib);
    }

    public static Nvtx none() {
        return NONE;
    }

    public boolean enabled() {
        return push != null;
    }

    public void push(String name) {
        if (push == null) {
            return;
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment s = a.allocateFrom(name);
            int ignored = (int) push.handle().invokeExact(s);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void pop() {
        if (pop == null) {
            return;
        }
        try {
            int ignored = (int) pop.handle().invokeExact();
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
