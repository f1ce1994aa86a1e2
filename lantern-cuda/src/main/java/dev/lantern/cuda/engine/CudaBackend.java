package dev.lantern.cuda.engine;

import dev.lantern.Backend;
import dev.lantern.Device;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.ffi.CudaLibraries;
import dev.lantern.cuda.ffi.LibraryProbe;

/**
 * The CUDA backend: NVRTC-compiled kernels and cuBLASLt GEMMs on an NVIDIA GPU. Present when the
 * driver finds a GPU and NVRTC and cuBLASLt load (NVRTC not needed once a verified package has
 * registered its {@link dev.lantern.cuda.nvrtc.PrebuiltCubins}).
 */
public final class CudaBackend implements Backend {
    private volatile String reason;
    private volatile int count = -1;

    @Override
    public String kind() {
        return "cuda";
    }

    @Override
    public int deviceCount() {
        probe();
        return count;
    }

    @Override
    public String unavailableReason() {
        probe();
        return reason;
    }

    private void probe() {
        if (count >= 0) {
            return;
        }
        String why = null;
        int n = 0;
        try {
            n = CudaDevice.count();
            if (n == 0) {
                why = "no NVIDIA GPU or driver found";
            } else {
                // NVRTC is not needed when a verified package brought every kernel's cubin
                boolean prebuilt = dev.lantern.cuda.nvrtc.PrebuiltCubins.count() > 0;
                for (LibraryProbe p : CudaLibraries.system().probes()) {
                    boolean nvrtc = p.label().equals("nvrtc");
                    boolean missing = !p.found() || nvrtc && dev.lantern.cuda.nvrtc.PrebuiltCubins.nvrtcDisabled();
                    if (missing && (nvrtc && !prebuilt || p.label().equals("cublasLt"))) {
                        why = p.label() + (p.found() ? " disabled (LANTERN_DISABLE_NVRTC=1)" : " not found");
                        n = 0;
                    }
                }
            }
        } catch (RuntimeException | LinkageError e) {
            why = "CUDA driver not usable: " + e.getMessage();
            n = 0;
        }
        reason = why;
        count = n;
    }

    @Override
    public Session open(Program program, Device device, Weights weights, RunMode mode) {
        return new CudaProgramSession(program, device, weights, mode);
    }
}
