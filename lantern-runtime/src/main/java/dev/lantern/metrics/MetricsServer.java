package dev.lantern.metrics;

import com.sun.net.httpserver.HttpExchange;
import io.prometheus.metrics.exporter.httpserver.HTTPServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.net.InetAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@code /metrics} endpoint: Prometheus' own HTTP exporter over a registry, on a host and
 * port the caller names (127.0.0.1 by default: metrics tell about the machine, so they are not
 * published to the network unless asked). Every other path answers 404, not the exporter's landing
 * page, so that a mistyped scrape target fails loudly. {@link #close()} stops the server and its
 * threads; a command holds it in try-with-resources so nothing outlives it.
 */
public final class MetricsServer implements AutoCloseable {
    public static final String DEFAULT_HOST = "127.0.0.1";
    /** Scrapes are small and rare; two threads answer them, so a flood cannot add threads. */
    private static final int THREADS = 2;
    private static final AtomicInteger SERVERS = new AtomicInteger();

    private final HTTPServer server;
    private final ExecutorService executor;
    private final String host;

    private MetricsServer(HTTPServer server, ExecutorService executor, String host) {
        this.server = server;
        this.executor = executor;
        this.host = host;
    }

    /**
     * Starts serving {@code registry} at {@code http://host:port/metrics}; port 0 picks a free one
     * ({@link #port()}).
     *
     * @throws IOException when the host does not resolve or the port cannot be bound
     */
    public static MetricsServer start(String host, int port, PrometheusRegistry registry) throws IOException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
        }
        InetAddress address = InetAddress.getByName(host);
        int id = SERVERS.incrementAndGet();
        AtomicInteger n = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(THREADS, r -> {
            Thread t = new Thread(r, "lantern-metrics-" + id + "-" + n.incrementAndGet());
            t.setDaemon(true); // a command that forgets close() must still be able to exit
            return t;
        });
        try {
            HTTPServer s = HTTPServer.builder().inetAddress(address).port(port).registry(registry).executorService(executor)
                    .metricsHandlerPath("/metrics").registerHealthHandler(false).defaultHandler(MetricsServer::notFound)
                    .buildAndStart();
            return new MetricsServer(s, executor, host);
        } catch (IOException | RuntimeException e) {
            executor.shutdownNow();
            throw e;
        }
    }

    /** The bound port (the one picked when started on port 0). */
    public int port() {
        return server.getPort();
    }

    /** The URL Prometheus scrapes. */
    public String url() {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return "http://" + h + ":" + port() + "/metrics";
    }

    @Override
    public void close() {
        server.close();
        executor.shutdownNow();
        try {
            if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the metrics server's threads did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void notFound(HttpExchange exchange) throws IOException {
        try (exchange) {
            byte[] body = ("not found: " + exchange.getRequestURI().getPath() + " (the metrics are at /metrics)\n")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            exchange.sendResponseHeaders(404, body.length);
            exchange.getResponseBody().write(body);
        }
    }
}
