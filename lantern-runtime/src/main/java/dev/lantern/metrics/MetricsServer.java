package dev.lantern.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@code /metrics} endpoint: the Prometheus exporter's scrape handler over a registry ({@link ScrapeHandler}), on a
 * host and port the caller names (127.0.0.1 by default: metrics tell about the machine, so they are not
 * published to the network unless asked). Every other path answers 404, not the exporter's landing
 * page, so that a mistyped scrape target fails loudly. {@link #close()} stops the server and its
 * threads; a command holds it in try-with-resources so nothing outlives it.
 *
 * <p>The JDK {@link HttpServer} is made here rather than by the exporter's {@code HTTPServer.Builder},
 * which creates it with a listen backlog of 3 and offers no way to change it: a burst of connections
 * then fills the kernel's accept queue, further SYNs are dropped, and each client (a scrape among them)
 * waits for its SYN to be sent again, 1 s and then 3 s later. Opening 300 connections took 39 s against
 * a backlog of 3 and 0.13 s against {@link #BACKLOG}. Exchanges run on {@link ExchangeExecutor}, so that
 * a client sending half a request does not hold up the scrapes behind it, with bounds on what runs and
 * what waits.
 *
 * <p>A request's header is limited to {@link #MAX_HEADER} bytes (the JDK's default is 380 KiB): the JDK
 * reads a header a byte at a time into a char array that doubles as it fills, so each oversized header
 * cost 2.6 MB of allocation and 6-12 ms of CPU before it was refused; at 8 KiB it costs 40 KiB and
 * 0.2 ms. A scrape's header is a few hundred bytes.
 */
public final class MetricsServer implements AutoCloseable {
    public static final String DEFAULT_HOST = "127.0.0.1";
    /** Connections the kernel may hold for the server before it accepts them (capped by net.core.somaxconn). */
    static final int BACKLOG = 1024;
    /** Exchanges answered at once (each on a virtual thread); more wait in a queue. */
    static final int MAX_EXCHANGES = 256;
    /** Exchanges that may wait; past these the connection is closed, so a flood cannot grow threads or memory. */
    static final int MAX_WAITING = 4096;
    /** The longest request header accepted, in bytes; past it the connection is closed. */
    static final int MAX_HEADER = 8192;
    private static final AtomicInteger SERVERS = new AtomicInteger();

    static {
        // What the exporter's HTTPServer sets when its class loads (JVM-wide, only where the application set
        // nothing): a request must arrive within 60 s and a response leave within 600 s, else the JDK server
        // closes the connection. Without it a client that never finishes its request holds its exchange forever.
        if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
            System.setProperty("sun.net.httpserver.maxReqTime", "60");
        }
        if (System.getProperty("sun.net.httpserver.maxRspTime") == null) {
            System.setProperty("sun.net.httpserver.maxRspTime", "600");
        }
        // likewise read once per JVM, when its first HttpServer is made (no other part of Lantern makes one)
        if (System.getProperty("sun.net.httpserver.maxReqHeaderSize") == null) {
            System.setProperty("sun.net.httpserver.maxReqHeaderSize", String.valueOf(MAX_HEADER));
        }
    }

    private final HttpServer server;
    private final ExchangeExecutor executor;
    private final ScrapeHandler scrape;
    private final String host;

    private MetricsServer(HttpServer server, ExchangeExecutor executor, ScrapeHandler scrape, String host) {
        this.server = server;
        this.executor = executor;
        this.scrape = scrape;
        this.host = host;
    }

    /**
     * Starts serving {@code registry} at {@code http://host:port/metrics}; port 0 picks a free one
     * ({@link #port()}).
     *
     * @throws IOException when the host does not resolve or the port cannot be bound
     */
    public static MetricsServer start(String host, int port, PrometheusRegistry registry) throws IOException {
        return start(host, port, registry, MAX_EXCHANGES, MAX_WAITING);
    }

    /** {@link #start(String, int, PrometheusRegistry)} with other bounds (tests: reach them with few connections). */
    static MetricsServer start(String host, int port, PrometheusRegistry registry, int running, int waiting) throws IOException {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("port must be in [0, 65535], got " + port);
        }
        InetAddress address = InetAddress.getByName(host);
        String name = "lantern-metrics-" + SERVERS.incrementAndGet();
        HttpServer s = HttpServer.create(new InetSocketAddress(address, port), BACKLOG);
        ExchangeExecutor executor = new ExchangeExecutor(name, running, waiting);
        ScrapeHandler scrape = new ScrapeHandler(registry, name);
        s.setExecutor(executor);
        s.createContext("/metrics", scrape);
        s.createContext("/", MetricsServer::notFound);
        s.start();
        return new MetricsServer(s, executor, scrape, host);
    }

    /** The bound port (the one picked when started on port 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    /** The URL Prometheus scrapes. */
    public String url() {
        String h = host.contains(":") ? "[" + host + "]" : host;
        return "http://" + h + ":" + port() + "/metrics";
    }

    /** Exchanges being answered now (tests: a flood must not run more than the bound). */
    int exchangesRunning() {
        return executor.running();
    }

    /** Exchanges waiting for a thread now. */
    int exchangesWaiting() {
        return executor.waiting();
    }

    @Override
    public void close() {
        server.stop(0); // closes every connection: an exchange blocked reading one ends
        try {
            if (!executor.shutdown(5)) {
                throw new IllegalStateException("the metrics server's exchanges did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            scrape.close();
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
