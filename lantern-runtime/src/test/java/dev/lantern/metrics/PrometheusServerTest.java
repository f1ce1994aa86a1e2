package dev.lantern.metrics;

import dev.lantern.SessionStats;
import dev.lantern.runtime.alloc.AllocatorStats;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A real Prometheus server (Debian's {@code prometheus}, started here on loopback with a private
 * data folder) scrapes {@link MetricsServer} every second, and the values are read back through
 * Prometheus' HTTP query API: what a dashboard would show. Fails, never skips, when the binary is
 * missing ({@code apt-get install prometheus}, or {@code LANTERN_PROMETHEUS=/path/to/prometheus}).
 * Tagged {@code prometheus}: it runs in the default build ({@code ./lantern test} installs Prometheus first: scripts/test-services)
 * (or {@code -Pgpu}, which runs every tier), never silently skipped inside a tier that runs.
 */
@org.junit.jupiter.api.Tag("prometheus")
class PrometheusServerTest {
    private static final Pattern VALUE = Pattern.compile("\"value\":\\[[0-9.]+,\"([^\"]+)\"\\]");

    static Path binary() {
        String env = System.getenv("LANTERN_PROMETHEUS");
        if (env != null) {
            return Path.of(env);
        }
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(java.io.File.pathSeparator)) {
            Path p = Path.of(dir, "prometheus");
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return fail("no prometheus binary on PATH: install Debian's prometheus (apt-get install prometheus)"
                + " or set LANTERN_PROMETHEUS");
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void prometheusScrapesEveryMetricAndReadsTheRecordedValuesBack(@TempDir Path dir) throws Exception {
        Path prometheus = binary();
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        for (int i = 0; i < 3; i++) {
            m.recordStep(12.5, 64); // 64 tokens in 12.5 ms: 5120 tokens/s
        }
        m.allocator(new AllocatorStats(8L << 20, 5L << 20, 5L << 20, 3L << 20, 0, 1L << 20, 7, 2, 0, 4));
        m.session(new SessionStats(8, 6, Map.of("capture failed", 2L)));
        try (MetricsServer lantern = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            int webPort = freePort();
            Path config = dir.resolve("prometheus.yml");
            Files.writeString(config, """
                    global:
                      scrape_interval: 1s
                    scrape_configs:
                      - job_name: lantern
                        static_configs:
                          - targets: ["127.0.0.1:%d"]
                    """.formatted(lantern.port()));
            Process p = new ProcessBuilder(prometheus.toString(), "--config.file=" + config, "--storage.tsdb.path=" + dir.resolve("data"),
                    "--web.listen-address=127.0.0.1:" + webPort).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("prometheus.log").toFile()).start();
            try {
                String api = "http://127.0.0.1:" + webPort + "/api/v1/query?query=";
                double count = waitFor(api, "step_time_ms_count", p, dir);
                assertEquals(3, count);
                assertEquals(1, query(api, "up{job=\"lantern\"}"));
                assertEquals(37.5, query(api, "step_time_ms_sum"), 1e-9);
                assertEquals(3, query(api, "step_time_ms_bucket{le=\"20.0\"}"));
                assertEquals(0, query(api, "step_time_ms_bucket{le=\"10.0\"}"));
                assertEquals(5120, query(api, "tokens_per_s"), 1e-9);
                assertEquals(100.0 * (1 - 1.0 / 3), query(api, "alloc_frag_pct"), 1e-9);
                assertEquals(8 << 20, query(api, "alloc_reserved_bytes"));
                assertEquals(5 << 20, query(api, "alloc_allocated_bytes"));
                assertEquals(4, query(api, "oom_total"));
                assertEquals(75, query(api, "graph_hit_pct"), 1e-9);
                assertEquals(2, query(api, "graph_fallbacks_total{reason=\"capture failed\"}"));
                assertEquals(1, query(api, "loss_scale"));
                for (String zero : new String[] {"occ_pct", "dram_gbps", "kernel_launches_total", "compiles_total",
                    "compile_cache_hits_total", "overflow_steps_total", "graph_fallbacks_total{reason=\"cpu\"}"}) {
                    assertEquals(0, query(api, zero), zero + " is scraped at 0 before anything records it");
                }
            } finally {
                p.destroy();
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly().waitFor();
                }
            }
        }
    }

    /** Polls until Prometheus has scraped {@code expr} (up to 60 s). */
    private static double waitFor(String api, String expr, Process p, Path dir) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            if (!p.isAlive()) {
                fail("prometheus exited with " + p.exitValue() + ": " + Files.readString(dir.resolve("prometheus.log")));
            }
            try {
                // 503 until Prometheus is ready (its storage still opening): keep polling, as for a refused connection
                if (Scrape.get(api.substring(0, api.indexOf("/api/")) + "/-/ready").statusCode() == 200) {
                    double v = query(api, expr);
                    if (!Double.isNaN(v)) {
                        return v;
                    }
                }
            } catch (IOException notUpYet) {
                // the web server is still starting
            }
            Thread.sleep(200);
        }
        return fail("prometheus did not scrape " + expr + " within 60 s: " + Files.readString(dir.resolve("prometheus.log")));
    }

    /** The instant value of {@code expr}, NaN when Prometheus has no sample for it. */
    private static double query(String api, String expr) throws IOException, InterruptedException {
        var r = Scrape.get(api + URLEncoder.encode(expr, StandardCharsets.UTF_8));
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(r.body().contains("\"status\":\"success\""), r.body());
        Matcher v = VALUE.matcher(r.body());
        return v.find() ? Double.parseDouble(v.group(1)) : Double.NaN;
    }
}
