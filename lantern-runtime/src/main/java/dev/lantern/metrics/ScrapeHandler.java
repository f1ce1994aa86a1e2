package dev.lantern.metrics;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.prometheus.metrics.exporter.common.PrometheusHttpExchange;
import io.prometheus.metrics.exporter.common.PrometheusHttpRequest;
import io.prometheus.metrics.exporter.common.PrometheusHttpResponse;
import io.prometheus.metrics.exporter.common.PrometheusScrapeHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * {@code /metrics}: the exporter's {@link PrometheusScrapeHandler}, rendered on one platform thread of
 * this server's own and sent by the exchange's virtual thread.
 *
 * <p>Why not the exporter's {@code MetricsHandler} on the exchange's virtual thread: the text writer wraps
 * the response in a {@link java.io.BufferedWriter}, which on a virtual thread (JDK 25) starts at 512 chars
 * and grows by exactly what each write needs, copying the whole buffer every time, up to 8,192. A scrape of
 * {@link LanternMetrics} allocated 4.6 MB and took 3.5 ms of CPU that way (JFR: 90 % of the server's
 * allocation under {@code bench overhead --abuse} was {@code BufferedWriter.growIfNeeded}); on a
 * platform thread the buffer starts at 8,192 and never grows. The rendering goes to a byte array
 * (the scrape handler buffers it anyway), so the platform thread never touches a socket: a client that
 * does not read its answer holds its own virtual thread, not the renderer.
 */
final class ScrapeHandler implements HttpHandler, AutoCloseable {
    private final PrometheusScrapeHandler scrape;
    private final ExecutorService renderer;

    ScrapeHandler(PrometheusRegistry registry, String name) {
        this.scrape = new PrometheusScrapeHandler(registry);
        this.renderer = Executors.newSingleThreadExecutor(Thread.ofPlatform().daemon().name(name + "-render").factory());
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            Recorded r = new Recorded(exchange);
            Future<?> done = renderer.submit(() -> {
                try {
                    scrape.handleRequest(r);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
            try {
                done.get();
            } catch (ExecutionException e) {
                r.fail(e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                done.cancel(true);
                throw new IOException("the metrics server is closing", e);
            }
            byte[] body = r.body == null ? new byte[0] : r.body.toByteArray();
            boolean head = exchange.getRequestMethod().equals("HEAD");
            exchange.sendResponseHeaders(r.status, head || body.length == 0 ? -1 : body.length);
            if (!head && body.length > 0) {
                exchange.getResponseBody().write(body);
            }
        }
    }

    /** Stops the render thread (after the server: no exchange is waiting for it then). */
    @Override
    public void close() {
        renderer.shutdownNow();
        try {
            renderer.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The request as the scrape handler reads it, and its answer kept in memory (headers go to the exchange). */
    private static final class Recorded implements PrometheusHttpExchange, PrometheusHttpRequest, PrometheusHttpResponse {
        private final HttpExchange exchange;
        int status = 500;
        ByteArrayOutputStream body;

        Recorded(HttpExchange exchange) {
            this.exchange = exchange;
        }

        void fail(Throwable cause) {
            status = 500;
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            body = new ByteArrayOutputStream();
            body.writeBytes(("error scraping the metrics: " + cause + "\n").getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public PrometheusHttpRequest getRequest() {
            return this;
        }

        @Override
        public PrometheusHttpResponse getResponse() {
            return this;
        }

        @Override
        public void handleException(IOException e) throws IOException {
            throw e;
        }

        @Override
        public void handleException(RuntimeException e) {
            throw e;
        }

        @Override
        public void close() {
            // the exchange is closed by handle(), after the answer is sent
        }

        @Override
        public String getQueryString() {
            return exchange.getRequestURI().getRawQuery();
        }

        @Override
        public Enumeration<String> getHeaders(String name) {
            List<String> v = exchange.getRequestHeaders().get(name);
            return v == null ? Collections.emptyEnumeration() : Collections.enumeration(v);
        }

        @Override
        public String getMethod() {
            return exchange.getRequestMethod();
        }

        @Override
        public String getRequestPath() {
            return exchange.getRequestURI().getPath();
        }

        @Override
        public void setHeader(String name, String value) {
            exchange.getResponseHeaders().set(name, value);
        }

        @Override
        public OutputStream sendHeadersAndGetBody(int statusCode, int contentLength) {
            status = statusCode;
            body = new ByteArrayOutputStream(Math.max(contentLength, 256));
            return body;
        }
    }
}
