package dev.lantern.cuda.engine;

import dev.lantern.cuda.doctor.CudaDoctor;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaSegmentSource;
import dev.lantern.cuda.ffi.CudaUnavailableException;
import dev.lantern.runtime.alloc.SegmentSource;
import dev.lantern.runtime.alloc.SegmentSourceProvider;

/**
 * The "cuda" segment source for device-agnostic tools (the allocator soak), found through
 * ServiceLoader (META-INF/services). Opens GPU 0; the returned source owns the device and
 * closes it. Stream markers are left to the caller (the soak launches no kernels).
 */
public final class CudaSegmentSourceProvider implements SegmentSourceProvider {
    @Override
    public String device() {
        return "cuda";
    }

    /** @throws CudaUnavailableException with one line saying why (no driver, no GPU) */
    @Override
    public SegmentSource open() {
        if (CudaDevice.count() == 0) {
            throw new CudaUnavailableException("no CUDA GPU: " + firstLine(CudaDoctor.report()));
        }
        return new CudaSegmentSource(CudaDevice.open(0), true);
    }

    private static String firstLine(java.util.List<String> doctor) {
        for (String l : doctor) {
            if (l.contains("not found") || l.contains("no usable GPU") || l.contains("sees no GPU")
                    || l.contains("too old")) {
                return l;
            }
        }
        return "the driver reports no device";
    }
}
