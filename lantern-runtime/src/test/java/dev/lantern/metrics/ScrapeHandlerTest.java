package dev.lantern.metrics;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.zip.GZIPInputStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code /metrics} rendered on the server's platform thread and sent by the exchange's virtual thread
 * answers as the exporter's own handler does: what Prometheus asks for (gzip, its Accept header), a
 * HEAD with no body, a {@code name[]} filter, the values recorded (seeded random steps).
 */
class ScrapeHandlerTest {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void gzipHeadAndFilteredScrapesAnswerLikeThePlainOne() throws Exception {
        long seed = 20261202L;
        SplittableRandom rnd = new SplittableRandom(seed);
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        int steps = 5 + rnd.nextInt(20);
        for (int i = 0; i < steps; i++) {
            m.recordStep(0.1 + 10 * rnd.nextDouble(), 1 + rnd.nextInt(1000));
        }
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            HttpResponse<byte[]> plain = send(s.url(), "GET", null);
            assertEquals(200, plain.statusCode());
            String text = new String(plain.body(), StandardCharsets.UTF_8);
            assertEquals(steps, Scrape.value(text, "step_time_ms_count"), "seed " + seed + ": " + text);
            assertTrue(plain.headers().firstValue("Content-Type").orElse("").startsWith("text/plain"), plain.headers().toString());

            HttpResponse<byte[]> gz = send(s.url(), "GET", "gzip");
            assertEquals(200, gz.statusCode());
            assertEquals("gzip", gz.headers().firstValue("Content-Encoding").orElse(""), gz.headers().toString());
            String unzipped;
            try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(gz.body()))) {
                unzipped = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            assertEquals(text, unzipped, "the gzip body is the plain text");

            HttpResponse<byte[]> head = send(s.url(), "HEAD", null);
            assertEquals(200, head.statusCode());
            assertEquals(0, head.body().length, "a HEAD has no body");

            HttpResponse<byte[]> one = send(s.url() + "?name[]=step_time_ms", "GET", null);
            String filtered = new String(one.body(), StandardCharsets.UTF_8);
            assertEquals(steps, Scrape.value(filtered, "step_time_ms_count"), filtered);
            assertTrue(filtered.length() < text.length() && !filtered.contains("tokens_per_s"), "the filter kept only step_time_ms: " + filtered);
        }
    }

    private static HttpResponse<byte[]> send(String url, String method, String encoding) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).method(method, HttpRequest.BodyPublishers.noBody());
        if (encoding != null) {
            b.header("Accept-Encoding", encoding);
        }
        return CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }
}
