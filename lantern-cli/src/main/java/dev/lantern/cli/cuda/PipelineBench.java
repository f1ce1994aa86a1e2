package dev.lantern.cli.cuda;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.InputPipeline;
import dev.lantern.cuda.engine.TuneCache;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code lantern bench macro --pipeline}: a block fed batch after batch through an {@link InputPipeline}
 * (each forward a graph replay after uploading its input), once with the uploads on a copy stream
 * beside the forwards and once on the forwards' own stream. Two records, {@code impl}
 * {@code lantern-pipelined} and {@code lantern-serial}: {@code ms} per batch (upload and forward), and
 * the memcpy/compute overlap measured from CUDA events ({@code memcpy_compute_overlap_pct},
 * {@code overlap_method: "cuda-events"}), with the busy times it is made of.
 */
final class PipelineBench {
    /** Distinct input batches rotated through the pipeline (the staging buffers alternate between two). */
    private static final int BATCHES = 3;

    private PipelineBench() {}

    static void run(CudaBench bench, CudaDevice device, TuneCache tune, BlockConfig cfg, long seed, Consumer<String> progress) {
        Model model = TransformerBlock.build(cfg, DType.BF16);
        boolean big = (long) cfg.batch() * cfg.seq() > 4096;
        int forwards = big ? 40 : 200;
        progress.accept("macro " + cfg.name() + ": input pipeline (compiling)");
        CompileOptions co = CompileOptions.defaults().withTarget("cuda").withFuse(true).withDeterministic(bench.deterministic());
        CudaSession.Options options = CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER).withAutotune(tune);
        try (CudaSession s = CudaSession.open(device, Compiler.compile(model.graph(), co), null, options)) {
            s.fillInputs(seed);
            s.autotune(); // the tune cache's choices when bench macro tuned this block just before
            List<Map<String, Tensor>> batches = new ArrayList<>();
            for (int b = 0; b < BATCHES; b++) {
                batches.add(Feeds.inputs(s.model().graph(), seed + 1 + b));
            }
            InputPipeline.Result piped;
            InputPipeline.Result serial;
            try (InputPipeline p = new InputPipeline(s, InputPipeline.Mode.PIPELINED, true);
                 InputPipeline q = new InputPipeline(s, InputPipeline.Mode.SERIAL, true)) {
                progress.accept("macro " + cfg.name() + ": input pipeline (" + forwards + " batches each way)");
                p.run(batches, CudaBench.WARMUP); // warm-up of both, then each timed once
                q.run(batches, CudaBench.WARMUP);
                piped = p.run(batches, forwards);
                serial = q.run(batches, forwards);
            }
            double flops = CudaBench.blockFlops(cfg);
            Map<String, Object> extra = figures(piped);
            extra.put("serial_ms", CudaBench.round(serial.msPerBatch(), 4));
            extra.put("speedup_vs_serial", CudaBench.round(serial.msPerBatch() / piped.msPerBatch(), 4));
            bench.record(cfg.name(), "lantern-pipelined", piped.msPerBatch(), "tflops", flops / piped.msPerBatch() / 1e9, s.peakBytes(), extra);
            bench.record(cfg.name(), "lantern-serial", serial.msPerBatch(), "tflops", flops / serial.msPerBatch() / 1e9, s.peakBytes(),
                    figures(serial));
        }
    }

    private static Map<String, Object> figures(InputPipeline.Result r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("batches", r.batches());
        m.put("upload_bytes", r.bytesPerBatch());
        m.put("copy_busy_ms", CudaBench.round(r.overlap().copyBusy(), 4));
        m.put("compute_busy_ms", CudaBench.round(r.overlap().computeBusy(), 4));
        m.put("overlap_ms", CudaBench.round(r.overlap().overlap(), 4));
        m.put("memcpy_compute_overlap_pct", CudaBench.round(r.overlap().pct(), 2)); // never null: every batch uploads
        m.put("overlap_method", "cuda-events");
        return m;
    }
}
