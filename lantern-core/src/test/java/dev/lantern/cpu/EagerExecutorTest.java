package dev.lantern.cpu;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Op;
import dev.lantern.passes.Partition;
import dev.lantern.ir.Shape;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EagerExecutorTest {
    @Test
    void stridedInputsViewsAndSeveralOutputs() {
        long seed = 909;
        // %x reads a (33, 7) tensor through strides (1, 33): the transpose of a stored (7, 33)
        Graph g = IrParser.parse("""
                graph @g {
                  %x = input {name="x"} : f32[33,7]@[1,33]
                  %w = param {name="w"} : f32[7,5]
                  %b = param {name="b"} : f32[5]
                  %h = matmul(%x, %w) : f32[33,5]
                  %y = add(%h, %b) : f32[33,5]
                  %t = transpose(%y) {dim0=0, dim1=1} : f32[5,33]
                  %r = reshape(%t) {shape=[3,55]} : f32[3,55]
                  %s = slice(%r) {axis=1, start=4, end=50} : f32[3,46]
                  %e = gelu(%s) {approximate="none"} : f32[3,46]
                  return %e, %y, %w
                }
                """);
        Map<String, Tensor> in = Map.of(
                "x", Philox.normal(Tensor.allocate(DType.F32, Shape.of(7, 33)), seed, 1f),
                "w", Philox.normal(Tensor.allocate(DType.F32, Shape.of(7, 5)), seed + 1, 1f),
                "b", Philox.normal(Tensor.allocate(DType.F32, Shape.of(5)), seed + 2, 1f));
        Map<String, Tensor> out = new EagerExecutor(true).run(g, in);
        Map<String, RefTensor> ref = ReferenceInterpreter.run(g, in);
        assertEquals(List.of("e", "y", "w"), List.copyOf(out.keySet()));
        for (String o : g.outputs()) {
            Diff.assertClose(out.get(o), ref.get(o), 1e-5, "%" + o + " seed=" + seed);
        }
        assertNotSame(in.get("w"), out.get("w"), "an output that is an input comes back as a copy");
    }

    /**
     * Naive eager is one kernel per compute op: the free views (reshapes of contiguous values, the
     * q/k/v permutes that layout-normalize made strided) run nothing, as in GPU eager and PyTorch
     * eager; they used to be copied (24 ops instead of 17 on cpu-small, with bit-identical output).
     */
    @Test
    void freeViewsRunNoKernelAndTheBlockStaysExact() {
        long seed = 4242;
        Model m = TransformerBlock.build(BlockConfig.named("cpu-small"), DType.F32);
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        Graph eager = c.unfused();
        Map<String, Tensor> feeds = new HashMap<>(m.parameters(seed));
        feeds.putAll(dev.lantern.engine.Feeds.inputs(m.graph(), seed));
        EagerExecutor ex = new EagerExecutor(true);
        Tensor out = ex.run(eager, feeds).get(eager.outputs().getFirst());
        long views = eager.nodes().stream().filter(n -> n.op() == Op.RESHAPE || n.op() == Op.PERMUTE).count();
        int kernels = new Partition(CompileOptions.defaults().kernelTarget()).kernels(eager).size();
        assertTrue(views >= 4, "the block has reshapes and permutes to skip: " + views);
        assertEquals(kernels, ex.lastRunOps(), "one kernel per compute op, as the partition of the same graph");
        RefTensor ref = ReferenceInterpreter.run(m.graph(), feeds).get(m.graph().outputs().getFirst());
        Diff.assertClose(out, ref, 1e-5, "cpu-small eager, seed=" + seed);
    }
}
