package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.cuda.driver.CudaDevice;

/** The SM architecture ({@code sm_90}) of a CUDA device, read from the driver; for package target checks. */
final class GpuArch {
    private GpuArch() {}

    /** {@code device}'s architecture; {@link dev.lantern.cuda.ffi.CudaUnavailableException} when there is no such GPU. */
    static String of(Device device) {
        try (CudaDevice d = CudaDevice.open(device.index())) {
            return d.target().arch();
        }
    }
}
