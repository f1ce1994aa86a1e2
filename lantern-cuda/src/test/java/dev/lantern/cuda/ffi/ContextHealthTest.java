package dev.lantern.cuda.ffi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The sticky-code classification and the LIVE → LOST → RETIRED state machine, without a GPU. */
class ContextHealthTest {
    private static CudaException failed(String call, int code) {
        return new CudaException(call, code, CuResult.name(code), "detail of " + code);
    }

    @AfterEach
    void noCurrent() {
        ContextHealth.setCurrent(null);
    }

    @Test
    void stickyCodesAreTheContextCorruptingOnesOfCudaH() {
        for (int code : new int[] {214, 220, 226, 700, 702, 709, 710, 714, 715, 716, 717, 718, 719, 721, 911}) {
            assertTrue(CuResult.isContextLost(code), CuResult.name(code));
        }
        // usable after these: out of memory, bad arguments, not ready, launch resources, capture, peers
        for (int code : new int[] {0, 1, 2, 3, 101, 201, 400, 500, 600, 701, 704, 708, 720, 801, 900, 901, 999}) {
            assertFalse(CuResult.isContextLost(code), CuResult.name(code));
        }
        assertEquals("CUDA_ERROR_ILLEGAL_ADDRESS", CuResult.name(CuResult.CUDA_ERROR_ILLEGAL_ADDRESS));
        assertEquals("CUDA_ERROR_LAUNCH_FAILED", CuResult.name(CuResult.CUDA_ERROR_LAUNCH_FAILED));
    }

    @Test
    void aNonStickyFailureLeavesTheContextLive() {
        ContextHealth h = new ContextHealth("cuda:0", 0x1234, 1);
        CudaException oom = failed("cuMemAlloc_v2", 2);
        assertSame(oom, h.classify(oom));
        CudaException bad = failed("cuLaunchKernel", 1);
        assertSame(bad, h.classify(bad));
        h.ensureUsable();
        assertFalse(h.isUnusable());
        assertNull(h.lost());
    }

    @Test
    void theFirstStickyFailureIsRecordedOnceWithItsCallAndStep() {
        ContextHealth h = new ContextHealth("cuda:0", 0x1234, 1);
        AtomicInteger named = new AtomicInteger();
        IntFunction<String> names = i -> {
            named.incrementAndGet();
            return "#" + i + " gemm 3000x1536x1536";
        };
        for (int i = 0; i < 5; i++) {
            h.step(names, i);
        }
        assertEquals(0, named.get(), "a step's name is built only when a loss is recorded");

        CudaException first = h.classify(failed("cuStreamSynchronize", 700));
        CudaContextLostException lost = assertInstanceOf(CudaContextLostException.class, first);
        assertEquals(1, named.get());
        assertEquals("cuStreamSynchronize", lost.call());
        assertEquals(700, lost.code());
        assertEquals("CUDA_ERROR_ILLEGAL_ADDRESS", lost.errorName());
        assertEquals("#4 gemm 3000x1536x1536", lost.step());
        assertEquals("cuda:0", lost.device());
        assertFalse(lost.retired());
        assertEquals("cuda:0: context lost at cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (detail of 700) during "
                + "step #4 gemm 3000x1536x1536 (the last step issued); reopen the device (CudaDevice.reopen()), or restart the process where the driver keeps the error",
                lost.getMessage());
        assertSame(lost, h.lost());

        // later failures, sticky or not, are that loss, not new errors
        h.step(names, 9);
        for (CudaException later : List.of(failed("cuStreamCreateWithPriority", 700), failed("cuMemFree_v2", 1),
                failed("cuLaunchKernel", 719))) {
            CudaContextLostException again = assertInstanceOf(CudaContextLostException.class, h.classify(later));
            assertNotSame(lost, again, "a fresh instance per refusal: no self-suppression in try-with-resources");
            assertSame(lost, again.getCause());
            assertEquals(lost.getMessage(), again.getMessage());
            assertEquals("cuStreamSynchronize", again.call());
            assertEquals("#4 gemm 3000x1536x1536", again.step());
        }
        CudaContextLostException refused = assertThrows(CudaContextLostException.class, h::ensureUsable);
        assertEquals(lost.getMessage(), refused.getMessage());
        assertEquals(1, named.get(), "the step is named once, at the loss");
        assertTrue(h.isUnusable());
        assertFalse(h.isRetired());
    }

