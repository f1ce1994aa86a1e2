package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.codegen.CudaTarget;

/**
 * The one place where the runtime's device facts ({@code dev.lantern.cuda.driver.DeviceInfo}, read
 * from the driver) become the codegen's target ({@code dev.lantern.cuda.codegen.CudaTarget}):
 * architecture, SM count and opt-in shared memory from the device, tile choices from the
 * tuned H200 defaults (the only Hopper part this project measures on).
 */
public final class CudaTargets {
    private CudaTargets() {
    }

    public static CudaTarget of(dev.lantern.cuda.driver.DeviceInfo device) {
        CudaTarget h = CudaTarget.H200;
        return new CudaTarget(device.arch(), device.smCount(), h.warpSize(), h.maxThreadsPerBlock(),
                device.maxSharedPerBlockOptin(), h.vectorBytes(), h.dtypes(), h.rowVectorsPerThread(),
                h.attention64(), h.attention128(), device.ccMajor() >= 8,
                device.ccMajor() == 9 && device.arch().equals("sm_90") ? h.wgmmaAttention() : null);
    }

    public static CudaTarget of(CudaDevice device) {
        return of(device.target());
    }
}
