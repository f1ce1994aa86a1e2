package dev.lantern.cli.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.frontend.nn.BlockConfig;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code lantern demo --device cuda}'s figures on the GPU: decoder-small within bf16 tolerance of
 * the float64 reference, and a graph-replay session that only ever replays. The demo opens GPU 0
 * itself, as the command does. Ordered just after {@code CudaSessionGpuTest} (50), as when it was
 * one of that class's tests: the tier's shared device is open by then, so the demo's device object
 * shares its primary context instead of creating and destroying one before the others run.
 */
@Tag("gpu")
@Order(51)
class CudaDemoGpuTest {
    @Test
    void demoFiguresOnDecoderSmall() {
        CudaDemo.Result r = CudaDemo.measure(BlockConfig.named("decoder-small"), 7, 20);
        System.out.println("[gpu] demo {" + r.jsonFields() + "}");
        assertTrue(r.relErr() <= 2e-2, "rel err " + r.relErr());
        // the graph session's every forward (10 warm-ups, 20 timed) replays; the capture counts as one
        assertEquals(100.0, r.graphHitPct(), "graph hit " + r.graphHitPct());
        assertTrue(r.compiledMs() > 0 && r.eagerMs() > 0 && r.graphMs() > 0);
    }
}
