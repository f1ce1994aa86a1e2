package dev.lantern.cuda.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * NVRTC ({@code libnvrtc.so.13}): CUDA C source to a cubin for one architecture.
 * nvrtcProgram handles are carried as {@code long}, like the driver's handles.
 */
public final class Nvrtc {
    private static final int NVRTC_SUCCESS = 0;
    private static final int NVRTC_ERROR_COMPILATION = 6;

    private final NativeLibrary lib;
    private final Fn nvrtcVersion;
    private final Fn nvrtcGetErrorString;
    private final Fn nvrtcCreateProgram;
    private final Fn nvrtcDestroyProgram;
    private final Fn nvrtcCompileProgram;
    private final Fn nvrtcGetProgramLogSize;
    private final Fn nvrtcGetProgramLog;
    private final Fn nvrtcGetCUBINSize;
    private final Fn nvrtcGetCUBIN;

    public Nvrtc(NativeLibrary lib) {
        this.lib = lib;
        nvrtcVersion = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS), "nvrtcVersion");
        nvrtcGetErrorString = lib.fn(FunctionDescriptor.of(ADDRESS, JAVA_INT), "nvrtcGetErrorString");
        // nvrtcCreateProgram(prog*, src, name, numHeaders, headers, includeNames)
        nvrtcCreateProgram = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_INT,
                ADDRESS, ADDRESS), "nvrtcCreateProgram");
        nvrtcDestroyProgram = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS), "nvrtcDestroyProgram");
        nvrtcCompileProgram = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS),
                "nvrtcCompileProgram");
        nvrtcGetProgramLogSize = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "nvrtcGetProgramLogSize");
        nvrtcGetProgramLog = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "nvrtcGetProgramLog");
        nvrtcGetCUBINSize = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "nvrtcGetCUBINSize");
        nvrtcGetCUBIN = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), "nvrtcGetCUBIN");
    }

    public LibraryProbe probe() {
        return lib.probe();
    }

    /** {major, minor}, e.g. {13, 0}. */
    public int[] version() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment major = a.allocate(JAVA_INT);
            MemorySegment minor = a.allocate(JAVA_INT);
            check(nvrtcVersion, (int) nvrtcVersion.handle().invokeExact(major, minor));
            return new int[] {major.get(JAVA_INT, 0), minor.get(JAVA_INT, 0)};
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** "NVRTC_ERROR_COMPILATION" for 6, from the library itself. */
    public String errorName(int rc) {
        try {
            MemorySegment p = (MemorySegment) nvrtcGetErrorString.handle().invokeExact(rc);
            return p.address() == 0 ? "nvrtcResult(" + rc + ")" : p.reinterpret(256).getString(0);
        } catch (Throwable t) {
            return "nvrtcResult(" + rc + ")";
        }
    }

    private void check(Fn fn, int rc) {
        if (rc != NVRTC_SUCCESS) {
            throw new CudaException(fn.name(), rc, errorName(rc), null);
        }
    }

    /**
     * The outcome of one compilation: a cubin (null when compilation failed) and NVRTC's log,
     * which holds warnings even on success.
     */
    public record Output(byte[] cubin, String log) {
        public boolean ok() {
            return cubin != null;
        }
    }

    /**
     * Compiles {@code source} (named {@code name} in diagnostics) with {@code options}, e.g.
     * ["--gpu-architecture=sm_90", "-default-device", "-std=c++17", "-I/usr/local/cuda/include"].
     * A compile error is a normal {@link Output} with no cubin; any other failure throws.
     */
    public Output compile(String source, String name, List<String> options) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment progOut = a.allocate(JAVA_LONG);
            check(nvrtcCreateProgram, (int) nvrtcCreateProgram.handle().invokeExact(progOut,
                    a.allocateFrom(source), a.allocateFrom(name), 0, MemorySegment.NULL, MemorySegment.NULL));
            long prog = progOut.get(JAVA_LONG, 0);
            try {
                MemorySegment opts = a.allocate(ADDRESS, Math.max(1, options.size()));
                for (int i = 0; i < options.size(); i++) {
                    opts.setAtIndex(ADDRESS, i, a.allocateFrom(options.get(i)));
                }
                int rc = (int) nvrtcCompileProgram.handle().invokeExact(prog, options.size(), opts);
                String log = log(a, prog);
                if (rc == NVRTC_ERROR_COMPILATION) {
                    return new Output(null, log);
                }
                check(nvrtcCompileProgram, rc);
                MemorySegment size = a.allocate(JAVA_LONG);
                check(nvrtcGetCUBINSize, (int) nvrtcGetCUBINSize.handle().invokeExact(prog, size));
                MemorySegment cubin = a.allocate(Math.max(1, size.get(JAVA_LONG, 0)));
                check(nvrtcGetCUBIN, (int) nvrtcGetCUBIN.handle().invokeExact(prog, cubin));
                return new Output(cubin.asSlice(0, size.get(JAVA_LONG, 0)).toArray(JAVA_BYTE), log);
            } finally {
                MemorySegment p = a.allocate(JAVA_LONG);
                p.set(JAVA_LONG, 0, prog);
                int ignored = (int) nvrtcDestroyProgram.handle().invokeExact(p);
            }
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private String log(Arena a, long prog) throws Throwable {
        MemorySegment size = a.allocate(JAVA_LONG);
        check(nvrtcGetProgramLogSize, (int) nvrtcGetProgramLogSize.handle().invokeExact(prog, size));
        long n = size.get(JAVA_LONG, 0);
        if (n <= 1) {
            return "";
        }
        MemorySegment buf = a.allocate(n);
        check(nvrtcGetProgramLog, (int) nvrtcGetProgramLog.handle().invokeExact(prog, buf));
        return buf.getString(0);
    }
}
