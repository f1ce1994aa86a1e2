package dev.lantern.cli.cuda;

import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.engine.KernelFigures;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.kernel.KernelTraffic;
import dev.lantern.metrics.LanternMetrics;
import dev.lantern.metrics.MetricsServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * occ_pct and dram_gbps as bench macro and bench model record them ({@link CudaBench#summarize}), on
 * decoder-small lowered for the H200 without a GPU: stand-in blocks per SM and step times (as
 * {@link KernelFiguresJsonTest}), the expected figures recomputed here in float64 from the launch
 * shapes and the cost model, then read back from /metrics.
 */
class KernelFiguresMetricsTest {
    @Test
    void benchKernelFiguresReachTheOccupancyAndDramGauges() throws Exception {
        CompiledModel m = Compiler.compile(TransformerBlock.build(BlockConfig.named("decoder-small"), DType.BF16).graph(),
                CompileOptions.defaults().withTarget("cuda"));
        List<Step> steps = CudaLowering.lower(m, CudaTarget.H200).steps();
        List<CudaSession.StepTime> times = new ArrayList<>();
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(18);
        for (int i = 0; i < steps.size(); i++) {
            times.add(new CudaSession.StepTime("op" + i, 0.001 + 0.01 * rnd.nextDouble()));
        }
        int perSm = 3;
        int maxThreads = 2048;
        List<KernelFigures.Figure> figs = KernelFigures.of(steps, m.kernels(), times, l -> perSm, maxThreads, 132);

        double occTime = 0;
        double launchTime = 0;
        double allMs = 0;
        java.util.Set<Integer> kernelsTimed = new java.util.TreeSet<>();
        for (int i = 0; i < steps.size(); i++) {
            double ms = times.get(i).ms();
            allMs += ms;
            kernelsTimed.add(steps.get(i).kernel());
            if (steps.get(i) instanceof Step.Launch l) {
                LaunchConfig c = l.source().launch();
                double warps = Math.ceil(c.threads() / 32.0);
                occTime += Math.min(100.0, 100.0 * perSm * warps * 32 / maxThreads) * ms;
                launchTime += ms;
            }
        }
        double bytes = 0;
        for (int k : kernelsTimed) {
            bytes += KernelTraffic.bytes(m.kernels().get(k));
        }
        double expectOcc = occTime / launchTime;
        double expectGbps = bytes / (allMs * 1e-3) / 1e9;
        assertTrue(expectOcc > 0 && expectGbps > 0, expectOcc + " " + expectGbps);

        LanternMetrics metrics = new LanternMetrics(new PrometheusRegistry());
        KernelFigures.Summary s = CudaBench.summarize(figs, metrics);
        assertEquals(expectOcc, s.occPct(), 1e-9 * expectOcc);
        try (MetricsServer srv = MetricsServer.start("127.0.0.1", 0, metrics.registry())) {
            String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(srv.url())).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertEquals(expectOcc, value(body, "occ_pct"), 1e-9 * expectOcc, body);
            assertEquals(expectGbps, value(body, "dram_gbps"), 1e-9 * expectGbps, body);
        }
        // a forward of GEMMs only has no occupancy figure: the gauge keeps the last one, it does not turn NaN
        CudaBench.summarize(List.of(new KernelFigures.Figure(0, "gemm", 1000, 1.0, 1e-3,
                List.of(new KernelFigures.Launch(0, "gemm", 1.0, null, 0, Double.NaN, Double.NaN, Double.NaN)))), metrics);
        try (MetricsServer srv = MetricsServer.start("127.0.0.1", 0, metrics.registry())) {
            String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(srv.url())).build(),
                    HttpResponse.BodyHandlers.ofString()).body();
            assertEquals(expectOcc, value(body, "occ_pct"), 1e-9 * expectOcc, body);
            assertEquals(1000 / 1e-3 / 1e9, value(body, "dram_gbps"), 1e-12, body);
        }
    }

    static double value(String body, String series) {
        Matcher mt = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)").matcher(body);
        return mt.find() ? Double.parseDouble(mt.group(1)) : Double.NaN;
    }
}
