package dev.lantern.onnx;

import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Gradients of imported ONNX models (the two-layer GPT-2 and LLaMA fixtures, grouped-query attention
 * in the latter) under a next-token cross-entropy loss: the backward graph of every parameter, run
 * by the compiled and the eager CPU executors, matches the float64 reference within f32 tolerance,
 * and the reference's gradient matches a float64 central difference of the loss along a seeded
 * random direction in parameter space (relative error ≤ 1e-6).
 */
class OnnxGradientTest {
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gpt2", "llama"})
    void importedModelGradients(String family) throws Exception {
        Path dir = ModelFixturesTest.folder(family);
        Tensor ids = ModelFixturesTest.npys(dir, "input_").get("input_ids");
        ImportedModel m = OnnxImporter.importFile(dir.resolve("model.onnx"), Map.of("input_ids", new long[] {2, 8}));
        Graph forward = withLoss(m.graph());
        String loss = forward.outputs().getFirst();
        BackwardGraph bg = Gradients.ofParams(forward, loss);
        assertTrue(bg.gradients().size() >= 10, "params: " + bg.gradients().keySet());

        Tensor targets = Tensor.allocate(DType.I64, ids.shape());
        for (int i = 0; i < targets.numel(); i++) {
            targets.set(i, i % 8 == 7 ? -100 : ids.get(i + 1)); // next token; the last of each row is ignored
        }
        Map<String, Tensor> inputs = Map.of("input_ids", ids, "targets", targets);
        Map<String, Tensor> all = new HashMap<>(m.params());
        all.putAll(inputs);
        Map<String, RefTensor> ref = ReferenceInterpreter.run(bg.graph(), all);
        Map<String, Tensor> eager = new EagerExecutor(true).run(bg.graph(), all);
        Map<String, Tensor> compiled;
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(bg.graph(), CompileOptions.defaults())).bind(m.params())) {
            exec.poisonArena();
            compiled = exec.run(inputs);
        }
        for (String out : bg.graph().outputs()) {
            double[] r = ref.get(out).data();
            assertTrue(Accuracy.relErr(compiled.get(out).toDoubles(), r) < 1e-4, family + " compiled %" + out + ": "
                    + Accuracy.relErr(compiled.get(out).toDoubles(), r));
            assertTrue(Accuracy.relErr(eager.get(out).toDoubles(), r) < 1e-4, family + " eager %" + out + ": "
                    + Accuracy.relErr(eager.get(out).toDoubles(), r));
        }

        // float64: d/dh loss(θ + h·v) at 0 against Σ g·v, v a seeded direction over every parameter
        Map<String, RefTensor> src = new HashMap<>();
        all.forEach((k, t) -> src.put(k, new RefTensor(t.shape(), t.toDoubles())));
        Map<String, RefTensor> exact = ReferenceInterpreter.runExact(bg.graph(), src);
        SplittableRandom rnd = new SplittableRandom(family.hashCode());
        Map<String, double[]> dir2 = new HashMap<>();
        double predicted = 0;
        for (Node p : forward.params()) {
            String key = p.attrs().getString("name", p.name());
            double[] v = new double[src.get(key).data().length];
            double[] g = exact.get(bg.gradientOf(p.name())).data();
            for (int i = 0; i < v.length; i++) {
                v[i] = rnd.nextDouble(-1, 1);
                predicted += g[i] * v[i];
            }
            dir2.put(key, v);
        }
        Graph lossOnly = forward.withNodes(forward.nodes(), List.of(loss));
        double h = 1e-6;
        double up = shifted(lossOnly, loss, src, dir2, h);
        double down = shifted(lossOnly, loss, src, dir2, -h);
        double numeric = (up - down) / (2 * h);
        assertEquals(numeric, predicted, 1e-6 * Math.abs(numeric), family + ": directional derivative");
        assertEquals(exact.get(loss).data()[0], ReferenceInterpreter.runExact(lossOnly, src).get(loss).data()[0], 1e-12);
    }

    /** The imported graph with a targets input and the mean cross-entropy of its logits as its one output. */
    static Graph withLoss(Graph g) {
        String logits = g.outputs().getFirst();
        TensorType lt = g.type(logits);
        int[] dims = java.util.Arrays.copyOf(lt.shape().dims(), lt.shape().rank() - 1);
        List<Node> nodes = new ArrayList<>(g.nodes());
        nodes.add(new Node("targets", Op.INPUT, List.of(), Attrs.of("name", "targets"), TensorType.of(DType.I64, dims)));
        TensorType loss = Op.CROSS_ENTROPY.infer(List.of(lt, TensorType.of(DType.I64, dims)), Attrs.EMPTY);
        nodes.add(new Node("loss", Op.CROSS_ENTROPY, List.of(logits, "targets"), Attrs.EMPTY, loss));
        return new Graph(g.name(), nodes, List.of("loss"));
    }

    private static double shifted(Graph g, String loss, Map<String, RefTensor> src, Map<String, double[]> v, double h) {
        Map<String, RefTensor> s = new HashMap<>(src);
        v.forEach((k, d) -> {
            double[] x = src.get(k).data().clone();
            for (int i = 0; i < x.length; i++) {
                x[i] += h * d[i];
            }
            s.put(k, new RefTensor(src.get(k).shape(), x));
        });
        return ReferenceInterpreter.runExact(g, s).get(loss).data()[0];
    }
}
