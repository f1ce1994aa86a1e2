package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A GPU-machine probe (not a test) for {@code scripts/gpu-profile}: the memcpy/compute overlap from
 * CUDA events, where nsys gives none. One block's compiled bf16 forward (graph replay), as {@code
 * bench macro --pipeline} runs it, fed {@code --batches N} batches through an {@link InputPipeline}
 * pipelined and then serial, after a warm-up of each. Writes {@code --out FILE}, the JSON the
 * normalizer reads ({@code ProfileMain --events}), times in µs:
 * {@code {"method": "cuda-events", "block", "batches", "upload_bytes", "pipelined": {ms_per_batch,
 * copies, computes, copy_busy_us, compute_busy_us, overlap_us}, "serial": {...}}}. Usage:
 * {@code OverlapProbe [--tune] [--batches N] --out FILE BLOCK} (BLOCK as in {@link SanitizeProbe}).
 */
public final class OverlapProbe {
    private OverlapProbe() {}

    public static void main(String[] args) throws Exception {
        boolean tune = false;
        int batches = 100;
        Path out = null;
        BlockConfig cfg = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--tune" -> tune = true;
                case "--batches" -> batches = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                default -> cfg = SanitizeProbe.parse(args[i]);
            }
        }
        if (cfg == null || out == null || batches < 1) {
            System.err.println("usage: OverlapProbe [--tune] [--batches N] --out FILE BLOCK");
            System.exit(2);
        }
        CudaSession.Options o = CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER);
        if (tune) {
            o = o.withAutotune(new TuneCache(TuneCache.defaultFile()));
        }
        try (CudaDevice device = CudaDevice.open(0);
             CudaSession s = CudaSession.open(device, TransformerBlock.build(cfg, DType.BF16).graph(), null, o)) {
            s.fillInputs(7);
            if (tune) {
                s.autotune();
            }
            List<Map<String, Tensor>> feeds = new ArrayList<>();
            for (int b = 0; b < 3; b++) {
                feeds.add(Feeds.inputs(s.model().graph(), 11 + b));
            }
            InputPipeline.Result piped;
            InputPipeline.Result serial;
            try (InputPipeline p = new InputPipeline(s, InputPipeline.Mode.PIPELINED, true);
                 InputPipeline q = new InputPipeline(s, InputPipeline.Mode.SERIAL, true)) {
                p.run(feeds, 10);
                q.run(feeds, 10);
                piped = p.run(feeds, batches);
                serial = q.run(feeds, batches);
            }
            String json = String.format(Locale.ROOT, "{\"method\": \"cuda-events\", \"block\": \"%s\", \"batches\": %d, \"upload_bytes\": %d,%n"
                    + " \"pipelined\": %s,%n \"serial\": %s}%n", cfg.name(), batches, piped.bytesPerBatch(), run(piped), run(serial));
            Files.writeString(out, json);
            System.out.printf(Locale.ROOT, "[profile] %s input pipeline over %d batches: overlap %.1f %% pipelined (%.4f ms per batch), "
                            + "%.1f %% serial (%.4f ms per batch)%n", cfg.name(), batches, piped.overlap().pct(), piped.msPerBatch(),
                    serial.overlap().pct(), serial.msPerBatch());
        }
    }

    private static String run(InputPipeline.Result r) {
        return String.format(Locale.ROOT, "{\"ms_per_batch\": %.6f, \"copies\": %d, \"computes\": %d, \"copy_busy_us\": %.3f, "
                        + "\"compute_busy_us\": %.3f, \"overlap_us\": %.3f}", r.msPerBatch(), r.overlap().copies(), r.overlap().computes(),
                1e3 * r.overlap().copyBusy(), 1e3 * r.overlap().computeBusy(), 1e3 * r.overlap().overlap());
    }
}
