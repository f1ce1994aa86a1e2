package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.ffi.CuResult;
import dev.lantern.cuda.ffi.CudaException;
import dev.lantern.cuda.ffi.CudaProcessPoisonedException;
import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.engine.DemoMetrics;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A real sticky error, and the way back (issue 12, deliverable 5). A kernel writes through the
 * address 0x10; the next synchronisation fails with CUDA_ERROR_ILLEGAL_ADDRESS, which the
 * device reports as {@link CudaContextLostException} naming that call and the step; later
 * calls throw the same report instead of failing one by one; closing what was open throws
 * nothing; {@link CudaDevice#reopen()} resets the primary context, after which a kernel and a
 * small {@link CudaSession} forward are right again, in the same process.
 *
 * <p>Runs LAST ({@link Order} {@code MAX_VALUE}; {@link ZzFreeMemoryGpuTest}, which measures
 * memory against the start of the tier, runs just before): the primary context is shared by
 * the whole tier, and the reset destroys everything in it.
 */
@Tag("gpu")
@Order(Integer.MAX_VALUE)
class ZzzContextLossGpuTest {
    private static final String FAULT = """
            extern "C" __global__ void lt_test_fault(float* p) {
                p[threadIdx.x] = 1.0f; // p = 0x10: no allocation there
            }
            """;
    private static final String STEP = "lt_test_fault (writes through 0x10)";

    @Test
    void aStickyFaultIsReportedRefusedAndReopened() {
        CudaDevice device = Gpu.device();
        BlockConfig cfg = new BlockConfig("ctx-loss", 1, 45, 96, 3, 160, true);
        Model model = TransformerBlock.build(cfg, DType.BF16);
        long seed = 12_2026;
        Map<String, Tensor> params = model.parameters(seed);
        Map<String, Tensor> inputs = DemoMetrics.inputs(model.graph(), seed);

        // open before the fault: a session, a stream, memory, a module
        CudaSession before = CudaSession.open(device, model.graph(), params, CudaSession.Options.compiled());
        before.setInputs(inputs);
        before.forward();
        before.synchronize();
        CudaStream stream = device.newStream(false);
        CudaStorage memory = device.allocate(1 << 20);
        CudaModule fault = Gpu.cache().load(device, new KernelSource("lt_test_fault", FAULT, List.of(), "ctx-loss"));

        device.step(STEP);
        fault.kernel("lt_test_fault").launch(stream, new int[] {1}, new int[] {32}, 0, 0x10L);
        CudaContextLostException lost = assertThrows(CudaContextLostException.class, stream::synchronize);
        System.out.println("[gpu] context loss: " + lost.getMessage());
        assertEquals("cuStreamSynchronize", lost.call());
        assertTrue(CuResult.isContextLost(lost.code()), lost.errorName());
        assertEquals(CuResult.CUDA_ERROR_ILLEGAL_ADDRESS, lost.code(), lost.errorName());
        assertEquals(STEP, lost.step());
        assertTrue(lost.getMessage().contains("context lost at cuStreamSynchronize")
                && lost.getMessage().contains("during step " + STEP), lost.getMessage());
        assertTrue(device.isLost());

        // every later call: the same report, typed, not a cascade of unrelated failures
        for (Runnable later : new Runnable[] {() -> device.newStream(false), () -> device.allocate(1 << 20),
                device::synchronize, () -> stream.memset(memory, 0, (byte) 0, 64), before::forward,
                () -> CudaSession.open(device, model.graph(), params, CudaSession.Options.eager())}) {
            CudaContextLostException refused = assertThrows(CudaContextLostException.class, later::run);
            assertEquals(lost.getMessage(), refused.getMessage());
        }
        // closing what was open: quiet, the context is gone
        assertDoesNotThrow(() -> {
            before.close();
            memory.close();
            fault.close();
            stream.close();
            Gpu.releaseShared();
        });

        try {
            device.reopen();
        } catch (CudaProcessPoisonedException poisoned) {
            // what driver 580.159.04 does after ILLEGAL_ADDRESS: the reset succeeds and the next
            // retain fails with the same code; the device says so, and keeps refusing, typed
            System.out.println("[gpu] reopen refused: " + poisoned.getMessage());
            assertEquals(CuResult.CUDA_ERROR_ILLEGAL_ADDRESS, poisoned.code(), poisoned.errorName());
            assertTrue(poisoned.getMessage().contains("restart the process"), poisoned.getMessage());
            assertTrue(device.isLost());
            assertThrows(CudaException.class, () -> device.newStream(false));
            return;
        }
        assertFalse(device.isLost());
        System.out.println("[gpu] reopened " + device + " as " + device.generation());

        // a kernel runs right again
        CudaModule kernels = Gpu.cache().load(device, Gpu.testKernels());
        try (CudaStream s = device.newStream(false); CudaStorage x = device.allocate(4L * 1000)) {
            float[] host = new float[1000];
            Random r = new Random(seed);
            for (int i = 0; i < host.length; i++) {
                host[i] = (float) r.nextGaussian();
            }
            Gpu.upload(s, host, x);
            kernels.kernel("add_one").launch(s, new int[] {Gpu.blocks(1000, 256)}, new int[] {256}, 0, x, 1000);
            float[] out = Gpu.download(s, x, 1000);
            for (int i = 0; i < host.length; i++) {
                assertEquals(host[i] + 1.0f, out[i], 0f, "element " + i);
            }
        } finally {
            kernels.close();
        }

        // and a small compiled forward (generated kernels, cuBLASLt, a graph replay) matches float64
        Map<String, Tensor> all = new LinkedHashMap<>(params);
        all.putAll(inputs);
        double[] ref = ReferenceInterpreter.run(model.graph(), all).get(model.graph().outputs().getFirst()).data();
        try (CudaSession after = CudaSession.open(device, model.graph(), params,
                CudaSession.Options.compiled().withPolicy(GraphPolicy.REQUIRE))) {
            after.setInputs(inputs);
            after.poison();
            after.forward();
            double e = DemoMetrics.relErr(after.output().toDoubles(), ref);
            after.poison();
            after.forwardGraph();
            after.forwardGraph();
            double g = DemoMetrics.relErr(after.output().toDoubles(), ref);
            System.out.printf("[gpu] after reopen: %s compiled rel_err=%.2e, graph replay rel_err=%.2e%n", cfg.name(), e, g);
            assertTrue(e <= 2e-2, "compiled rel err " + e);
            assertTrue(g <= 2e-2, "replay rel err " + g);
        }
        assertSame(device, Gpu.device());
    }
}
