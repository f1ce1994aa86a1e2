package dev.lantern.cuda.doctor;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.DeviceInfo;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaException;
import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.cuda.ffi.LibraryProbe;
import dev.lantern.cuda.nvrtc.CudaToolkit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The CUDA part of {@code ./lantern doctor}: each library and where it was looked for, the
 * driver version, the GPUs. Every problem (no driver, no GPU, a driver too old, NVRTC or
 * cuBLASLt missing) becomes a line that says what it means; nothing escapes as an exception.
 */
public final class CudaDoctor {
    /** NVRTC 13 emits cubins that need a CUDA 13 driver. */
    public static final int MIN_DRIVER_VERSION = 13000;

    private CudaDoctor() {}

    public static List<String> report() {
        return report(CudaLibraries.system());
    }

    public static List<String> report(CudaLibraries libs) {
        List<String> lines = new ArrayList<>();
        try {
            collect(libs, lines);
        } catch (Throwable t) { // doctor must always answer
            lines.add("cuda: unexpected error while checking: " + t);
        }
        return lines;
    }

    private static void collect(CudaLibraries libs, List<String> lines) {
        List<LibraryProbe> probes = libs.probes();
        for (LibraryProbe p : probes) {
            lines.add("cuda lib " + p.summary() + (p.found() ? "" : missingMeaning(p.label())));
            if (p.found()) {
                lines.add("  looked in: " + String.join(", ", p.lookedIn()));
            }
        }
        if (!probes.get(0).found()) {
            lines.add("cuda: no NVIDIA driver (libcuda.so.1): the CPU backend serves; set "
                    + "LANTERN_CUDA_LIBS to the folder holding libcuda.so.1 if one is installed");
            return;
        }
        CudaDriver driver;
        try {
            driver = libs.driver();
        } catch (RuntimeException e) {
            lines.add("cuda: driver library found but unusable: " + e.getMessage());
            return;
        }
        int version;
        try {
            version = driver.driverVersion();
        } catch (RuntimeException e) {
            lines.add("cuda: cuDriverGetVersion failed: " + e.getMessage());
            return;
        }
        String v = (version / 1000) + "." + (version % 1000) / 10;
        if (version < MIN_DRIVER_VERSION) {
            lines.add("cuda driver: " + v + " (" + version + ") is too old: Lantern needs CUDA "
                    + (MIN_DRIVER_VERSION / 1000) + ".0 or newer for NVRTC 13 cubins; the CPU backend serves");
        } else {
            lines.add("cuda driver: " + v + " (" + version + ")");
        }
        gpus(libs, driver, lines);
        libraryVersions(libs, lines);
        Optional<java.nio.file.Path> inc = CudaToolkit.includeDir();
        lines.add(inc.map(p -> "cuda headers: " + p + " (cuda_bf16.h)")
                .orElse("cuda headers: cuda_bf16.h not found (set CUDA_HOME); bf16 kernels rely on NVRTC's built-ins"));
    }

    private static String missingMeaning(String label) {
        return switch (label) {
            case "nvrtc" -> " -- generated kernels cannot be compiled: GPU path unavailable";
            case "cublasLt" -> " -- GEMMs unavailable on the GPU: GPU path unavailable";
            case "nvtx" -> " -- optional: profiler ranges off";
            default -> "";
        };
    }

    private static void gpus(CudaLibraries libs, CudaDriver driver, List<String> lines) {
        int count;
        try {
            driver.init();
            count = driver.devices().deviceCount();
        } catch (CudaException e) {
            lines.add("cuda: no usable GPU: " + e.getMessage());
            return;
        }
        if (count == 0) {
            lines.add("cuda: the driver sees no GPU");
            return;
        }
        for (int i = 0; i < count; i++) {
            try (CudaDevice d = CudaDevice.open(libs, i)) {
                DeviceInfo t = d.target();
                lines.add(String.format("gpu %d: %s, %s, %d SMs, %.1f GiB (%.1f GiB free), %d KiB shared/block "
                                + "opt-in, stream priorities %d..%d", i, t.name(), t.arch(), t.smCount(),
                        t.totalMemory() / (double) (1L << 30), d.freeMemory() / (double) (1L << 30),
                        t.maxSharedPerBlockOptin() / 1024, d.priorityRange()[0], d.priorityRange()[1]));
            } catch (RuntimeException e) {
                lines.add("gpu " + i + ": cannot open: " + e.getMessage());
            }
        }
    }

    private static void libraryVersions(CudaLibraries libs, List<String> lines) {
        try {
            int[] v = libs.nvrtc().version();
            lines.add("nvrtc version: " + v[0] + "." + v[1]);
        } catch (RuntimeException e) {
            lines.add("nvrtc: unusable: " + e.getMessage());
        }
        try {
            lines.add("cublasLt version: " + libs.cublasLt().version());
        } catch (RuntimeException e) {
            lines.add("cublasLt: unusable: " + e.getMessage());
        }
    }
}
