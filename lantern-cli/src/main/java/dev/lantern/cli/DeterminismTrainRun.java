package dev.lantern.cli;

import dev.lantern.cpu.CpuConfig;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.DType;
import dev.lantern.ir.GraphHash;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.Parameter;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code lantern determinism-run --train N} (hidden): one training run of {@code lantern determinism
 * --train N} in its own JVM: N steps of {@link Trainer} on the block, then one JSON line as
 * {@link DeterminismRun} prints it, whose outputs are the N losses and the final f32 weights (all
 * parameters, in graph order), plus the weights' and the losses' hashes.
 */
final class DeterminismTrainRun {
    private DeterminismTrainRun() {}

    static int run(Args a, CompileOptions options, long seed, Path outDir, int index, PrintStream out) {
        int steps = a.getInt("determinism", "train", 1, 1, 1_000_000);
        BlockConfig cfg = BlockOption.of("determinism", a.get("config", null), a.get("shape", null));
        cfg = cfg == null ? BlockConfig.named("cpu-small") : cfg;
        TrainOptions o = TrainOptions.defaults().withAmp(options.amp()).withSeed(seed).withThreads(CpuConfig.THREADS)
                .withDeterministic(options.deterministic());
        LanguageModel lm = LanguageModel.of(cfg, o.vocab(), seed);
        Tensor losses = Tensor.allocate(DType.F32, Shape.of(steps));
        Map<String, Object> r = new LinkedHashMap<>();
        try (Trainer t = new Trainer(lm, o, dev.lantern.Device.parse(options.target()))) {
            for (int i = 0; i < steps; i++) {
                losses.set(i, (float) t.step().loss());
            }
            long total = t.parameters().stream().mapToLong(Parameter::numel).sum();
            Tensor weights = Tensor.allocate(DType.F32, Shape.of(Math.toIntExact(total)));
            long at = 0;
            for (Parameter p : t.parameters()) {
                MemorySegment.copy(p.value().segment(), 0, weights.segment(), at * 4, p.numel() * 4);
                at += p.numel();
            }
            r.put("run", index);
            r.put("device", options.target());
            r.put("threads", CpuConfig.THREADS);
            r.put("deterministic", options.deterministic());
            r.put("graph_hash", GraphHash.of(lm.graph()));
            r.put("cache_key", GraphHash.of(t.compiled().graph()));
            r.put("kernel_keys", t.compiled().kernels().stream().map(Kernel::key).map(k -> k.hash()).toList());
            r.put("autotune", Map.of());
            r.put("train_steps", steps);
            r.put("weights_hash", t.weightsHash());
            r.put("loss_hash", DeterminismRun.sha256(losses.segment().toArray(ValueLayout.JAVA_BYTE)));
            List<Map<String, Object>> outs = new ArrayList<>();
            int k = 0;
            for (Map.Entry<String, Tensor> e : Map.of("losses", losses, "weights", weights).entrySet().stream()
                    .sorted(Map.Entry.comparingByKey()).toList()) {
                Path file = outDir.resolve("run-" + index + "-" + k++ + ".npy");
                OutputFile.writeAtomically(file, Npy.toBytes(e.getValue()));
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("name", e.getKey());
                x.put("dtype", "f32");
                x.put("shape", List.of(e.getValue().shape().dim(0)));
                x.put("sha256", DeterminismRun.sha256(e.getValue().segment().toArray(ValueLayout.JAVA_BYTE)));
                x.put("file", file.toString());
                outs.add(x);
            }
            r.put("outputs", outs);
        }
        out.println(Json.write(r));
        return ExitStatus.OK;
    }
}
