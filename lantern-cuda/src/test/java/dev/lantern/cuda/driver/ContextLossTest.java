package dev.lantern.cuda.driver;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.cuda.ffi.CudaException;
import dev.lantern.cuda.ffi.CudaOutOfMemoryException;
import dev.lantern.runtime.alloc.Allocation;
import dev.lantern.runtime.alloc.AllocatorConfig;
import dev.lantern.runtime.alloc.CachingAllocator;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The device side of a lost context, over {@link FakeDriver}: the sticky failure is reported
 * once with its call and step, later work is refused without calling the driver, closing is
 * quiet and frees nothing, and {@link CudaDevice#reopen()} resets the primary context and runs
 * again. The real thing on a GPU: {@code gpu.ZzzContextLossGpuTest}.
 */
class ContextLossTest {
    private static final IntFunction<String> STEPS = i -> "#" + i + " lt_rms_norm_bf16 [vec8]";

    @AfterEach
    void noCurrent() {
        ContextHealth.setCurrent(null);
    }

    @Test
    void aStickyFailureIsReportedOnceAndLaterWorkIsRefusedWithoutTheDriver() {
        FakeDriver fake = new FakeDriver();
        CudaDevice device = CudaDevice.open(fake.libraries(), 0);
        CudaStream stream = device.newStream(false);
        CudaEvent event = device.newEvent(false);
        CudaStorage memory = device.allocate(4096);
        CudaStorage pinned = device.allocatePinned(4096);
        CudaModule module = device.loadModule(new byte[] {1, 2, 3}, "key");
        CudaModule.CudaKernel kernel = module.kernel("k");
        kernel.launch(stream, new int[] {1}, new int[] {32}, 0, memory);
        for (int i = 0; i < 3; i++) {
            device.step(STEPS, i);
        }

        fake.failOnce("cuStreamSynchronize", 700);
        CudaContextLostException lost = assertThrows(CudaContextLostException.class, stream::synchronize);
        assertEquals("cuStreamSynchronize", lost.call());
        assertEquals(700, lost.code());
        assertEquals("#2 lt_rms_norm_bf16 [vec8]", lost.step());
        assertTrue(lost.getMessage().startsWith("cuda:0: context lost at cuStreamSynchronize: "
                + "CUDA_ERROR_ILLEGAL_ADDRESS during step #2 lt_rms_norm_bf16 [vec8]"), lost.getMessage());
        assertTrue(device.isLost());
        assertEquals(lost.getMessage(), device.lost().getMessage());

        int calls = fake.total();
        for (Runnable later : new Runnable[] {
                () -> device.newStream(true), () -> device.allocate(16), () -> device.allocatePinned(16),
                device::synchronize, device::freeMemory, () -> device.newEvent(true), stream::synchronize,
                () -> kernel.launch(stream, new int[] {1}, new int[] {32}, 0, memory), event::synchronize,
                () -> device.loadModule(new byte[] {1}, "k2"), () -> stream.memset(memory, 0, (byte) 0, 16),
                () -> device.defaultStream().synchronize()}) {
            CudaContextLostException refused = assertThrows(CudaContextLostException.class, later::run);
            assertEquals(lost.getMessage(), refused.getMessage());
            assertEquals("cuStreamSynchronize", refused.call());
        }
        assertEquals(calls, fake.total(), "a lost device refuses before calling the driver");

        // closing after the loss: quiet, and nothing is freed into a dead context
        assertDoesNotThrow(() -> {
            memory.close();
            pinned.close();
            event.close();
            module.close();
            stream.close();
        });
        assertEquals(calls, fake.total());
        assertEquals(0, fake.calls("cuMemFree_v2") + fake.calls("cuMemFreeHost") + fake.calls("cuStreamDestroy_v2")
                + fake.calls("cuEventDestroy_v2") + fake.calls("cuModuleUnload"));

        device.close();
        assertEquals(fake.calls("cuDevicePrimaryCtxRetain"), fake.calls("cuDevicePrimaryCtxRelease_v2"));
    }

    @Test
    void reopenResetsThePrimaryContextAndWorkRunsAgain() {
        FakeDriver fake = new FakeDriver();
        CudaDevice device = CudaDevice.open(fake.libraries(), 0);
        CudaStream old = device.newStream(false);
        CudaStorage oldMemory = device.allocate(1024);
        ContextHealth first = device.generation();
        fake.failOnce("cuLaunchKernel", 719);
        CudaModule.CudaKernel kernel = device.loadModule(new byte[] {1}, "key").kernel("k");
        device.step("probe kernel");
        CudaContextLostException lost = assertThrows(CudaContextLostException.class,
                () -> kernel.launch(old, new int[] {1}, new int[] {1}, 0));
        assertEquals("cuLaunchKernel", lost.call());
        assertEquals("probe kernel", lost.step());

        device.reopen();
        assertEquals(1, fake.calls("cuDevicePrimaryCtxReset_v2"));
        assertFalse(device.isLost());
        assertNull(device.lost());
        assertNotSame(first, device.generation());
        assertEquals(first.generation() + 1, device.generation().generation());

        try (CudaStream fresh = device.newStream(false); CudaStorage memory = device.allocate(1024)) {
            fresh.memset(memory, 0, (byte) 1, 1024);
            fresh.synchronize();
            device.defaultStream().synchronize();
            device.synchronize();
        }
        // objects of the old context stay invalid, and say so
        CudaContextLostException stale = assertThrows(CudaContextLostException.class, old::synchronize);
        assertTrue(stale.retired());
        assertTrue(stale.getMessage().contains("context generation 1 was reopened after it was lost"), stale.getMessage());
        assertThrows(CudaContextLostException.class, () -> kernel.launch(old, new int[] {1}, new int[] {1}, 0));
        int frees = fake.calls("cuMemFree_v2");
        assertDoesNotThrow(() -> {
            oldMemory.close(); // its address may name new memory now: must not be freed
            old.close();
        });
        assertEquals(frees, fake.calls("cuMemFree_v2"));

        device.close();
        assertEquals(fake.calls("cuDevicePrimaryCtxRetain"), fake.calls("cuDevicePrimaryCtxRelease_v2"),
                "reopen keeps the reference count");
    }

    @Test
    void deviceObjectsOnOneGpuShareTheContextAndItsLoss() {
        FakeDriver fake = new FakeDriver();
        CudaDevice a = CudaDevice.open(fake.libraries(), 0);
        CudaDevice b = CudaDevice.open(a.libraries(), 0);
        fake.failOnce("cuCtxSynchronize", 710);
        assertThrows(CudaContextLostException.class, a::synchronize);
        CudaContextLostException viaB = assertThrows(CudaContextLostException.class, () -> b.newStream(false));
        assertEquals("cuCtxSynchronize", viaB.call());
        assertEquals(710, viaB.code());

        a.reopen();
        assertFalse(b.isLost());
        assertDoesNotThrow(() -> b.defaultStream().synchronize()); // made anew in the new generation
        b.close();
        a.close();
        assertEquals(fake.calls("cuDevicePrimaryCtxRetain"), fake.calls("cuDevicePrimaryCtxRelease_v2"));
    }

    @Test
    void aLossDuringCaptureIsTheLossNotACaptureFailure() {
        FakeDriver fake = new FakeDriver();
        CudaDevice device = CudaDevice.open(fake.libraries(), 0);
        CudaStream stream = device.newStream(false);
        CudaModule.CudaKernel kernel = device.loadModule(new byte[] {1}, "key").kernel("k");
        try (GraphRunner graphs = new GraphRunner(device, dev.lantern.runtime.GraphPolicy.REQUIRE)) {
            fake.failOnce("cuLaunchKernel", 715);
            CudaContextLostException lost = assertThrows(CudaContextLostException.class,
                    () -> graphs.run("forward", stream, () -> kernel.launch(stream, new int[] {1}, new int[] {1}, 0)));
            assertEquals("cuLaunchKernel", lost.call());
            assertEquals(0, graphs.stats().captureFailures(), "not counted as a capture failure");
            assertNull(graphs.lastFailure());
        }
        device.close();
    }

    @Test
    void nonStickyFailuresLeaveTheDeviceUsable() {
        FakeDriver fake = new FakeDriver();
        try (CudaDevice device = CudaDevice.open(fake.libraries(), 0)) {
            fake.failOnce("cuMemAlloc_v2", 2);
            assertThrows(CudaOutOfMemoryException.class, () -> device.allocate(1L << 40));
            fake.failOnce("cuStreamSynchronize", 1);
            CudaException bad = assertThrows(CudaException.class, () -> device.defaultStream().synchronize());
            assertFalse(bad instanceof CudaContextLostException);
            assertEquals("CUDA_ERROR_INVALID_VALUE", bad.errorName());
            assertFalse(device.isLost());
            device.allocate(16).close();
        }
    }

    @Test
    void theAllocatorEmptiesItsCacheQuietlyAfterALoss() {
        FakeDriver fake = new FakeDriver();
        CudaDevice device = CudaDevice.open(fake.libraries(), 0);
        CudaStream stream = device.newStream(false);
        CudaSegmentSource source = new CudaSegmentSource(device);
        CachingAllocator alloc = new CachingAllocator(source, new StreamTailSync().add(stream), AllocatorConfig.defaults());
        Allocation a = alloc.allocate(3 << 20, stream.handle());
        fake.failOnce("cuStreamSynchronize", 700);
        assertThrows(CudaContextLostException.class, stream::synchronize);
        int frees = fake.calls("cuMemFree_v2");
        assertDoesNotThrow(() -> {
            alloc.free(a);
            alloc.emptyCache();
            stream.close();
        });
        assertEquals(frees, fake.calls("cuMemFree_v2"));
        CudaContextLostException refused = assertThrows(CudaContextLostException.class,
                () -> alloc.allocate(64 << 20, stream.handle()));
        assertEquals("cuStreamSynchronize", refused.call());
        assertInstanceOf(CudaContextLostException.class, refused.getCause());
        device.close();
    }
}
