package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.KernelSpec;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link KernelNames#withName} rebuilds each spec record by hand, one constructor call per spec type: a
 * component added to a spec and forgotten there is dropped from the renamed spec, whose kernel then
 * differs from the one the lowering sized its arguments for (a launch of N arguments against a kernel
 * of fewer parameters, found only on the GPU). Renaming a spec to its own name must give it back equal,
 * for every spec the lowering produces from small transformer blocks (bf16 and f32) and language models
 * (their forward, their training step with attention fused, the step through the primitive attention),
 * fused and unfused, in f32 and under each AMP dtype, at head_dim 8 and 128.
 */
class KernelNamesTest {
    @Test
    void renamingASpecToItsOwnNameKeepsEveryComponent() {
        Map<Class<?>, Integer> seen = new LinkedHashMap<>();
        for (BlockConfig cfg : new BlockConfig[] {BackwardGraphs.ODD, new BlockConfig("wide-train", 2, 37, 256, 2, 96, true),
                new BlockConfig("enc-train", 1, 19, 256, 2, 64, false)}) {
            var lm = BackwardGraphs.model(cfg, 29);
            for (Graph graph : List.of(TransformerBlock.build(cfg, DType.BF16).graph(), TransformerBlock.build(cfg, DType.F32).graph(),
                    lm.graph(), BackwardGraphs.backward(lm).graph(), BackwardGraphs.primitiveBackward(lm).graph())) {
                for (CompileOptions.Amp amp : CompileOptions.Amp.values()) {
                    for (boolean fuse : new boolean[] {true, false}) {
                        for (KernelSpec spec : specs(graph, fuse, amp)) {
                            assertEquals(spec, KernelNames.withName(spec, spec.name()), cfg.name() + " " + amp + " fuse=" + fuse
                                    + ": KernelNames.withName dropped a component of " + spec);
                            seen.merge(spec.getClass(), 1, Integer::sum);
                        }
                    }
                }
            }
        }
        assertTrue(seen.size() >= 10, "the steps' launches cover most spec types, got " + seen.keySet());
        System.out.println("[kernel-names] " + seen.values().stream().mapToInt(Integer::intValue).sum() + " launches of "
                + seen.size() + " spec types keep every component when renamed");
    }

    /** The specs of {@code graph}'s generated-kernel launches on the H200. */
    private static List<KernelSpec> specs(Graph graph, boolean fuse, CompileOptions.Amp amp) {
        CompiledModel m = BackwardGraphs.compile(graph, fuse, amp);
        return CudaLowering.lower(m, CudaTarget.H200).steps().stream()
                .filter(s -> s instanceof Step.Launch).map(s -> ((Step.Launch) s).spec()).toList();
    }
}
