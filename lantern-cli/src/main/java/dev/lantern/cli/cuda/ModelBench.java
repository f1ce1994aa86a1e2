package dev.lantern.cli.cuda;

import dev.lantern.Bindings;
import dev.lantern.Weights;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.KernelFigures;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.hf.HfModel;
import dev.lantern.ir.LanternException;
import dev.lantern.onnx.OnnxModel;
import dev.lantern.ir.Graph;
import dev.lantern.metrics.LanternMetrics;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code lantern bench model --model DIR|MODEL.onnx --batch B --seq S}: the prefill (one forward over
 * B × S tokens) of a Hugging Face folder (GPT-2, LLaMA, BERT; {@link HfModel}) or of an exported ONNX
 * file (its every input bound to (B, S); case {@code <folder>-onnx_b<B>_s<S>}) on GPU 0 in bf16 AMP,
 * compiled, compiled + graph replay and eager, timed with CUDA events as {@code bench macro} times
 * the blocks (the same warm-up), with the checkpoint's own weights. Records in torch_ref.py's form,
 * case {@code <folder>_b<B>_s<S>}, rate {@code tok_s} (tokens per second). The compiled record carries the kernel
 * figures as {@code bench macro}'s does ({@code occ_pct}, {@code dram_gbps}, {@code kernel_figures}); with
 * {@code --metrics-port} they, the compiled forward (as a step) and the graph session's hit rate go to the metrics.
 */
final class ModelBench {
    private ModelBench() {}

    static void run(CudaBench bench, CudaDevice device, Path dir, int batch, int seq, long seed, Consumer<String> progress) {
        // logits in bf16, as the bf16 transformers model PyTorch is timed with returns them (half the bytes of f32)
        CompileOptions options = CompileOptions.defaults().withTarget("cuda").withAmp(CompileOptions.Amp.BF16).withLowOutputs(true)
                .withDeterministic(bench.deterministic());
        progress.accept("model " + dir.getFileName() + ": compiling");
        boolean onnx = dir.getFileName().toString().endsWith(".onnx");
        Graph g;
        CompiledModel compiled;
        CompiledModel eager;
        Map<String, Tensor> params;
        Map<String, Tensor> eagerParams;
        int vocab;
        String label;
        if (onnx) {
            // the exported file, imported with its symbolic batch and sequence bound (OnnxModel)
            OnnxModel model = OnnxModel.open(dir, options);
            Map<String, long[]> shapes = new LinkedHashMap<>();
            model.inputs().forEach(in -> shapes.put(in.name(), new long[] {batch, seq}));
            OnnxModel.Compiled c = model.compile(shapes);
            g = c.program().graph();
            compiled = c.program().model();
            eager = c.program().model("cuda", false);
            try (Weights w = c.weights()) {
                params = Bindings.parameters(compiled.graph(), w);
                eagerParams = Bindings.parameters(eager.graph(), w);
            }
            String input = model.inputs().getFirst().name();
            vocab = Math.toIntExact(model.embeddingRows(input).orElseThrow(
                    () -> new LanternException(dir + ": no embedding table reads input " + input + ", so no vocabulary to draw ids from")));
            String folder = dir.toAbsolutePath().getParent().getFileName().toString();
            label = folder.endsWith("-onnx") ? folder : folder + "-onnx";
        } else {
            HfModel model = HfModel.open(dir);
            g = model.graph(batch, seq);
            compiled = Compiler.compile(g, options);
            eager = Compiler.compile(g, options.withFuse(false));
            try (Weights w = model.weights()) {
                params = Bindings.parameters(compiled.graph(), w);
                eagerParams = Bindings.parameters(eager.graph(), w);
            }
            vocab = model.vocabSize();
            label = dir.getFileName().toString();
        }
        Map<String, Tensor> inputs = dev.lantern.engine.Feeds.tokens(g, vocab, seed);
        String name = label + "_b" + batch + "_s" + seq;
        double tokens = (double) batch * seq;
        int iters = 10;
        LanternMetrics metrics = bench.metrics(); // null without --metrics-port's registry
        try (CudaSession s = CudaSession.open(device, compiled, params, CudaSession.Options.compiled().withAutotune(bench.tune()))) {
            s.setInputs(inputs);
            progress.accept("model " + name + ": autotuning");
            s.autotune();
            double ms = s.timeMs(s::forward, CudaBench.WARMUP, iters);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("kernels", s.model().kernels().size());
            x.put("outputs", s.model().graph().outputs().stream().map(o -> s.model().graph().type(o).dtype().text()).toList());
            x.put("device_ops", s.deviceOps());
            progress.accept("model " + name + ": profiling steps");
            List<CudaSession.StepTime> inForward = s.profileInForward(3, 10);
            x.put("steps", CudaBench.stepsJson(inForward));
            // as bench macro: occupancy from the occupancy API and the launch shapes, GB/s = cost-model bytes / step times
            List<KernelFigures.Figure> figures = s.kernelFigures(inForward);
            KernelFigures.Summary summary = CudaBench.summarize(figures, metrics);
            x.put("occ_pct", KernelFiguresJson.number(summary.occPct(), 2));
            x.put("dram_gbps", KernelFiguresJson.number(summary.dramGbps(), 1));
            x.put("kernel_figures", KernelFiguresJson.of(figures));
            bench.record(name, "lantern", ms, "tok_s", tokens / ms * 1e3, s.peakBytes(), x);
            if (metrics != null) {
                metrics.recordStep(ms, (long) batch * seq); // one prefill: batch x seq tokens
            }
        }
        try (CudaSession gs = CudaSession.open(device, compiled, params,
                CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER).withAutotune(bench.tune()))) {
            gs.setInputs(inputs);
            double ms = gs.timeMs(gs::forwardGraph, CudaBench.WARMUP, iters);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("graph_hit_pct", CudaBench.round(gs.forwardStats().graphHitPct(), 2));
            bench.record(name, "lantern-graph", ms, "tok_s", tokens / ms * 1e3, gs.peakBytes(), x);
            if (metrics != null) {
                metrics.session(new dev.lantern.SessionStats(gs.forwardStats().forwards(), gs.forwardStats().replays(), Map.of()));
            }
        }
        try (CudaSession e = CudaSession.open(device, eager, eagerParams, CudaSession.Options.eager())) {
            e.setInputs(inputs);
            double ms = e.timeMs(e::forward, CudaBench.WARMUP, iters);
            bench.record(name, "lantern-eager", ms, "tok_s", tokens / ms * 1e3, e.peakBytes(), Map.of("kernels", e.model().kernels().size()));
        }
    }
}
