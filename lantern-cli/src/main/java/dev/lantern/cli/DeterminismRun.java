package dev.lantern.cli;

import dev.lantern.Bindings;
import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.cpu.CpuConfig;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.TuneCache;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.hf.HfModel;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.GraphHash;
import dev.lantern.ir.Node;
import dev.lantern.kernel.Kernel;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;

import java.io.PrintStream;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern determinism-run} (hidden): one run of {@link DeterminismCommand}, in a JVM of its
 * own. Compiles the block or model, runs one forward on seeded weights and inputs, writes each
 * output as {@code <out-dir>/run-<i>-<k>.npy}, and prints one JSON line: the graph hash, the cache
 * key, every kernel's cache key, the autotune choices (CUDA: tuned once by the first run into
 * {@code --tune-cache}, replayed by the others), the CPU thread count, and each output's SHA-256
 * over its stored bytes.
 */
final class DeterminismRun {
    private DeterminismRun() {}

    static final Set<String> VALUED = Set.of("config", "shape", "model", "device", "amp", "seed", "batch", "seq", "out-dir", "run", "tune-cache",
            "train");

    static int run(List<String> argv, PrintStream out) {
        Args a = Args.parse("determinism-run", argv, Set.of("deterministic"), VALUED).noPositional("determinism-run");
        String device = a.get("device", "cpu");
        CompileOptions options = CompileOptions.defaults().withTarget(device)
                .withAmp(UsageException.option("determinism", () -> CompileOptions.Amp.parse(a.get("amp", "none"))))
                .withDeterministic(a.flag("deterministic"));
        long seed = a.getLong("determinism-run", "seed", 0);
        Path outDir = Path.of(a.get("out-dir", "."));
        int index = a.getInt("determinism-run", "run", 0, 0, 1_000_000);

        if (a.get("train", null) != null) {
            return DeterminismTrainRun.run(a, options, seed, outDir, index, out);
        }
        Graph g;
        Weights weights;
        Long vocab = null;
        String model = a.get("model", null);
        if (model != null && HfRunCommand.isModelFolder(model)) {
            HfModel hf = HfModel.open(Path.of(model));
            g = hf.graph(a.getInt("determinism", "batch", 1, 1, 1 << 16), a.getInt("determinism", "seq", 8, 1, 1 << 20));
            weights = hf.weights();
            vocab = (long) hf.vocabSize();
        } else if (model != null) {
            g = GraphFile.read(model);
            weights = Weights.random(seed);
        } else {
            BlockConfig cfg = BlockOption.of("determinism", a.get("config", null), a.get("shape", null));
            g = TransformerBlock.build(cfg == null ? BlockConfig.named("cpu-small") : cfg, DType.F32).graph();
            weights = Weights.random(seed);
        }
        Program program = Lantern.compile(g, options);
        Map<String, Tensor> inputs = program.randomInputs(seed + 1);
        for (Node n : g.inputs()) {
            String name = Bindings.name(n);
            if (!inputs.get(name).dtype().isFloating()) {
                OnnxInputs.fillDefault(name, inputs.get(name), name.equals("input_ids"), vocab, seed);
            }
        }
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("run", index);
        r.put("device", device);
        r.put("threads", CpuConfig.THREADS);
        r.put("deterministic", options.deterministic());
        r.put("graph_hash", GraphHash.of(g));
        r.put("cache_key", program.cacheKey());
        r.put("kernel_keys", program.model().kernels().stream().map(Kernel::key).map(k -> k.hash()).toList());
        Map<String, Tensor> outputs;
        Map<String, String> tuned = new LinkedHashMap<>();
        try (weights) {
            outputs = device.equals("cuda") ? onGpu(program, weights, inputs, Path.of(a.get("tune-cache", "tune.properties")), tuned)
                    : onCpu(program, weights, inputs);
        }
        r.put("autotune", tuned);
        List<Map<String, Object>> outs = new ArrayList<>();
        int k = 0;
        for (String name : program.outputNames()) {
            Tensor t = outputs.get(name);
            Path file = outDir.resolve("run-" + index + "-" + k++ + ".npy");
            OutputFile.writeAtomically(file, Npy.toBytes(t));
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("name", name);
            o.put("dtype", t.dtype().text());
            o.put("shape", java.util.Arrays.stream(t.shape().dims()).boxed().toList());
            o.put("sha256", sha256(t.segment().toArray(ValueLayout.JAVA_BYTE)));
            o.put("file", file.toString());
            outs.add(o);
        }
        r.put("outputs", outs);
        out.println(Json.write(r));
        return ExitStatus.OK;
    }

    /** One compiled forward through the public API (the CPU has nothing to tune). */
    private static Map<String, Tensor> onCpu(Program program, Weights weights, Map<String, Tensor> inputs) {
        try (Session s = program.load(Device.parse("cpu"), weights, RunMode.COMPILED)) {
            return s.run(inputs);
        }
    }

    /**
     * On GPU 0 through {@link CudaSession}, so the autotuner runs: the first run of a set finds no
     * choice in {@code tuneFile} and tunes; the others replay its choices. The choices the session
     * used are reported in {@code tuned}.
     */
    private static Map<String, Tensor> onGpu(Program program, Weights weights, Map<String, Tensor> inputs, Path tuneFile,
                                             Map<String, String> tuned) {
        TuneCache tune = new TuneCache(tuneFile);
        var model = program.model("cuda", true);
        Map<String, Tensor> params = Bindings.parameters(model.graph(), weights);
        try (CudaDevice dev = CudaDevice.open(0);
             CudaSession s = CudaSession.open(dev, model, params,
                     CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF).withAutotune(tune))) {
            s.setInputs(inputs);
            s.forward();
            s.autotune();
            s.forward();
            Map<String, Tensor> outs = new LinkedHashMap<>();
            program.outputNames().forEach(n -> outs.put(n, s.output(n)));
            tune.save();
            tuned.putAll(new java.util.TreeMap<>(tune.entries()));
            return outs;
        }
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
