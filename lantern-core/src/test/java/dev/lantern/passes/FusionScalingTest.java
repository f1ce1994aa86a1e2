package dev.lantern.passes;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.Pipeline;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.Verifier;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fusion time grows linearly with the graph (issue 12: a 5,000-op chain took 52 s in fuse-elementwise,
 * because the engine rebuilt the graph and eliminated dead code after every rewrite). The bounds are
 * loose for a slow, shared CI machine and still an order of magnitude under the old code's times.
 */
class FusionScalingTest {
    /** x -> exp -> neg -> tanh -> ... : n elementwise ops, one reader each, and a shared scalar constant every fourth op. */
    static Graph chain(int n) {
        TensorType t = TensorType.of(DType.F32, 8, 16);
        List<Node> nodes = new ArrayList<>();
        nodes.add(new Node("x", Op.INPUT, List.of(), Attrs.of("name", "x"), t));
        nodes.add(new Node("c", Op.CONSTANT, List.of(), Attrs.of("value", 0.5), TensorType.of(DType.F32)));
        Op[] ops = {Op.EXP, Op.NEG, Op.TANH, Op.MUL};
        String prev = "x";
        for (int i = 0; i < n; i++) {
            Op op = ops[i % ops.length];
            List<String> ins = op == Op.MUL ? List.of(prev, "c") : List.of(prev);
            nodes.add(new Node("v" + i, op, ins, Attrs.EMPTY, t));
            prev = "v" + i;
        }
        return new Graph("chain", nodes, List.of(prev));
    }

    /** CPU milliseconds of this thread (the passes are single-threaded): robust to a loaded CI machine, unlike wall time. */
    private static long millis(Runnable r) {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long t0 = mx.getCurrentThreadCpuTime();
        r.run();
        return (mx.getCurrentThreadCpuTime() - t0) / 1_000_000;
    }

    @Test
    void twentyThousandOpChainFusesInSeconds() {
        Pass fuse = Passes.byName("fuse-elementwise");
        fuse.run(Verifier.verify(chain(2_000))); // warm the JIT so that the two timings compare like with like
        Graph small = Verifier.verify(chain(2_000));
        long msSmall = Math.min(millis(() -> fuse.run(small)), millis(() -> fuse.run(small)));
        Graph g = Verifier.verify(chain(20_000));
        Graph[] out = {null};
        long ms = millis(() -> out[0] = fuse.run(g));
        // the old engine: ~52 s at 5,000 ops, and quadratic, so some 14 minutes here
        assertTrue(ms < 10_000, "fuse-elementwise on 20,000 ops took " + ms + " ms of CPU");
        // 10x the ops: ~10x the time when linear, 100x when quadratic. The bound (40x) leaves room
        // for a machine shared with other builds, where even CPU time of linear code has varied by
        // 2.5x between the sizes (GC of the larger graph), far below what quadratic work gives
        assertTrue(ms < 40 * Math.max(msSmall, 25), "20,000 ops took " + ms + " ms, 2,000 ops " + msSmall + " ms: not linear");
        Verifier.verify(out[0]);
        long fused = out[0].nodes().stream().filter(n -> n.op() == Op.ELEMENTWISE_FUSED).count();
        // chunks of at most MAX_CALLS ops each, and every op in one of them
        assertTrue(fused >= 20_000 / FuseElementwise.MAX_CALLS && fused <= 2 * 20_000 / FuseElementwise.MAX_CALLS + 1, fused + " fused ops");
        assertEquals(fused + 1, out[0].nodes().size(), "only the fused ops and the input remain (the constant is inlined)");
        System.out.println("fuse-elementwise CPU time: 2,000 ops " + msSmall + " ms, 20,000 ops " + ms + " ms");
    }

    @Test
    void standardPipelineOnAFiveThousandOpChainIsFast() {
        Graph g = Verifier.verify(chain(5_000));
        long ms = millis(() -> Pipeline.standard(CompileOptions.defaults()).run(g));
        assertTrue(ms < 10_000, "the standard pipeline on 5,000 ops took " + ms + " ms of CPU");
        System.out.println("standard pipeline CPU time, 5,000 ops: " + ms + " ms");
    }
}
