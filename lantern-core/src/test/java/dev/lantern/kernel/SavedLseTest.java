package dev.lantern.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Op;
import dev.lantern.passes.Partition;
import dev.lantern.plan.Buffer;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.plan.MemoryPlanner;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A training step's attention_lse is written by its forward attention's kernel on CUDA (a side
 * output, no kernel of its own, live from the forward to its last reader) and stays a kernel of
 * its own on the CPU; an attention_lse whose scores differ from every forward's keeps its kernel.
 */
class SavedLseTest {
    /** attention's flash gradient as autodiff emits it (autodiff-golden/attention_flash.grad): rope, causal, 4 query heads over 2. */
    private static String step(String fwdAttrs, String ropeAttrs, String lseAttrs) {
        return """
                graph @g {
                  %x = input {name="x"} : f32[1,4,5,6]
                  %k = param {name="k"} : f32[1,2,7,6]
                  %v = param {name="v"} : f32[1,2,7,6]
                  %q = mul(%x, %x) : f32[1,4,5,6]
                  %y = attention(%q, %k, %v) FWD : f32[1,4,5,6]
                  %dy = mul(%y, %y) : f32[1,4,5,6]
                  %rq = rope(%q) ROPE : f32[1,4,5,6]
                  %rk = rope(%k) ROPE : f32[1,2,7,6]
                  %lse = attention_lse(%rq, %rk) LSE : f32[1,4,5]
                  %dq = attention_grad_q(%rq, %rk, %v, %y, %dy, %lse) {causal=true, scale=0.4} : f32[1,4,5,6]
                  %dkv = attention_grad_kv(%rq, %rk, %v, %y, %dy, %lse) {causal=true, scale=0.4} : f32[2,1,2,7,6]
                  return %dq, %dkv
                }
                """.replace("FWD", fwdAttrs).replace("ROPE", ropeAttrs).replace("LSE", lseAttrs);
    }

    private static final String FWD = "{causal=true, rope=true, rope_base=500.0, scale=0.4}";
    private static final String ROPE = "{base=500.0}";
    private static final String LSE = "{causal=true, scale=0.4}";

    @Test
    void theForwardWritesTheLseOnCudaAndItLivesToItsLastReader() {
        Graph g = IrParser.parse(step(FWD, ROPE, LSE));
        List<Kernel> ks = new Partition(Target.cuda()).kernels(g);
        assertTrue(ks.stream().noneMatch(k -> k.node().op() == Op.ATTENTION_LSE));
        Kernel fwd = ks.stream().filter(k -> k.node().op() == Op.ATTENTION).findFirst().orElseThrow();
        assertEquals(List.of("lse"), fwd.sideOutputs().stream().map(Operand::value).toList());
        assertEquals("lse", fwd.sideOutput("lse").role());
        assertEquals(g.type("lse").shape(), fwd.sideOutput("lse").shape());
        assertTrue(fwd.fusedOps().contains("attention_lse") && fwd.dump().contains("also out  lse=%lse: f32[1,4,5]"), fwd.dump());
        int kv = ks.stream().filter(k -> k.node().op() == Op.ATTENTION_GRAD_KV).findFirst().orElseThrow().index();
        MemoryPlan plan = MemoryPlanner.plan(g, ks);
        Buffer lse = plan.placements().stream().map(MemoryPlan.Placement::buffer).filter(b -> b.value().equals("lse")).findFirst().orElseThrow();
        assertEquals(fwd.index(), lse.first());
        assertEquals(kv, lse.last());
        // no buffer live while the lse is shares its bytes
        for (MemoryPlan.Placement p : plan.placements()) {
            MemoryPlan.Placement l = plan.placements().stream().filter(x -> x.buffer().value().equals("lse")).findFirst().orElseThrow();
            if (p != l && p.buffer().overlaps(l.buffer())) {
                assertTrue(p.offset() + p.buffer().bytes() <= l.offset() || l.offset() + l.buffer().bytes() <= p.offset(), p + " / " + l);
            }
        }
    }

