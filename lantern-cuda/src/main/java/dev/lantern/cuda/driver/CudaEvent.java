package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaStreamApi;
import dev.lantern.runtime.Event;

/** A CUevent; timing events cost a little more to record, so they are opt-in. */
public final class CudaEvent implements Event {
    private final CudaDevice device;
    private final CudaDriver driver;
    private final ContextHealth generation;
    private final boolean timing;
    private final long handle;
    private final ReleaseOnce release;

    CudaEvent(CudaDevice device, boolean timing) {
        this.device = device;
        this.driver = device.driver();
        this.timing = timing;
        this.generation = device.generation();
        device.makeCurrent(generation);
        this.handle = driver.streams().eventCreate(
                timing ? CudaStreamApi.CU_EVENT_DEFAULT : CudaStreamApi.CU_EVENT_DISABLE_TIMING);
        this.release = new ReleaseOnce(device, generation, () -> driver.streams().eventDestroy(handle));
    }

    public long handle() {
        return handle;
    }

    public boolean timing() {
        return timing;
    }

    @Override
    public boolean isComplete() {
        device.makeCurrent(generation);
        return driver.streams().eventQuery(handle);
    }

    @Override
    public void synchronize() {
        device.makeCurrent(generation);
        driver.streams().eventSynchronize(handle);
    }

    @Override
    public float elapsedMillisSince(Event start) {
        CudaEvent s = CudaDevice.cuda(start);
        if (!timing || !s.timing) {
            throw new IllegalStateException("elapsed time needs two timing events");
        }
        device.makeCurrent(generation);
        return driver.streams().eventElapsedTime(s.handle, handle);
    }

    @Override
    public void close() {
        release.run();
    }
}
