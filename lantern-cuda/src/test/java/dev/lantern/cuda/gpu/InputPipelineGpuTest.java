package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.InputPipeline;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.reference.Accuracy;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.CopyComputeOverlap.Interval;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Tag;

/**
 * Issue 18's memcpy/compute overlap from CUDA events on a decoder block (graph replay): uploads on a
 * copy stream hide under the forwards (overlap well above 0), the same work on one stream overlaps
 * nothing, and either way the last forward computed the last batch (the staging buffers were not
 * overwritten early: three distinct batches rotate, and the output is compared with that batch's
 * own forward).
 */
@Tag("gpu")
class InputPipelineGpuTest {
    private static final int FORWARDS = 60;

    @Test
    void pipelinedUploadsOverlapTheForwardsAndSerialOnesDoNot() {
        CudaDevice dev = Gpu.device();
        // decoder-small's layers over 4 x 512 tokens: a forward of about half a millisecond, well above what the host
        // takes to enqueue a batch (~10 driver calls), so the GPU, not the host, sets the pace, and a 4 MiB upload
        Model model = TransformerBlock.build(new BlockConfig("pipeline-test", 4, 512, 1024, 16, 4096, true), DType.BF16);
        try (CudaSession s = CudaSession.open(dev, model.graph(), null, CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER))) {
            List<Map<String, Tensor>> batches = new ArrayList<>();
            List<double[]> expected = new ArrayList<>();
            for (int b = 0; b < 3; b++) {
                batches.add(Feeds.inputs(s.model().graph(), 100 + b));
                s.setInputs(batches.getLast());
                s.forwardGraph();
                expected.add(s.output().toDoubles());
            }
            assertTrue(Accuracy.relErr(expected.get(0), expected.get(1)) > 1e-3, "the batches give different outputs");

            InputPipeline.Result piped;
            try (InputPipeline p = new InputPipeline(s, InputPipeline.Mode.PIPELINED, true)) {
                InputPipeline.Result one = p.run(batches, 1);
                assertEquals(0.0, one.overlap().pct(), 1e-9, "a single batch's upload precedes its forward");
                piped = p.run(batches, FORWARDS);
            }
            checkLastBatch(s, expected.get((FORWARDS - 1) % 3), "pipelined");
            InputPipeline.Result serial;
            try (InputPipeline p = new InputPipeline(s, InputPipeline.Mode.SERIAL, true)) {
                serial = p.run(batches, FORWARDS);
            }
            checkLastBatch(s, expected.get((FORWARDS - 1) % 3), "serial");

            for (InputPipeline.Result r : List.of(piped, serial)) {
                System.out.printf("[gpu] input pipeline %s: %.4f ms per batch, %d B uploaded per batch, copy busy %.4f ms, "
                                + "compute busy %.4f ms, overlap %.4f ms = %.1f %% of copy time%n", r.mode(), r.msPerBatch(), r.bytesPerBatch(),
                        r.overlap().copyBusy(), r.overlap().computeBusy(), r.overlap().overlap(), r.overlap().pct());
                assertEquals(FORWARDS, r.copies().size());
                for (int i = 0; i < FORWARDS; i++) {
                    Interval c = r.copies().get(i);
                    Interval k = r.computes().get(i);
                    assertTrue(c.length() > 0 && k.length() > 0, r.mode() + " batch " + i + ": " + c + " " + k);
                    assertTrue(k.start() >= c.end() - 1e-3, r.mode() + " batch " + i + ": the forward waits for its upload: " + c + " " + k);
                }
            }
            assertTrue(piped.overlap().pct() > 50, "uploads on the copy stream hide under the forwards: " + piped.overlap());
            assertTrue(serial.overlap().pct() < 1, "one stream overlaps nothing: " + serial.overlap());
            for (int i = 1; i < FORWARDS; i++) {
                assertTrue(serial.copies().get(i).start() >= serial.computes().get(i - 1).end() - 1e-3, "serial: stream order at batch " + i);
            }
        }
    }

    private static void checkLastBatch(CudaSession s, double[] expected, String what) {
        double err = Accuracy.relErr(s.output().toDoubles(), expected);
        assertTrue(err < 1e-6, what + ": the last forward computed the last batch (rel err " + err + ")");
    }
}
