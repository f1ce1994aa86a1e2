package dev.lantern.cli;

import dev.lantern.bench.cpu.CpuBench;
import dev.lantern.bench.cpu.CpuTarget;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelTraffic;
import dev.lantern.metrics.LanternMetrics;
import dev.lantern.metrics.MetricsServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code bench cpu}'s metrics: a real CPU benchmark of a small block recorded as the command records it
 * ({@link CpuBenchCommand#record}), every figure read back from /metrics against what the run did
 * (launches = forwards × kernels, compiles = kernels, dram_gbps = cost-model bytes ÷ the profiled
 * kernels' time, recomputed here); and the command serving them while it runs.
 */
class BenchCpuMetricsTest {
    private static final BlockConfig SMALL = new BlockConfig("metrics-small", 2, 16, 32, 2, 64, true);

    @Test
    void aCpuBenchRecordsLaunchesCompilesStepAndDramGbps() throws Exception {
        LanternMetrics metrics = new LanternMetrics(new PrometheusRegistry());
        CpuTarget target = CpuTarget.block(SMALL, 5); // compiled after the metrics exist: its kernels count
        int rounds = 6;
        CpuBench.Result r = CpuBench.run(target, null, null, 1, rounds, 0, done -> { });
        CpuBenchCommand.record(metrics, r, (long) SMALL.batch() * SMALL.seq());

        List<Kernel> kernels = target.model().kernels();
        long nonEmpty = kernels.stream().filter(k -> k.output().shape().numel() > 0).count();
        double bytes = 0;
        double ms = 0;
        for (int i = 0; i < kernels.size(); i++) {
            bytes += KernelTraffic.bytes(kernels.get(i));
            ms += r.steps().get(i).ms();
        }
        double gbps = bytes / (ms * 1e-3) / 1e9;
        assertTrue(gbps > 0 && Double.isFinite(gbps), "profiled kernels took " + ms + " ms for " + bytes + " bytes");
        try (MetricsServer srv = MetricsServer.start("127.0.0.1", 0, metrics.registry())) {
            String body = MetricsCommandTest.scrape(srv.url());
            // rounds timed forwards and rounds profiled ones, no warm-up, no peer
            assertEquals(2.0 * rounds * nonEmpty, MetricsCommandTest.value(body, "kernel_launches_total"), body);
            assertEquals(kernels.size(), MetricsCommandTest.value(body, "compiles_total"), body);
            assertEquals(gbps, MetricsCommandTest.value(body, "dram_gbps"), 1e-9 * gbps, body);
            assertEquals(1, MetricsCommandTest.value(body, "step_time_ms_count"), body);
            assertEquals(r.lanternMs(), MetricsCommandTest.value(body, "step_time_ms_sum"), 1e-12, body);
            double tokensPerS = SMALL.batch() * SMALL.seq() / (r.lanternMs() / 1e3);
            assertEquals(tokensPerS, MetricsCommandTest.value(body, "tokens_per_s"), 1e-9 * tokensPerS, body);
            assertEquals(0, MetricsCommandTest.value(body, "occ_pct"), "the CPU has no occupancy figure: " + body);
        }
    }

    @Test
    void benchCpuServesItsCountersWhileItRuns(@TempDir Path dir) throws Exception {
        long threadsBefore = MetricsCommandTest.serverThreads();
        MetricsCommandTest.Live run = MetricsCommandTest.Live.start("bench", "cpu", "--shape", "2,16,32,2,64", "--rounds", "3000",
                "--warmups", "0", "--metrics-port", "0", "--json", "--out", dir.resolve("r.json").toString());
        String url = run.url();
        double launches = 0;
        double compiles = 0;
        while (!run.code().isDone()) {
            String body = MetricsCommandTest.scrapeWhileRunning(run, url);
            if (body == null) {
                break; // the command ended
            }
            MetricsCommandTest.assertEveryMetric(body);
            launches = Math.max(launches, MetricsCommandTest.value(body, "kernel_launches_total"));
            compiles = Math.max(compiles, MetricsCommandTest.value(body, "compiles_total"));
            Thread.sleep(5);
        }
        assertEquals(0, run.code().get(120, TimeUnit.SECONDS), run.errText());
        assertTrue(compiles > 0 && launches > 0, "scraped while running: " + compiles + " compiles, " + launches + " launches");
        assertTrue(run.out().toString(java.nio.charset.StandardCharsets.UTF_8).contains("\"dram_gbps\": "), run.out().toString());
        assertEquals(threadsBefore, MetricsCommandTest.serverThreads(), "the server's threads outlived the command");
    }
}