    @Test
    void aLossWithoutANamedStepSaysSo() {
        ContextHealth h = new ContextHealth("cuda:1", 1, 1);
        CudaContextLostException lost = (CudaContextLostException) h.classify(failed("cuCtxSynchronize", 719));
        assertNull(lost.step());
        assertTrue(lost.getMessage().contains("during an unnamed step"), lost.getMessage());
        h.step("label object");
        assertNull(h.lost().step(), "the step named after the loss does not rewrite it");
    }

    @Test
    void aPlainLabelIsFormattedOnlyAtTheLoss() {
        ContextHealth h = new ContextHealth("cuda:0", 1, 1);
        AtomicInteger formatted = new AtomicInteger();
        Object label = new Object() {
            @Override
            public String toString() {
                formatted.incrementAndGet();
                return "CUDA graph replay (12 kernels)";
            }
        };
        h.step(label);
        assertEquals(0, formatted.get());
        CudaContextLostException lost = (CudaContextLostException) h.classify(failed("cuGraphLaunch", 716));
        assertEquals("CUDA graph replay (12 kernels)", lost.step());
        assertEquals(1, formatted.get());
    }

    @Test
    void retiringRefusesTheOldGenerationAndKeepsTheLoss() {
        ContextHealth h = new ContextHealth("cuda:0", 1, 3);
        h.step("#2 lt_softmax");
        CudaContextLostException lost = (CudaContextLostException) h.classify(failed("cuMemcpyDtoH_v2", 700));
        h.retire("reopened");
        h.retire("closed"); // idempotent: the first reason stays
        CudaContextLostException stale = assertThrows(CudaContextLostException.class, h::ensureUsable);
        assertTrue(stale.retired());
        assertTrue(h.isRetired());
        assertTrue(stale.getMessage().startsWith("cuda:0: context generation 3 was reopened after it was lost ("
                + lost.getMessage() + ")"), stale.getMessage());
        assertEquals("cuMemcpyDtoH_v2", stale.call());
        assertEquals("#2 lt_softmax", stale.step());
        assertSame(lost, h.lost());

        ContextHealth live = new ContextHealth("cuda:0", 2, 4);
        live.retire("closed");
        CudaContextLostException closed = assertThrows(CudaContextLostException.class, live::ensureUsable);
        assertEquals("cuda:0: context generation 4 was closed; objects created in it are invalid: create them "
                + "again on the device", closed.getMessage());
        assertNull(live.lost());
    }

    @Test
    void theDriverClassifiesAgainstTheGenerationCurrentOnTheCallingThread() {
        CudaException bare = ContextHealth.classifyOnCurrentThread(failed("cuCtxSynchronize", 700));
        CudaContextLostException noDevice = assertInstanceOf(CudaContextLostException.class, bare);
        assertNull(noDevice.device());
        assertTrue(noDevice.getMessage().startsWith("CUDA: context lost at cuCtxSynchronize"), noDevice.getMessage());
        CudaException oom = failed("cuMemAlloc_v2", 2);
        assertSame(oom, ContextHealth.classifyOnCurrentThread(oom));

        ContextHealth a = new ContextHealth("cuda:0", 1, 1);
        ContextHealth b = new ContextHealth("cuda:1", 2, 1);
        ContextHealth.setCurrent(a);
        ContextHealth.classifyOnCurrentThread(failed("cuStreamSynchronize", 719));
        assertTrue(a.isUnusable());
        assertFalse(b.isUnusable(), "the loss is per context");
        ContextHealth.setCurrent(b);
        CudaException other = failed("cuMemAlloc_v2", 2);
        assertSame(other, ContextHealth.classifyOnCurrentThread(other));
    }

    @Test
    void racingFailuresRecordOneFirstLoss() throws InterruptedException {
        ContextHealth h = new ContextHealth("cuda:0", 1, 1);
        int threads = 8;
        CountDownLatch start = new CountDownLatch(1);
        List<CudaException> seen = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Thread> all = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread th = new Thread(() -> {
                try {
                    start.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                seen.add(h.classify(failed("call" + id, 700)));
            });
            th.start();
            all.add(th);
        }
        start.countDown();
        for (Thread th : all) {
            th.join();
        }
        CudaContextLostException first = h.lost();
        long firsts = seen.stream().filter(e -> e == first).count();
        assertEquals(1, firsts);
        assertTrue(seen.stream().allMatch(e -> e.getMessage().equals(first.getMessage())));
    }
}
