package dev.lantern.cuda.gpu;

import dev.lantern.trace.RuntimeCounters;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.runtime.GraphPolicy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What kernel_launches_total, compiles_total and compile_cache_hits_total read on the GPU
 * ({@link RuntimeCounters}): a forward and a graph replay each count one launch per step (kernels and
 * cuBLASLt calls), the session's priming runs none; a session's generated kernels are compiled or found
 * in the module cache as it opens, and a second session of the same block finds every one compiled.
 */
@Tag("gpu")
class RuntimeCountersGpuTest {
    @Test
    void forwardsReplaysAndModuleLoadsAreCounted() {
        CudaDevice dev = Gpu.device();
        Model model = TransformerBlock.build(BlockConfig.named("decoder-small"), DType.BF16);
        long loaded0 = RuntimeCounters.compiles() + RuntimeCounters.cacheHits();
        try (CudaSession s = CudaSession.open(dev, model.graph(), null, CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER))) {
            long loaded = RuntimeCounters.compiles() + RuntimeCounters.cacheHits() - loaded0;
            assertTrue(loaded >= 1 && loaded <= s.deviceOps(), "each generated kernel compiled or found once: " + loaded
                    + " for " + s.deviceOps() + " steps");
            s.fillInputs(18);
            long launches0 = RuntimeCounters.launches();
            s.forward();
            s.forward();
            s.forward();
            s.forwardGraph(); // captured
            s.forwardGraph(); // replayed
            dev.synchronize();
            assertEquals(5L * s.deviceOps(), RuntimeCounters.launches() - launches0, "one launch per step per forward or replay");
            System.out.printf("[gpu] counters: %d steps a forward, %d kernels compiled or found%n", s.deviceOps(), loaded);
        }
        long compiles1 = RuntimeCounters.compiles();
        long hits1 = RuntimeCounters.cacheHits();
        try (CudaSession again = CudaSession.open(dev, model.graph(), null, CudaSession.Options.compiled())) {
            assertEquals(compiles1, RuntimeCounters.compiles(), "the second session compiles nothing");
            assertTrue(RuntimeCounters.cacheHits() > hits1, "it finds its kernels in the module cache");
        }
    }
}
