package dev.lantern.cuda.ffi;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The NVIDIA libraries of one process, each located and bound on first use, once. A library
 * that is missing is remembered as missing (with its probe), so callers and doctor ask
 * cheaply and get the same answer every time.
 */
public final class CudaLibraries {
    public static final List<String> DRIVER_NAMES = List.of("libcuda.so.1", "libcuda.so");
    public static final List<String> NVRTC_NAMES = List.of("libnvrtc.so.13", "libnvrtc.so");
    public static final List<String> CUBLASLT_NAMES = List.of("libcublasLt.so.13", "libcublasLt.so");
    public static final List<String> NVTX_NAMES = List.of("libnvtx3interop.so.1", "libnvtx3interop.so", "libnvToolsExt.so.1", "libnvToolsExt.so");

    private static volatile CudaLibraries system;

    private final LibraryLocator locator;
    private final Slot<CudaDriver> driver;
    private final Slot<Nvrtc> nvrtc;
    private final Slot<CublasLt> cublasLt;
    private final Slot<Nvtx> nvtx;

    public CudaLibraries(LibraryLocator locator) {
        this(locator, null);
    }

    private CudaLibraries(LibraryLocator locator, NativeLibrary driverLibrary) {
        this.locator = locator;
        this.driver = new Slot<>("driver", DRIVER_NAMES, CudaDriver::new);
        if (driverLibrary != null) {
            driver.preset(driverLibrary);
        }
        this.nvrtc = new Slot<>("nvrtc", NVRTC_NAMES, Nvrtc::new);
        this.cublasLt = new Slot<>("cublasLt", CUBLASLT_NAMES, CublasLt::new);
        this.nvtx = new Slot<>("nvtx", NVTX_NAMES, Nvtx::of);
    }

    /**
     * Libraries whose driver binds {@code driverLibrary} (tests: a driver over stand-in symbols,
     * so device logic runs without a GPU); the other libraries as {@code locator} finds them.
     */
    public static CudaLibraries withDriver(LibraryLocator locator, NativeLibrary driverLibrary) {
        return new CudaLibraries(locator, driverLibrary);
    }

    /** This process's libraries, found through {@link LibraryLocator#fromEnvironment()}. */
    public static CudaLibraries system() {
        CudaLibraries s = system;
        if (s == null) {
            synchronized (CudaLibraries.class) {
                if (system == null) {
                    system = new CudaLibraries(LibraryLocator.fromEnvironment());
                }
                s = system;
            }
        }
        return s;
    }

    public LibraryLocator locator() {
        return locator;
    }

    /** @throws CudaUnavailableException when libcuda cannot be found or loaded */
    public CudaDriver driver() {
        return driver.get();
    }

    public Nvrtc nvrtc() {
        return nvrtc.get();
    }

    public CublasLt cublasLt() {
        return cublasLt.get();
    }

    /** NVTX is optional: absent means a no-op. */
    public Nvtx nvtx() {
        try {
            return nvtx.get();
        } catch (CudaUnavailableException e) {
            return Nvtx.none();
        }
    }

    /** Probes every library (loading those found) and returns where each was looked for. */
    public List<LibraryProbe> probes() {
        List<LibraryProbe> out = new ArrayList<>();
        for (Slot<?> slot : List.of(driver, nvrtc, cublasLt, nvtx)) {
            out.add(slot.probe());
        }
        return out;
    }

    /** One lazily loaded library and its binding, or the reason it is missing. */
    private final class Slot<T> {
        private final String label;
        private final List<String> names;
        private final Function<NativeLibrary, T> bind;
        private LibraryProbe probe;
        private T binding;
        private RuntimeException failure;

        Slot(String label, List<String> names, Function<NativeLibrary, T> bind) {
            this.label = label;
            this.names = names;
            this.bind = bind;
        }

        synchronized T get() {
            load();
            if (binding == null) {
                throw failure;
            }
            return binding;
        }

        synchronized void preset(NativeLibrary lib) {
            probe = lib.probe();
            binding = bind.apply(lib);
        }

        synchronized LibraryProbe probe() {
            load();
            return probe;
        }

        private void load() {
            if (probe != null) {
                return;
            }
            LibraryLocator.Located located = locator.locate(label, names);
            probe = located.probe();
            if (located.lookup().isEmpty()) {
                failure = new CudaUnavailableException(probe.summary());
                return;
            }
            try {
                binding = bind.apply(new NativeLibrary(probe, located.lookup().get()));
            } catch (RuntimeException e) {
                failure = new CudaUnavailableException(label + ": loaded " + probe.foundAt()
                        + " but could not bind it: " + e.getMessage(), e);
            }
        }
    }
}
