package dev.lantern.bench.cpu;

import dev.lantern.Bindings;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.onnx.OnnxModel;
import dev.lantern.tensor.Tensor;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@code lantern bench cpu} times on Lantern's side: a compiled model bound to its weights and
 * one set of seeded inputs. A block of DESIGN.md's shapes ({@link #block}) or an ONNX file with
 * every input bound to (batch, seq) ({@link #onnx}, as {@code bench model} binds it).
 *
 * @param name   the case name of the records ({@code cpu-small}, {@code model_b1_s128})
 * @param onnx   the file the peers run: the model itself, or null for a block (then the peers need {@code --onnx})
 */
public record CpuTarget(String name, CompiledModel model, Map<String, Tensor> params, Map<String, Tensor> inputs, Path onnx) {

    /** A transformer block in f32 with weights and input drawn from {@code seed}, compiled with the default options. */
    public static CpuTarget block(BlockConfig cfg, long seed) {
        Model m = TransformerBlock.build(cfg, DType.F32);
        Graph g = m.graph();
        return new CpuTarget(cfg.name(), Compiler.compile(g, CompileOptions.defaults()), m.parameters(seed), Feeds.inputs(g, seed), null);
    }

    /** An ONNX file's forward at (batch, seq): token ids drawn from {@code seed} below the vocabulary, masks of ones. */
    public static CpuTarget onnx(Path file, int batch, int seq, long seed) {
        OnnxModel model = OnnxModel.open(file, CompileOptions.defaults());
        Map<String, long[]> shapes = new LinkedHashMap<>();
        model.inputs().forEach(in -> shapes.put(in.name(), new long[] {batch, seq}));
        OnnxModel.Compiled c = model.compile(shapes);
        CompiledModel compiled = c.program().model("cpu", true);
        Map<String, Tensor> params;
        try (Weights w = c.weights()) {
            params = Bindings.parameters(compiled.graph(), w);
        }
        String first = model.inputs().getFirst().name();
        long vocab = model.embeddingRows(first).orElseThrow(() -> new LanternException(
                file + ": no embedding table reads input " + first + ", so no vocabulary to draw ids from"));
        String stem = file.getFileName().toString().replaceFirst("\\.onnx$", "");
        Path folder = file.toAbsolutePath().getParent();
        if (stem.equals("model") && folder != null && folder.getFileName() != null) {
            stem = folder.getFileName().toString(); // make_gpt2_small.py's gpt2-small/model.onnx: the folder names it
        }
        return new CpuTarget(stem + "_b" + batch + "_s" + seq, compiled, params, Feeds.tokens(compiled.source(), vocab, seed), file);
    }

    /** A fresh executor over this target's model and weights (profiling off). */
    public CompiledCpuExecutor executor() {
        return new CompiledCpuExecutor(model).bind(params);
    }
}
