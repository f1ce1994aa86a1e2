package dev.lantern.metrics;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The endpoint under abuse on loopback: 1,000 idle connections, requests that stop halfway
 * through their headers, an oversized header and unknown paths, all at once. A scrape still
 * answers within seconds, and the platform threads do not grow with the connections. The prints
 * are the phases' times, the diagnosis the abuse figure needs. Tagged {@code prometheus}
 * (run with {@code -Pprometheus}, not in CI): it passes, but takes about 236 s on 2 cores (the 1,000
 * connects 162 s, the 4 MiB header 61 s); the cause is not found yet (a listen backlog of 1024
 * instead of the exporter's 3 did not help; docs/observability.md).
 */
@Tag("prometheus")
class MetricsServerAbuseTest {
    @Test
    void scrapesKeepAnsweringUnderIdleSlowAndOversizedConnections() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        m.recordStep(3, 10);
        List<Socket> held = new ArrayList<>();
        final long T0 = System.nanoTime();
        int platformBefore = Thread.activeCount();
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            InetAddress lo = InetAddress.getLoopbackAddress();
            try {
                for (int i = 0; i < 1000; i++) {
                    held.add(new Socket(lo, s.port())); // connected, never a byte
                }
                System.out.println("idle connected " + (System.nanoTime() - T0) / 1e9);
                for (int i = 0; i < 50; i++) { // slow: half a request, then silence
                    Socket slow = new Socket(lo, s.port());
                    OutputStream o = slow.getOutputStream();
                    o.write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
                    o.flush();
                    held.add(slow);
                }
                System.out.println("slow sent " + (System.nanoTime() - T0) / 1e9);
                try (Socket big = new Socket(lo, s.port())) {
                    OutputStream o = big.getOutputStream();
                    o.write(("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(4 << 20) + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    o.flush();
                    byte[] answer = big.getInputStream().readNBytes(12);
                    String status = new String(answer, StandardCharsets.US_ASCII);
                    assertTrue(answer.length == 0 || !status.contains(" 200"), "a 4 MiB header is not served: " + status);
                } catch (java.io.IOException refused) {
                    // the server closing the connection on an oversized header is an answer too
                }
                System.out.println("big done " + (System.nanoTime() - T0) / 1e9);
                for (int i = 0; i < 20; i++) {
                    assertEquals(404, Scrape.get("http://127.0.0.1:" + s.port() + "/x" + i).statusCode());
                }
                System.out.println("404s done " + (System.nanoTime() - T0) / 1e9);
                long t0 = System.nanoTime();
                var r = Scrape.get(s.url());
                double seconds = (System.nanoTime() - t0) / 1e9;
                assertEquals(200, r.statusCode());
                assertEquals(1, Scrape.value(r.body(), "step_time_ms_count"), r.body());
                assertTrue(seconds < 5, "a scrape under abuse took " + seconds + " s");
                assertTrue(Thread.activeCount() < platformBefore + 50,
                        "platform threads grew with the connections: " + platformBefore + " -> " + Thread.activeCount());
            } finally {
                for (Socket k : held) {
                    k.close();
                }
            }
        }
    }
}