    @Test
    void theCpuKeepsItsLseKernel() {
        List<Kernel> ks = new Partition(Target.cpu()).kernels(IrParser.parse(step(FWD, ROPE, LSE)));
        assertTrue(ks.stream().anyMatch(k -> k.node().op() == Op.ATTENTION_LSE));
        assertTrue(ks.stream().allMatch(k -> k.sideOutputs().isEmpty()));
    }

    @Test
    void onlyTheSameScoresAreServed() {
        assertEquals(1, SavedLse.of(IrParser.parse(step(FWD, ROPE, LSE))).size());
        for (String[] c : new String[][] {
                {FWD, "{base=10000.0}", LSE},                                        // another rope base
                {FWD, "{base=500.0, offset=1}", LSE},                                // positions shifted
                {FWD, ROPE, "{causal=false, scale=0.4}"},                            // not causal
                {FWD, ROPE, "{causal=true, scale=0.5}"},                             // another scale
                {"{causal=true, scale=0.4}", ROPE, LSE},                             // the forward does not rotate
        }) {
            Graph g = IrParser.parse(step(c[0], c[1], c[2]));
            assertTrue(SavedLse.of(g).isEmpty(), String.join(" ", c));
            List<Kernel> ks = new Partition(Target.cuda()).kernels(g);
            assertTrue(ks.stream().anyMatch(k -> k.node().op() == Op.ATTENTION_LSE), String.join(" ", c));
            assertTrue(ks.stream().allMatch(k -> k.sideOutputs().isEmpty()));
        }
    }

    @Test
    void withoutRopeAndWithAMaskTheOperandsThemselvesMatch() {
        String g = """
                graph @g {
                  %q = input {name="q"} : f32[2,3,5,8]
                  %k = input {name="k"} : f32[2,3,9,8]
                  %v = input {name="v"} : f32[2,3,9,8]
                  %m = input {name="m"} : f32[2,1,1,9]
                  %m2 = input {name="m2"} : f32[2,1,1,9]
                  %y = attention(%q, %k, %v, %m) {scale=0.3} : f32[2,3,5,8]
                  %lse = attention_lse(%q, %k, MASK) {scale=0.3} : f32[2,3,5]
                  %dq = attention_grad_q(%q, %k, %v, %y, %y, %lse, MASK) {scale=0.3} : f32[2,3,5,8]
                  return %dq
                }
                """;
        assertEquals("lse", SavedLse.of(IrParser.parse(g.replace("MASK", "%m"))).get("y").name());
        assertTrue(SavedLse.of(IrParser.parse(g.replace("MASK", "%m2"))).isEmpty());
    }

    @Test
    void eachForwardServesItsOwnLse() {
        String g = """
                graph @g {
                  %q = input {name="q"} : f32[1,2,5,8]
                  %k = input {name="k"} : f32[1,2,5,8]
                  %v = input {name="v"} : f32[1,2,5,8]
                  %y1 = attention(%q, %k, %v) {causal=true, scale=0.3} : f32[1,2,5,8]
                  %y2 = attention(%y1, %k, %v) {causal=true, scale=0.3} : f32[1,2,5,8]
                  %l2 = attention_lse(%y1, %k) {causal=true, scale=0.3} : f32[1,2,5]
                  %l1 = attention_lse(%q, %k) {causal=true, scale=0.3} : f32[1,2,5]
                  %l3 = attention_lse(%q, %k) {causal=true, scale=0.3} : f32[1,2,5]
                  %a = add(%l1, %l2) : f32[1,2,5]
                  %b = add(%a, %l3) : f32[1,2,5]
                  return %y2, %b
                }
                """;
        var served = SavedLse.of(IrParser.parse(g));
        assertEquals("l1", served.get("y1").name());
        assertEquals("l2", served.get("y2").name());
        assertEquals(2, served.size()); // l3 keeps its kernel: y1 serves one lse
        assertFalse(served.containsValue(null));
    }
}
