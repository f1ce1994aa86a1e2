package dev.lantern.frontend.hf;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import dev.lantern.weights.SafetensorsIndex;
import dev.lantern.weights.SafetensorsModel;
import dev.lantern.weights.SafetensorsWriter;
import dev.lantern.weights.TensorView;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The model folders scripts/fixtures/make_hf_fixtures.py made with transformers (random weights,
 * two layers, hidden 64, 4 heads; LLaMA with 2 K/V heads and rope_theta 50000; BERT with a padded
 * second sequence), run through the public API on the CPU and compared with PyTorch's f32 output.
 */
class HfModelTest {
    static final Path HF = Path.of("src/test/resources/hf");

    @ParameterizedTest
    @ValueSource(strings = {"gpt2", "llama", "bert"})
    void matchesPyTorch(String family) throws Exception {
        Path folder = HF.resolve(family);
        HfModel model = HfModel.open(folder);
        assertEquals(family, model.family().modelType());
        Tensor ids = Npy.read(folder.resolve("input_ids.npy"));
        Graph graph = model.graph(ids.shape().dim(0), ids.shape().dim(1));
        Map<String, Tensor> inputs = new LinkedHashMap<>();
        for (String name : new String[] {"input_ids", "attention_mask", "token_type_ids"}) {
            if (Files.exists(folder.resolve(name + ".npy"))) {
                inputs.put(name, Npy.read(folder.resolve(name + ".npy")));
            }
        }
        Tensor expected = Npy.read(folder.resolve("expected.npy"));
        Program program = Lantern.compile(graph, CompileOptions.defaults());
        assertEquals(inputs.keySet().stream().toList(), program.inputNames());
        for (RunMode mode : new RunMode[] {RunMode.COMPILED, RunMode.EAGER}) {
            Tensor got;
            try (Weights w = model.weights(); Session s = program.load(Device.cpu(), w, mode)) {
                got = s.run(inputs).values().iterator().next();
            }
            assertEquals(expected.shape(), got.shape());
            double err = maxRelErr(expected.toDoubles(), got.toDoubles());
            System.out.printf("hf %s %s: max rel err vs PyTorch %.3g%n", family, mode, err);
            assertTrue(err <= 1e-5, family + " " + mode + ": max relative error " + err);
        }

        // the float64 reference on the same graph and weights: the graph itself is PyTorch's function
        Map<String, Tensor> sources = new LinkedHashMap<>(inputs);
        try (Weights w = model.weights()) {
            for (Node p : graph.params()) {
                String name = p.attrs().getString("name", p.name());
                sources.put(name, w.resolve(name, p.type()));
            }
            double[] ref = ReferenceInterpreter.run(graph, sources).values().iterator().next().data();
            double refErr = maxRelErr(expected.toDoubles(), ref);
            System.out.printf("hf %s: max rel err float64 reference vs PyTorch %.3g%n", family, refErr);
            assertTrue(refErr <= 1e-5, family + ": reference max relative error " + refErr);
        }
    }

    /** LLaMA's 2 K/V heads reach the fused attention unrepeated: no concat copies, and K's rope inside too. */
    @Test
    void llamaAttentionReadsTheKvHeadsInPlace() throws Exception {
        HfModel model = HfModel.open(HF.resolve("llama"));
        dev.lantern.engine.CompiledModel m = dev.lantern.engine.Compiler.compile(model.graph(2, 8), CompileOptions.defaults());
        java.util.List<Node> att = m.graph().nodes().stream().filter(n -> n.op() == dev.lantern.ir.Op.ATTENTION).toList();
        assertEquals(2, att.size(), "one attention per layer:\n" + m.graph());
        for (Node a : att) {
            assertEquals(2, m.graph().type(a.input(1)).shape().dim(1), "k with its 2 heads: " + a);
            assertEquals(2, m.graph().type(a.input(2)).shape().dim(1), "v with its 2 heads: " + a);
            assertTrue(a.attrs().getBool("rope", false), "q's and k's rope inside the attention: " + a);
        }
        assertTrue(m.graph().nodes().stream().noneMatch(n -> n.op() == dev.lantern.ir.Op.CONCAT || n.op() == dev.lantern.ir.Op.ROPE
                || n.op() == dev.lantern.ir.Op.GATHER && n.attrs().getInt("axis", 0) != 0), "no K/V head copies:\n" + m.graph());
    }

