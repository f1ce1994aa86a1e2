package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.cuda.ffi.CudaDriver;
import java.util.List;

/** GPU-machine probe: after a sticky fault, which driver sequence gives a working context again. Usage: ResetProbe a|b|c. */
public final class ResetProbe {
    private ResetProbe() {}

    interface Call { Object run(); }

    static Object step(String what, Call c) {
        try {
            Object r = c.run();
            System.out.println("  " + what + ": ok " + (r == null ? "" : r));
            return r;
        } catch (Throwable t) {
            System.out.println("  " + what + ": " + t);
            return null;
        }
    }

    public static void main(String[] args) {
        String how = args[0];
        CudaDevice device = CudaDevice.open(0);
        CudaDriver d = device.driver();
        int dev = d.devices().deviceGet(0);
        CudaStream s = device.newStream(false);
        var m = ModuleCache.forDevice(device).load(device, new KernelSource("lt_probe_fault",
                "extern \"C\" __global__ void lt_probe_fault(float* p) { p[threadIdx.x] = 1.0f; }", List.of(), "probe"));
        m.kernel("lt_probe_fault").launch(s, new int[] {1}, new int[] {32}, 0, 0x10L);
        step("sync after fault", () -> { s.synchronize(); return null; });
        System.out.println("strategy " + how);
        step("ctxSetCurrent(0)", () -> { d.devices().ctxSetCurrent(0); return null; });
        switch (how) {
            case "a" -> step("reset", () -> { d.devices().devicePrimaryCtxReset(dev); return null; });
            case "b" -> step("release", () -> { d.devices().devicePrimaryCtxRelease(dev); return null; });
            default -> {
                step("reset", () -> { d.devices().devicePrimaryCtxReset(dev); return null; });
                step("release", () -> { d.devices().devicePrimaryCtxRelease(dev); return null; });
            }
        }
        Object ctx = step("retain", () -> d.devices().devicePrimaryCtxRetain(dev));
        if (ctx != null) {
            step("ctxSetCurrent(new)", () -> { d.devices().ctxSetCurrent((Long) ctx); return null; });
            step("ctxSynchronize", () -> { d.devices().ctxSynchronize(); return null; });
            step("memAlloc", () -> d.memory().memAlloc(1 << 20));
        }
    }
}
