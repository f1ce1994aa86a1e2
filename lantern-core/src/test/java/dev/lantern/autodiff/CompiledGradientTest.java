package dev.lantern.autodiff;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.ParamInit;
import dev.lantern.frontend.Value;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The backward graph of a tiny language model (embedding gather, decoder block, LM head,
 * cross-entropy with an ignored token) compiled by the standard pipeline and run by the compiled
 * CPU executor, and run op by op by the eager executor: both within f32 tolerance of the float64
 * reference, for the loss and every parameter's gradient. Run twice on two micro-batches, the
 * outputs of the first stay intact and the sum is the gradient of the summed losses.
 */
class CompiledGradientTest {
    static final int VOCAB = 11;
    static final BlockConfig CFG = new BlockConfig("tiny", 2, 5, 8, 2, 12, true);

    static Graph lm(GraphBuilder g) {
        Value ids = g.input("ids", TensorType.of(DType.I64, CFG.batch(), CFG.seq()));
        Value targets = g.input("targets", TensorType.of(DType.I64, CFG.batch(), CFG.seq()));
        Value embed = g.param("embed", TensorType.of(DType.F32, VOCAB, CFG.hidden()), ParamInit.normal(1f));
        Value x = g.op(Op.GATHER, Attrs.of("axis", 0), embed, ids);
        Value y = new TransformerBlock(CFG, DType.F32).forward(g, x);
        Value head = g.param("lm_head", TensorType.of(DType.F32, CFG.hidden(), VOCAB), ParamInit.normal(0.3f));
        Value logits = g.matmul(y, head);
        return g.build(g.op(Op.CROSS_ENTROPY, Attrs.EMPTY, logits, targets));
    }

    static Map<String, Tensor> params(Graph g, long seed) {
        Map<String, Tensor> m = new LinkedHashMap<>();
        for (Node n : g.params()) {
            String key = n.attrs().getString("name", n.name());
            Tensor t = Philox.normal(Tensor.allocate(n.type()), Philox.key(seed, key), 0.4f);
            if (key.contains("norm")) {
                for (long i = 0; i < t.numel(); i++) {
                    t.set(i, 1 + 0.5f * t.get(i));
                }
            }
            m.put(key, t);
        }
        return m;
    }

    static Map<String, Tensor> batch(long seed) {
        Tensor ids = Tensor.allocate(DType.I64, Shape.of(CFG.batch(), CFG.seq()));
        Tensor targets = Tensor.allocate(DType.I64, Shape.of(CFG.batch(), CFG.seq()));
        for (int i = 0; i < ids.numel(); i++) {
            ids.set(i, (float) Math.floorMod(seed * 7 + i * 5L + i * i, VOCAB));
            targets.set(i, i == 3 ? -100f : (float) Math.floorMod(seed * 3 + i * 4L + 1, VOCAB)); // token 3 is ignored
        }
        return Map.of("ids", ids, "targets", targets);
    }

    @Test
    void compiledAndEagerMatchTheReference() {
        Graph forward = lm(new GraphBuilder("tiny_lm"));
        BackwardGraph bg = Gradients.ofParams(forward, forward.outputs().getFirst());
        Map<String, Tensor> params = params(forward, 11);
        CompiledModel compiled = Compiler.compile(bg.graph(), CompileOptions.defaults());
        assertTrue(compiled.kernels().size() < bg.graph().computeNodes().size(),
                "fusion merges some backward ops: " + compiled.kernels().size() + " kernels for " + bg.graph().computeNodes().size() + " ops");
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(compiled).bind(params)) {
            exec.poisonArena();
            Map<String, Tensor> sum = new HashMap<>();
            Map<String, Tensor> first = null;
            Map<String, RefTensor> firstRef = null;
            for (long mb = 0; mb < 2; mb++) {
                Map<String, Tensor> inputs = batch(mb);
                Map<String, Tensor> all = new HashMap<>(params);
                all.putAll(inputs);
                Map<String, RefTensor> ref = ReferenceInterpreter.run(bg.graph(), all);
                Map<String, Tensor> got = exec.run(inputs);
                Map<String, Tensor> eager = new EagerExecutor(true).run(bg.graph(), all);
                for (String out : bg.graph().outputs()) {
                    double[] r = ref.get(out).data();
                    assertTrue(Accuracy.relErr(got.get(out).toDoubles(), r) < 2e-5, "compiled %" + out + " mb " + mb
                            + ": " + Accuracy.relErr(got.get(out).toDoubles(), r));
                    assertTrue(Accuracy.relErr(eager.get(out).toDoubles(), r) < 2e-5, "eager %" + out + " mb " + mb
                            + ": " + Accuracy.relErr(eager.get(out).toDoubles(), r));
                    sum.merge(out, got.get(out), CompiledGradientTest::plus);
                }
                if (mb == 0) {
                    first = got;
                    firstRef = ref;
                } else {
                    // micro-batch accumulation: the sum of the two runs is the gradient of the summed losses
                    for (String out : bg.graph().outputs()) {
                        double[] want = firstRef.get(out).data().clone();
                        for (int i = 0; i < want.length; i++) {
                            want[i] += ref.get(out).data()[i];
                        }
                        assertTrue(Accuracy.relErr(sum.get(out).toDoubles(), want) < 2e-5, "accumulated %" + out);
                    }
                }
            }
            // the first run's outputs are the caller's: the second run did not write over them
            for (String out : bg.graph().outputs()) {
                assertTrue(Accuracy.relErr(first.get(out).toDoubles(), firstRef.get(out).data()) < 2e-5, "first run %" + out);
            }
        }
        assertEquals(1 + forward.params().size(), bg.graph().outputs().size());
    }

    private static Tensor plus(Tensor a, Tensor b) {
        Tensor t = Tensor.allocate(a.dtype(), a.shape());
        for (long i = 0; i < a.numel(); i++) {
            t.set(i, a.get(i) + b.get(i));
        }
        return t;
    }
}
