package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.metrics.LanternMetrics;
import dev.lantern.metrics.MetricsServer;
import dev.lantern.tensor.Tensor;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code lantern bench overhead --config NAME|--shape ... [--device cpu|cuda] [--segments N]
 * [--segment-s S] [--scrape-ms M] [--json]}: what serving {@code /metrics} costs a running model
 * (issue 18's figure: decoder-small's step time with the exporter on and scraped every second at most
 * 1 % slower than with it off, same run, medians).
 *
 * <p>One process, one compiled session, every step recorded into {@link LanternMetrics} either way
 * (the commands always record). Segments of {@code --segment-s} seconds alternate between the
 * exporter off and on (the order swapped every pair so that neither always runs second); in an "on"
 * segment the {@link MetricsServer} serves the registry and a scraper thread GETs {@code /metrics}
 * every {@code --scrape-ms}, as Prometheus would. The figure is the median step time of all "on"
 * steps over that of all "off" steps.
 */
final class MetricsOverheadCommand {
    private MetricsOverheadCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("bench overhead", argv, Set.of("json"), Set.of("config", "shape", "device", "segments", "segment-s", "scrape-ms", "seed"));
        if (!a.positional().isEmpty()) {
            throw new UsageException("bench overhead: unexpected argument '" + a.positional().getFirst() + "'");
        }
        BlockConfig cfg = BlockOption.of("bench overhead", a.get("config", null), a.get("shape", null));
        cfg = cfg == null ? BlockConfig.named("decoder-small") : cfg;
        String device = a.get("device", "cpu");
        if (!device.equals("cpu") && !device.equals("cuda")) {
            throw new UsageException("bench overhead: --device must be cpu or cuda, found '" + device + "'");
        }
        int segments = a.getInt("bench overhead", "segments", 10, 2, 10_000);
        double segmentS = a.getDouble("bench overhead", "segment-s", 3.0, 0.05, 3600);
        int scrapeMs = a.getInt("bench overhead", "scrape-ms", 1000, 1, 3_600_000);
        long seed = a.getLong("bench overhead", "seed", 7);

        Program program = Lantern.compile(TransformerBlock.build(cfg, DType.F32).graph(),
                CompileOptions.defaults().withTarget(device));
        Map<String, Tensor> inputs = program.randomInputs(seed + 1);
        long tokens = (long) cfg.batch() * cfg.seq();
        LanternMetrics metrics = new LanternMetrics(new PrometheusRegistry());
        List<Double> off = new ArrayList<>();
        List<Double> on = new ArrayList<>();
        AtomicInteger scrapes = new AtomicInteger();
        AtomicInteger failedScrapes = new AtomicInteger();
        try (Session s = program.load(Device.parse(device), Weights.random(seed), RunMode.COMPILED)) {
            long warmEnd = System.nanoTime() + (long) (segmentS * 1e9);
            while (System.nanoTime() < warmEnd) { // JIT and caches warm before either side is timed
                s.run(inputs);
            }
            for (int i = 0; i < segments; i++) {
                boolean exporterOn = (i % 2 == 0) == ((i / 2) % 2 == 0); // on,off then off,on then on,off ...
                if (exporterOn) {
                    try (Scraper scraper = Scraper.start(metrics, scrapeMs, scrapes, failedScrapes)) {
                        segment(s, inputs, metrics, tokens, segmentS, on);
                    }
                } else {
                    segment(s, inputs, metrics, tokens, segmentS, off);
                }
            }
        }
        double offMs = median(off);
        double onMs = median(on);
        double slower = onMs / offMs - 1;
        if (a.flag("json")) {
            out.printf(Locale.ROOT, "{\"case\": \"%s\", \"device\": \"%s\", \"segments\": %d, \"segment_s\": %.3f, \"scrape_ms\": %d, "
                            + "\"steps_off\": %d, \"steps_on\": %d, \"off_ms\": %.6f, \"on_ms\": %.6f, \"overhead_pct\": %.3f, "
                            + "\"scrapes\": %d, \"failed_scrapes\": %d}%n", cfg.name(), device, segments, segmentS, scrapeMs, off.size(), on.size(),
                    offMs, onMs, 100 * slower, scrapes.get(), failedScrapes.get());
        } else {
            out.printf(Locale.ROOT, "%s on %s: step %.4f ms with the exporter off, %.4f ms on and scraped every %d ms (%d scrapes, %d failed):"
                            + " %+.2f %%  (%d and %d steps in %d alternating segments of %.1f s)%n", cfg.name(), device, offMs, onMs, scrapeMs,
                    scrapes.get(), failedScrapes.get(), 100 * slower, off.size(), on.size(), segments, segmentS);
        }
        return failedScrapes.get() == 0 ? ExitStatus.OK : ExitStatus.BAD_INPUT;
    }

    private static double median(List<Double> v) {
        return v.isEmpty() ? Double.NaN : DemoMetrics.median(v.stream().mapToDouble(Double::doubleValue).toArray());
    }

    private static void segment(Session s, Map<String, Tensor> inputs, LanternMetrics metrics, long tokens, double seconds, List<Double> into) {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        while (System.nanoTime() < end) {
            long t0 = System.nanoTime();
            s.run(inputs);
            double ms = (System.nanoTime() - t0) / 1e6;
            metrics.recordStep(ms, tokens);
            into.add(ms);
        }
    }

    /**
     * The exporter on loopback and a thread that reads {@code /metrics} every period, as a Prometheus
     * server would. Closing lets the scrape in flight finish before the server stops (an interrupted
     * request would leave the server writing to a closed stream).
     */
    private static final class Scraper implements AutoCloseable {
        private final MetricsServer server;
        private final Thread thread;
        private volatile boolean stop;

        private Scraper(MetricsServer server, LanternMetrics metrics, int periodMs, AtomicInteger scrapes, AtomicInteger failed) {
            this.server = server;
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpRequest req = HttpRequest.newBuilder(URI.create(server.url())).timeout(Duration.ofSeconds(5)).build();
            this.thread = Thread.ofPlatform().daemon().name("scraper").start(() -> {
                while (!stop) {
                    long next = System.nanoTime() + periodMs * 1_000_000L;
                    try {
                        HttpResponse<InputStream> r = client.send(req, HttpResponse.BodyHandlers.ofInputStream());
                        try (InputStream body = r.body()) {
                            body.transferTo(OutputStream.nullOutputStream());
                        }
                        (r.statusCode() == 200 ? scrapes : failed).incrementAndGet();
                    } catch (IOException e) {
                        failed.incrementAndGet();
                    } catch (InterruptedException e) {
                        return;
                    }
                    while (!stop && System.nanoTime() < next) {
                        LockSupport.parkNanos(Math.min(next - System.nanoTime(), 10_000_000L));
                    }
                }
            });
        }

        static Scraper start(LanternMetrics metrics, int periodMs, AtomicInteger scrapes, AtomicInteger failed) {
            MetricsServer server;
            try {
                server = MetricsServer.start(MetricsServer.DEFAULT_HOST, 0, metrics.registry());
            } catch (IOException e) {
                throw new UsageException("bench overhead: cannot serve metrics on loopback: " + ExitStatus.oneLine(String.valueOf(e.getMessage())));
            }
            return new Scraper(server, metrics, periodMs, scrapes, failed);
        }

        @Override
        public void close() {
            stop = true;
            try {
                thread.join(15_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            server.close();
        }
    }
}
