package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CuResult;
import dev.lantern.cuda.ffi.CudaException;
import dev.lantern.cuda.ffi.CudaProcessPoisonedException;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A GPU's primary context as this process sees it: one per (driver, device), shared by every
 * {@link CudaDevice} opened on that GPU, because CUDA gives them all the same context. So a loss
 * seen through one device object is a loss for all, and a reset through one moves all to the new
 * generation ({@link ContextHealth}).
 *
 * <p>Each device object holds one reference (cuDevicePrimaryCtxRetain); {@link #reset} keeps the
 * count as it was (a reset does not release), and a new generation starts when the first
 * reference is taken after the last one went (the driver destroyed the context then).
 */
final class PrimaryContext {
    private record Key(CudaDriver driver, int device) {}

    private static final ConcurrentHashMap<Key, PrimaryContext> ALL = new ConcurrentHashMap<>();

    private final CudaDriver driver;
    private final int device;
    private final String name;
    private volatile ContextHealth current;
    private int users;
    private int generations;

    private PrimaryContext(CudaDriver driver, int device, String name) {
        this.driver = driver;
        this.device = device;
        this.name = name;
    }

    /** The primary context of CUdevice {@code device}, named {@code name} ("cuda:0") in reports. */
    static PrimaryContext of(CudaDriver driver, int device, String name) {
        return ALL.computeIfAbsent(new Key(driver, device), k -> new PrimaryContext(driver, device, name));
    }

    /** The live generation (or the lost one, until a reset). */
    ContextHealth current() {
        return current;
    }

    /** Takes one reference; returns the generation it belongs to. */
    synchronized ContextHealth retain() {
        long ctx = driver.devices().devicePrimaryCtxRetain(device);
        if (users++ == 0 || current == null) {
            current = new ContextHealth(name, ctx, ++generations);
        }
        return current;
    }

    /** Gives one reference back; the last one retires the generation (the driver destroys the context). */
    synchronized void release() {
        ContextHealth gen = current;
        forgetOnThisThread(gen);
        try {
            driver.devices().devicePrimaryCtxRelease(device);
        } catch (CudaException e) {
            if (!gen.isUnusable()) {
                throw e;
            }
            // a lost context may refuse even this; the reference goes with the process
        } finally {
            if (--users == 0) {
                gen.retire("closed");
            }
        }
    }

    /**
     * cuDevicePrimaryCtxReset, then a fresh generation: the old one is retired, so every object
     * made in it refuses work (its handles and pointers are gone with the context); the reference
     * count is unchanged (one retain to activate the context and read its handle, one release).
     */
    synchronized ContextHealth reset() {
        ContextHealth old = current;
        // failures while resetting are reported as what they are, not as the old loss
        forgetOnThisThread(old);
        ContextHealth.setCurrent(null);
        driver.devices().devicePrimaryCtxReset(device);
        old.retire("reopened");
        long ctx;
        try {
            ctx = driver.devices().devicePrimaryCtxRetain(device);
        } catch (CudaException e) {
            if (CuResult.isContextLost(e.code())) {
                throw new CudaProcessPoisonedException(name, e); // the old generation stays retired
            }
            throw e;
        }
        driver.devices().devicePrimaryCtxRelease(device);
        current = new ContextHealth(name, ctx, ++generations);
        return current;
    }

    private static void forgetOnThisThread(ContextHealth gen) {
        if (ContextHealth.current() == gen) {
            ContextHealth.setCurrent(null);
        }
    }
}
