package dev.lantern.cuda.ffi;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.List;
import java.util.Optional;

/**
 * One loaded NVIDIA library: its probe record and its symbols. Bindings declare their
 * functions as {@link Fn} fields; each resolves its downcall handle on first use, once.
 */
public final class NativeLibrary {
    private static final Linker LINKER = Linker.nativeLinker();

    private final LibraryProbe probe;
    private final SymbolLookup lookup;

    public NativeLibrary(LibraryProbe probe, SymbolLookup lookup) {
        this.probe = probe;
        this.lookup = lookup;
    }

    /** Locates and loads a library, or throws {@link CudaUnavailableException} naming where it looked. */
    public static NativeLibrary load(LibraryLocator locator, String label, List<String> fileNames) {
        LibraryLocator.Located located = locator.locate(label, fileNames);
        SymbolLookup lookup = located.lookup().orElseThrow(
                () -> new CudaUnavailableException(located.probe().summary()));
        return new NativeLibrary(located.probe(), lookup);
    }

    public LibraryProbe probe() {
        return probe;
    }

    public boolean has(String symbol) {
        return lookup.find(symbol).isPresent();
    }

    /** A function of this library, bound lazily; {@code names} are tried in order (versioned first). */
    public Fn fn(FunctionDescriptor descriptor, String... names) {
        return new Fn(this, descriptor, names);
    }

    /**
     * A lazily bound downcall. {@link #name()} is the symbol that was found (e.g.
     * "cuEventElapsedTime_v2"), used in error messages so they name the real call.
     */
    public static final class Fn {
        private final NativeLibrary lib;
        private final FunctionDescriptor descriptor;
        private final String[] names;
        private volatile MethodHandle handle;
        private volatile String resolvedName;

        Fn(NativeLibrary lib, FunctionDescriptor descriptor, String[] names) {
            this.lib = lib;
            this.descriptor = descriptor;
            this.names = names.clone();
        }

        public MethodHandle handle() {
            MethodHandle h = handle;
            if (h == null) {
                synchronized (this) {
                    if (handle == null) {
                        bind();
                    }
                    h = handle;
                }
            }
            return h;
        }

        /** The bound symbol's name, or the first candidate before binding. */
        public String name() {
            String n = resolvedName;
            return n != null ? n : names[0];
        }

        public boolean available() {
            for (String n : names) {
                if (lib.lookup.find(n).isPresent()) {
                    return true;
                }
            }
            return false;
        }

        private void bind() {
            for (String n : names) {
                Optional<MemorySegment> sym = lib.lookup.find(n);
                if (sym.isPresent()) {
                    resolvedName = n;
                    handle = LINKER.downcallHandle(sym.get(), descriptor);
                    return;
                }
            }
            throw new CudaUnavailableException(lib.probe.label() + " (" + lib.probe.foundAt()
                    + ") has no symbol " + String.join(" or ", names));
        }
    }
}
