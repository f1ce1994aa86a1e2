package dev.lantern.cuda.driver;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.lantern.cuda.ffi.CuResult;
import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.cuda.ffi.LibraryLocator;
import dev.lantern.cuda.ffi.LibraryProbe;
import dev.lantern.cuda.ffi.NativeLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in libcuda for device logic on a machine without a GPU: every symbol is an upcall
 * into {@link #call}, which counts the call and returns CUDA_SUCCESS (out-parameters stay
 * zero), or the code {@link #failOnce} set for that symbol. A sticky code sticks as in the
 * real driver: every later call returns it until cuDevicePrimaryCtxReset. The stubs take no
 * arguments; on the SysV and AAPCS64 calling conventions a callee may ignore what the caller
 * passes (the caller cleans up), which is what {@code BindingSignatureTest} relies on too.
 */
final class FakeDriver {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle CALL;

    static {
        try {
            CALL = MethodHandles.lookup().findVirtual(FakeDriver.class, "call", MethodType.methodType(int.class, String.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final Arena arena = Arena.ofShared();
    private final Map<String, MemorySegment> stubs = new ConcurrentHashMap<>();
    private final Map<String, Integer> failures = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final AtomicInteger total = new AtomicInteger();
    private volatile int sticky;

    /** The driver library: every symbol found, each its own stub. */
    NativeLibrary library() {
        LibraryProbe probe = new LibraryProbe("driver", List.of("fake"), List.of("test"), "upcall stubs", List.of());
        return new NativeLibrary(probe, name -> Optional.of(stubs.computeIfAbsent(name, this::stub)));
    }

    /** Libraries whose driver is this one (the others are not found). */
    CudaLibraries libraries() {
        return CudaLibraries.withDriver(new LibraryLocator(List.of(), List.of(), false), library());
    }

    private MemorySegment stub(String name) {
        MethodHandle h = MethodHandles.insertArguments(CALL.bindTo(this), 0, name);
        return LINKER.upcallStub(h, FunctionDescriptor.of(JAVA_INT), arena);
    }

    private int call(String name) {
        total.incrementAndGet();
        calls.computeIfAbsent(name, k -> new AtomicInteger()).incrementAndGet();
        if (name.startsWith("cuDevicePrimaryCtxReset")) {
            sticky = 0;
            return 0;
        }
        if (sticky != 0) {
            return sticky;
        }
        Integer rc = failures.remove(name);
        if (rc == null) {
            return 0;
        }
        if (CuResult.isContextLost(rc)) {
            sticky = rc;
        }
        return rc;
    }

    /** The next call of {@code symbol} returns {@code code}. */
    void failOnce(String symbol, int code) {
        failures.put(symbol, code);
    }

    int calls(String symbol) {
        AtomicInteger n = calls.get(symbol);
        return n == null ? 0 : n.get();
    }

    /** Calls of any symbol so far. */
    int total() {
        return total.get();
    }
}
