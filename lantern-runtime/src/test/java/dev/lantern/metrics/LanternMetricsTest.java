package dev.lantern.metrics;

import dev.lantern.SessionStats;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.runtime.alloc.AllocatorStats;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.StepResult;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The metrics as Prometheus sees them: scraped over HTTP from {@link MetricsServer} on a free loopback port. */
class LanternMetricsTest {
    private static final Map<String, String> TYPES = Map.ofEntries(Map.entry("step_time_ms", "histogram"),
            Map.entry("tokens_per_s", "gauge"), Map.entry("alloc_frag_pct", "gauge"), Map.entry("alloc_reserved_bytes", "gauge"),
            Map.entry("alloc_allocated_bytes", "gauge"), Map.entry("occ_pct", "gauge"), Map.entry("graph_hit_pct", "gauge"),
            Map.entry("graph_fallbacks_total", "counter"), Map.entry("dram_gbps", "gauge"),
            Map.entry("kernel_launches_total", "counter"), Map.entry("compiles_total", "counter"),
            Map.entry("compile_cache_hits_total", "counter"), Map.entry("oom_total", "counter"), Map.entry("loss_scale", "gauge"),
            Map.entry("overflow_steps_total", "counter"));

    @Test
    void everyMetricIsOnTheEndpointWithHelpAndTypeBeforeAnythingIsRecorded() throws Exception {
        assertEquals(TYPES.keySet(), java.util.Set.copyOf(LanternMetrics.NAMES));
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            HttpResponse<String> r = Scrape.get(s.url());
            assertEquals(200, r.statusCode());
            String body = r.body();
            for (String name : LanternMetrics.NAMES) {
                String family = TYPES.get(name).equals("counter") ? name.substring(0, name.length() - "_total".length()) : name;
                assertTrue(body.contains("# HELP " + name + " ") || body.contains("# HELP " + family + " "), name + " has no HELP: " + body);
                assertTrue(body.contains("# TYPE " + name + " " + TYPES.get(name)) || body.contains("# TYPE " + family + " " + TYPES.get(name)),
                        name + " has no TYPE " + TYPES.get(name) + ": " + body);
                String sample = name.equals("step_time_ms") ? "step_time_ms_count"
                        : name.equals("graph_fallbacks_total") ? "graph_fallbacks_total{reason=\"cpu\"}" : name;
                double v = Scrape.value(body, sample);
                assertEquals(name.equals("loss_scale") ? 1.0 : 0.0, v, name + " before anything is recorded: " + body);
            }
        }
    }

    @Test
    void trainingStepsMoveStepTimeTokensAndLossScale() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        BlockConfig tiny = new BlockConfig("tiny", 2, 16, 16, 2, 32, true);
        TrainOptions f16 = new TrainOptions(16, 1e-2, 0.01, 1.0, CompileOptions.Amp.F16, 7, 1, false);
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry());
             Trainer t = new Trainer(LanguageModel.of(tiny, 16, 7), f16)) {
            double sumMs = 0;
            StepResult last = null;
            long skipped = 0;
            for (int i = 0; i < 3; i++) {
                last = t.step();
                m.recordTrainStep(last, t.tokensPerStep());
                sumMs += last.nanos() / 1e6;
                skipped += last.applied() ? 0 : 1;
            }
            String body = Scrape.get(s.url()).body();
            assertEquals(3, Scrape.value(body, "step_time_ms_count"), body);
            assertEquals(sumMs, Scrape.value(body, "step_time_ms_sum"), 1e-9 * sumMs, body);
            double tokensPerS = t.tokensPerStep() / (last.nanos() / 1e9);
            assertEquals(tokensPerS, Scrape.value(body, "tokens_per_s"), 1e-9 * tokensPerS, body);
            assertTrue(tokensPerS > 0);
            assertEquals(last.scale(), Scrape.value(body, "loss_scale"), body);
            assertTrue(last.scale() > 1, "f16 trains with a dynamic loss scale: " + last.scale());
            assertEquals(skipped, Scrape.value(body, "overflow_steps_total"), body);
            assertEquals(3, Scrape.value(body, "step_time_ms_bucket{le=\"+Inf\"}"), body);
        }
    }

    @Test
    void allocatorSnapshotsSetTheGaugesAndCountOomsOnce() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        SplittableRandom rng = new SplittableRandom(18);
        long[] ooms = {2, 2, 5, 5};
        AllocatorStats s = null;
        for (long oom : ooms) {
            long free = 1 + rng.nextLong(1L << 30);
            long largest = 1 + rng.nextLong(free);
            long allocated = rng.nextLong(1L << 32);
            s = new AllocatorStats(allocated + free, allocated, allocated, free, 0, largest, 3, 2, 0, oom);
            m.allocator(s);
        }
        try (MetricsServer srv = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            String body = Scrape.get(srv.url()).body();
            double frag = 100.0 * (1.0 - (double) s.largestFree() / s.freeBytes()); // the definition, in float64
            assertEquals(frag, Scrape.value(body, "alloc_frag_pct"), 1e-9, body);
            assertEquals((double) s.reserved(), Scrape.value(body, "alloc_reserved_bytes"), 1, body);
            assertEquals((double) s.allocated(), Scrape.value(body, "alloc_allocated_bytes"), 1, body);
            assertEquals(5, Scrape.value(body, "oom_total"), "running totals become one increment each: " + body);
        }
    }

    @Test
    void sessionSnapshotsCountFallbacksByReason() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        m.session(new SessionStats(10, 7, Map.of("capture failed", 2L)));
        m.session(new SessionStats(20, 15, Map.of("capture failed", 3L, "policy", 1L)));
        m.session(new SessionStats(20, 15, Map.of("capture failed", 3L, "policy", 1L))); // the same snapshot adds nothing
        m.kernelLaunches(12);
        m.compiles(3);
        m.compileCacheHits(9);
        m.occupancy(62.5);
        m.dramGbps(3100.25);
        m.oom();
        try (MetricsServer srv = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            String body = Scrape.get(srv.url()).body();
            assertEquals(75.0, Scrape.value(body, "graph_hit_pct"), 1e-12, body);
            assertEquals(3, Scrape.value(body, "graph_fallbacks_total{reason=\"capture failed\"}"), body);
            assertEquals(1, Scrape.value(body, "graph_fallbacks_total{reason=\"policy\"}"), body);
            assertEquals(0, Scrape.value(body, "graph_fallbacks_total{reason=\"cpu\"}"), body);
            assertEquals(12, Scrape.value(body, "kernel_launches_total"), body);
            assertEquals(3, Scrape.value(body, "compiles_total"), body);
            assertEquals(9, Scrape.value(body, "compile_cache_hits_total"), body);
            assertEquals(62.5, Scrape.value(body, "occ_pct"), body);
            assertEquals(3100.25, Scrape.value(body, "dram_gbps"), body);
            assertEquals(1, Scrape.value(body, "oom_total"), body);
        }
        assertThrows(IllegalArgumentException.class, () -> m.kernelLaunches(-1));
        assertThrows(IllegalArgumentException.class, () -> m.recordStep(Double.NaN, 1));
    }

    @Test
    void unknownPathsAre404AndClosingStopsTheServerAndItsThreads() throws Exception {
        long before = Scrape.serverThreads();
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry());
        String base = "http://127.0.0.1:" + s.port();
        assertEquals(404, Scrape.get(base + "/").statusCode());
        assertEquals(404, Scrape.get(base + "/nope").statusCode());
        assertEquals(200, Scrape.get(base + "/metrics").statusCode());
        assertTrue(Scrape.serverThreads() > before, "the server runs its own dispatcher thread");
        s.close();
        assertThrows(ConnectException.class, () -> Scrape.get(base + "/metrics"));
        assertEquals(before, Scrape.serverThreads(), "the server's threads outlived close()");
    }

    @Test
    void aSecondSetOnOneRegistryAndABadPortAreRefused() throws IOException {
        PrometheusRegistry r = new PrometheusRegistry();
        new LanternMetrics(r);
        assertThrows(IllegalArgumentException.class, () -> new LanternMetrics(r));
        assertThrows(IllegalArgumentException.class, () -> MetricsServer.start("127.0.0.1", 65536, r));
        assertThrows(java.net.UnknownHostException.class, () -> MetricsServer.start("no-such-host.invalid", 0, r));
    }
}