    /** GPT-2's q, k and v column blocks reach the CPU attention as views of the q|k|v projection, not copies. */
    @Test
    void gpt2AttentionReadsQkvInPlace() throws Exception {
        HfModel model = HfModel.open(HF.resolve("gpt2"));
        dev.lantern.engine.CompiledModel m = dev.lantern.engine.Compiler.compile(model.graph(2, 8), CompileOptions.defaults());
        long attentions = m.graph().nodes().stream().filter(n -> n.op() == dev.lantern.ir.Op.ATTENTION).count();
        java.util.Set<String> inPlace = dev.lantern.engine.cpu.SliceInPlace.of(m.graph(), m.kernels());
        assertEquals(3 * attentions, inPlace.size(), "q, k and v of every layer read in place: " + inPlace + "\n" + m.graph());
    }

    /** BERT's padding mask (b, 1, 1, s) goes into the fused attention as its 4th input on the CPU. */
    @Test
    void bertAttentionTakesItsPaddingMask() throws Exception {
        HfModel model = HfModel.open(HF.resolve("bert"));
        dev.lantern.engine.CompiledModel m = dev.lantern.engine.Compiler.compile(model.graph(2, 8), CompileOptions.defaults());
        java.util.List<Node> att = m.graph().nodes().stream().filter(n -> n.op() == dev.lantern.ir.Op.ATTENTION).toList();
        assertEquals(2, att.size(), "one attention per layer:\n" + m.graph());
        for (Node a : att) {
            assertEquals(4, a.inputs().size(), "q, k, v and the mask: " + a);
            assertEquals(dev.lantern.ir.Shape.of(2, 1, 1, 8), m.graph().type(a.input(3)).shape());
        }
    }

    @Test
    void shardedCheckpoint(@TempDir Path tmp) throws Exception {
        // the GPT-2 checkpoint split over two shards and their index, as save_pretrained writes large models
        Path src = HF.resolve("gpt2");
        Files.copy(src.resolve("config.json"), tmp.resolve("config.json"));
        StringBuilder map = new StringBuilder();
        try (SafetensorsModel m = SafetensorsModel.open(src)) {
            SafetensorsWriter[] shards = {new SafetensorsWriter(), new SafetensorsWriter()};
            String[] files = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
            int i = 0;
            for (String name : m.names()) {
                TensorView t = m.tensor(name);
                int shard = i++ % 2;
                shards[shard].add(name, t.dtype(), t.shape(), t.data());
                map.append(map.isEmpty() ? "" : ", ").append('"').append(name).append("\": \"").append(files[shard]).append('"');
            }
            for (int k = 0; k < 2; k++) {
                shards[k].write(tmp.resolve(files[k]));
            }
        }
        Files.writeString(tmp.resolve(SafetensorsIndex.FILE_NAME), "{\"metadata\": {}, \"weight_map\": {" + map + "}}");
        HfModel model = HfModel.open(tmp);
        Tensor ids = Npy.read(src.resolve("input_ids.npy"));
        Program program = Lantern.compile(model.graph(2, 8), CompileOptions.defaults());
        try (Weights w = model.weights(); Session s = program.load(Device.cpu(), w)) {
            Tensor got = s.run(Map.of("input_ids", ids)).values().iterator().next();
            double err = maxRelErr(Npy.read(src.resolve("expected.npy")).toDoubles(), got.toDoubles());
            assertTrue(err <= 1e-5, "sharded: max relative error " + err);
        }
    }

    /** Relative to the output's largest magnitude, so that entries near zero do not dominate. */
    static double maxRelErr(double[] want, double[] got) {
        double scale = 0;
        for (double v : want) {
            scale = Math.max(scale, Math.abs(v));
        }
        assertTrue(scale > 0, "an all-zero expected output checks nothing");
        double worst = 0;
        for (int i = 0; i < want.length; i++) {
            worst = Math.max(worst, Math.abs(want[i] - got[i]) / scale);
        }
        return worst;
    }
}
