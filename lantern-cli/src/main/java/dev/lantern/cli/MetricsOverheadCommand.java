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
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * {@code lantern bench overhead --config NAME|--shape ... [--device cpu|cuda] [--pairs N | --segments N]
 * [--segment-s S] [--settle-s S] [--scrape-ms M] [--seed S] [--abuse [--abuse-in-process]] [--json]}: what serving {@code /metrics} costs a running
 * model (issue 18's figure: decoder-small's step time with the exporter on and scraped every second at
 * most 1 % slower than with it off, same run, medians).
 *
 * <p>One process, one compiled session, every step recorded into {@link LanternMetrics} either way
 * (the commands always record). After a warm-up, {@code --pairs} pairs of short segments of
 * {@code --segment-s} seconds, one with the exporter off and one on, the order flipped every pair
 * (ABBA, so a drift of the machine falls on both sides); in an "on" segment the {@link MetricsServer}
 * serves the registry and a scraper thread GETs {@code /metrics} on a clock of period
 * {@code --scrape-ms} that runs through the whole run (a segment shorter than the period sees a
 * scrape in the share of segments a steady scrape rate gives, not one at every start). The
 * figure is {@link PairedOverhead}'s: the median over ABBA blocks of the pairs' ratios of segment
 * medians, with a bootstrap 95 % interval, and whether that interval settles the 1 % line.
 * {@code --segments N} (the older flag) is {@code --pairs N/2}. Each segment starts with {@code --settle-s}
 * seconds of untimed steps (0.25 by default), so that what starting or stopping a side sets off (a server
 * starting, 1,050 connections opening or closing) is not timed in the segment that follows it.
 *
 * <p>{@code --abuse}: both sides serve and are scraped, and the "on" side is also under
 * {@link MetricsAbuse} (idle and half-sent connections, unknown paths, oversized headers): the figure
 * is then what the abuse costs the step. The abuse runs in a process of its own ({@link Abuser}), or in
 * this one with {@code --abuse-in-process}. Each side's CPU seconds per second (the process, the step's
 * thread, and the abuse client's thread), heap allocated per second and garbage collections are
 * reported, since on a small machine the client's own CPU is taken from the step and a collection
 * stops it. {@code --threads N} sets the CPU backend's threads (leaving cores to the server and the client).
 */
final class MetricsOverheadCommand {
    private MetricsOverheadCommand() {}

    /** The line: at most 1 % slower with the exporter on. */
    static final double LIMIT_PCT = 1.0;

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("bench overhead", argv, Set.of("json", "abuse", "abuse-in-process"), Set.of("config", "shape", "device", "pairs",
                "segments", "segment-s", "settle-s", "scrape-ms", "seed", "threads"));
        if (!a.positional().isEmpty()) {
            throw new UsageException("bench overhead: unexpected argument '" + a.positional().getFirst() + "'");
        }
        BlockConfig cfg = BlockOption.of("bench overhead", a.get("config", null), a.get("shape", null));
        cfg = cfg == null ? BlockConfig.named("decoder-small") : cfg;
        String device = a.get("device", "cpu");
        if (!device.equals("cpu") && !device.equals("cuda")) {
            throw new UsageException("bench overhead: --device must be cpu or cuda, found '" + device + "'");
        }
        if (a.get("pairs", null) != null && a.get("segments", null) != null) {
            throw new UsageException("bench overhead: give --pairs or --segments (two segments a pair), not both");
        }
        int pairs = a.get("segments", null) != null ? a.getInt("bench overhead", "segments", 40, 2, 10_000) / 2
                : a.getInt("bench overhead", "pairs", 20, 1, 5_000);
        double segmentS = a.getDouble("bench overhead", "segment-s", 0.5, 0.05, 3600);
        double settleS = a.getDouble("bench overhead", "settle-s", 0.25, 0, 60);
        int scrapeMs = a.getInt("bench overhead", "scrape-ms", 1000, 1, 3_600_000);
        long seed = a.getLong("bench overhead", "seed", 7);
        boolean abuse = a.flag("abuse");
        if (a.flag("abuse-in-process") && !abuse) {
            throw new UsageException("bench overhead: --abuse-in-process goes with --abuse");
        }
        int threads = ThreadsOption.apply("bench overhead", a);

        Program program = Lantern.compile(TransformerBlock.build(cfg, DType.F32).graph(),
                CompileOptions.defaults().withTarget(device));
        Map<String, Tensor> inputs = program.randomInputs(seed + 1);
        long tokens = (long) cfg.batch() * cfg.seq();
        LanternMetrics metrics = new LanternMetrics(new PrometheusRegistry());
        List<Double> off = new ArrayList<>();
        List<Double> on = new ArrayList<>();
        double[] offSegments = new double[pairs];
        double[] onSegments = new double[pairs];
        AtomicInteger scrapes = new AtomicInteger();
        AtomicInteger failedScrapes = new AtomicInteger();
        Abuser abuser = null;
        // on the CPU, each step's thread CPU time too: blind to the threads that preempt the step (with --threads 1 the
        // whole step runs on this thread), so that a slowdown of the wall time can be told from one of the step itself
        boolean perStepCpu = device.equals("cpu");
        SegmentCpu offCpu = new SegmentCpu(perStepCpu);
        SegmentCpu onCpu = new SegmentCpu(perStepCpu);
        try (Session s = program.load(Device.parse(device), Weights.random(seed), RunMode.COMPILED)) {
            long warmEnd = System.nanoTime() + (long) (Math.max(segmentS, WARM_S) * 1e9);
            while (System.nanoTime() < warmEnd) { // JIT and caches warm before either side is timed
                s.run(inputs);
            }
            long origin = System.nanoTime(); // the scrape clock's zero
            if (abuse) {
                // both sides served and scraped; the "on" side also under MetricsAbuse
                try (Scraper scraper = Scraper.start(metrics, origin, scrapeMs, scrapes, failedScrapes);
                        Abuser ab = Abuser.of(scraper.port(), !a.flag("abuse-in-process"))) {
                    abuser = ab;
                    for (int p = 0; p < pairs; p++) {
                        for (int half = 0; half < 2; half++) {
                            if ((half == 1) == (p % 2 == 0)) {
                                ab.begin();
                                onSegments[p] = segment(s, inputs, metrics, tokens, segmentS, settleS, on, onCpu);
                                ab.end();
                            } else {
                                offSegments[p] = segment(s, inputs, metrics, tokens, segmentS, settleS, off, offCpu);
                            }
                        }
                    }
                } catch (IOException e) {
                    throw new UsageException("bench overhead: --abuse could not start or open its connections on loopback: "
                            + ExitStatus.oneLine(String.valueOf(e.getMessage())));
                }
            } else {
                for (int p = 0; p < pairs; p++) {
                    for (int half = 0; half < 2; half++) {
                        boolean exporterOn = (half == 1) == (p % 2 == 0); // off,on then on,off then off,on ...
                        if (exporterOn) {
                            try (Scraper scraper = Scraper.start(metrics, origin, scrapeMs, scrapes, failedScrapes)) {
                                onSegments[p] = segment(s, inputs, metrics, tokens, segmentS, settleS, on, onCpu);
                            }
                        } else {
                            offSegments[p] = segment(s, inputs, metrics, tokens, segmentS, settleS, off, offCpu);
                        }
                    }
                }
            }
        }
        double offMs = median(off);
        double onMs = median(on);
        double pooled = 100 * (onMs / offMs - 1);
        PairedOverhead est = PairedOverhead.of(offSegments, onSegments, seed);
        PairedOverhead cpuEst = perStepCpu ? PairedOverhead.of(offCpu.segmentMedians(), onCpu.segmentMedians(), seed) : null;
        String cpuJson = cpuEst == null ? "" : String.format(Locale.ROOT, ", \"step_thread_cpu_off_ms\": %.6f, \"step_thread_cpu_on_ms\": %.6f, "
                + "\"cpu_time_overhead_pct\": %.3f, \"cpu_time_overhead_ci95_pct\": [%.3f, %.3f]",
                DemoMetrics.median(offCpu.segmentMedians()), DemoMetrics.median(onCpu.segmentMedians()), cpuEst.overheadPct(),
                cpuEst.ciLowPct(), cpuEst.ciHighPct());
        // the pairs by order: off-on pairs (the abuse begins between their halves) and on-off pairs (it ends between
        // them); an effect of the order, not of the exporter, shows as two different medians
        double[] pairPcts = est.pairOverheadPct();
        double[] offOn = java.util.stream.IntStream.range(0, pairPcts.length).filter(i -> i % 2 == 0).mapToDouble(i -> pairPcts[i]).toArray();
        double[] onOff = java.util.stream.IntStream.range(0, pairPcts.length).filter(i -> i % 2 == 1).mapToDouble(i -> pairPcts[i]).toArray();
        String heapJson = String.format(Locale.ROOT, ", \"off_on_pairs_median_pct\": %s, \"on_off_pairs_median_pct\": %s",
                num(offOn.length > 0 ? DemoMetrics.median(offOn) : Double.NaN), num(onOff.length > 0 ? DemoMetrics.median(onOff) : Double.NaN))
                + String.format(Locale.ROOT, ", \"cores\": %d, \"vthread_carriers\": %d", Runtime.getRuntime().availableProcessors(),
                        Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors()))
                + String.format(Locale.ROOT, ", \"settle_s\": %.3f, \"off_alloc_mb_per_s\": %.2f, \"on_alloc_mb_per_s\": %.2f, "
                        + "\"off_gcs\": %d, \"on_gcs\": %d, \"off_gc_ms\": %d, \"on_gc_ms\": %d, \"off_step_wait_ms_per_s\": %s, "
                        + "\"on_step_wait_ms_per_s\": %s, \"off_steal_per_s\": %s, \"on_steal_per_s\": %s, %s, %s", settleS,
                offCpu.allocatedMbPerSecond(), onCpu.allocatedMbPerSecond(), offCpu.collections(), onCpu.collections(), offCpu.collectionMillis(),
                onCpu.collectionMillis(), num(offCpu.waitMsPerSecond()), num(onCpu.waitMsPerSecond()), num(offCpu.stealPerSecond()),
                num(onCpu.stealPerSecond()),
                offCpu.placementJson("off"), onCpu.placementJson("on"));
        if (a.flag("json")) {
            StringBuilder pairPct = new StringBuilder("[");
            for (double v : est.pairOverheadPct()) {
                pairPct.append(pairPct.length() > 1 ? ", " : "").append(String.format(Locale.ROOT, "%.3f", v));
            }
            out.printf(Locale.ROOT, "{\"case\": \"%s\", \"device\": \"%s\", \"pairs\": %d, \"segments\": %d, \"segment_s\": %.3f, "
                            + "\"scrape_ms\": %d, \"steps_off\": %d, \"steps_on\": %d, \"off_ms\": %.6f, \"on_ms\": %.6f, "
                            + "\"method\": \"median of ABBA blocks of per-pair segment-median ratios, bootstrap 95%% CI\", "
                            + "\"overhead_pct\": %.3f, \"overhead_ci95_pct\": [%.3f, %.3f], \"abba_blocks\": %d, \"verdict_1pct\": \"%s\", "
                            + "\"pooled_overhead_pct\": %.3f, \"pair_overhead_pct\": %s], \"scrapes\": %d, \"failed_scrapes\": %d, "
                            + "\"threads\": %d, \"abuse\": %b, \"off_process_cpu_per_s\": %.3f, \"on_process_cpu_per_s\": %.3f, "
                            + "\"off_step_thread_cpu_per_s\": %.3f, \"on_step_thread_cpu_per_s\": %.3f%s}%n",
                    cfg.name(), device, pairs, 2 * pairs, segmentS, scrapeMs, off.size(), on.size(), offMs, onMs,
                    est.overheadPct(), est.ciLowPct(), est.ciHighPct(), est.blocks(), est.verdict(LIMIT_PCT), pooled, pairPct,
                    scrapes.get(), failedScrapes.get(), threads, abuse, offCpu.processPerSecond(), onCpu.processPerSecond(),
                    offCpu.stepThreadPerSecond(), onCpu.stepThreadPerSecond(), cpuJson + heapJson
                    + (abuser != null ? String.format(Locale.ROOT, ", \"abuse_process\": %b, \"abuse_requests\": %d, \"abuse_failures\": %d, "
                            + "\"abuse_client_cpu_per_s\": %.3f", abuser.separateProcess(), abuser.requests.get(), abuser.failures.get(),
                            abuser.clientCpuNanos.get() / 1e9 / onCpu.wallSeconds()) : ""));
        } else {
            out.printf(Locale.ROOT, "%s on %s: %+.2f %% slower with the exporter on and scraped every %d ms%s (95 %% CI %+.2f … %+.2f %%: %s)%n"
                            + "  median of %d ABBA blocks of %d off/on pairs of %.2f s segments; step %.4f ms off, %.4f ms on (all steps: %+.2f %%);"
                            + " %d scrapes, %d failed%n", cfg.name(), device, est.overheadPct(), scrapeMs,
                    abuse ? " (both sides; \"on\" also under abuse)" : "", est.ciLowPct(), est.ciHighPct(),
                    switch (est.verdict(LIMIT_PCT)) {
                        case "within" -> "within 1 %";
                        case "above" -> "above 1 %";
                        case "too-few-blocks" -> "no verdict below " + 2 * PairedOverhead.MIN_BLOCKS + " pairs";
                        case "implausible" -> "faster with the exporter on: the machine's noise, not the exporter; rerun on a quiet machine";
                        default -> "1 % not resolved: more --pairs or a quieter machine";
                    },
                    est.blocks(), pairs, segmentS, offMs, onMs, pooled, scrapes.get(), failedScrapes.get());
        }
        if (!a.flag("json")) {
            out.printf(Locale.ROOT, "  CPU seconds per second, off / on: process %.2f / %.2f, the step's thread %.2f / %.2f%s%n",
                    offCpu.processPerSecond(), onCpu.processPerSecond(), offCpu.stepThreadPerSecond(), onCpu.stepThreadPerSecond(),
                    abuser != null ? String.format(Locale.ROOT, "; the abuse client %.2f, %s (%d abusive requests, %d unanswered)",
                            abuser.clientCpuNanos.get() / 1e9 / onCpu.wallSeconds(), abuser.separateProcess() ? "in its own process" : "in this one",
                            abuser.requests.get(), abuser.failures.get()) : "");
            out.printf(Locale.ROOT, "  heap allocated off / on: %.1f / %.1f MB/s; garbage collections %d (%d ms) / %d (%d ms); "
                            + "the step's thread waited for a core %.1f / %.1f ms/s; steal %.3f / %.3f CPU s/s%n",
                    offCpu.allocatedMbPerSecond(), onCpu.allocatedMbPerSecond(), offCpu.collections(), offCpu.collectionMillis(),
                    onCpu.collections(), onCpu.collectionMillis(), offCpu.waitMsPerSecond(), onCpu.waitMsPerSecond(),
                    offCpu.stealPerSecond(), onCpu.stealPerSecond());
            if (cpuEst != null) {
                out.printf(Locale.ROOT, "  the step's own CPU time (preemption left out): %+.2f %% (95 %% CI %+.2f … %+.2f %%), %.4f ms off, %.4f ms on%n",
                        cpuEst.overheadPct(), cpuEst.ciLowPct(), cpuEst.ciHighPct(), DemoMetrics.median(offCpu.segmentMedians()),
                        DemoMetrics.median(onCpu.segmentMedians()));
            }
        }
        if (failedScrapes.get() > 0) {
            err.println("lantern bench overhead: " + failedScrapes.get() + " scrapes failed, the first: " + Scraper.firstFailure.get());
        }
        return failedScrapes.get() == 0 ? ExitStatus.OK : ExitStatus.BAD_INPUT;
    }

    /** {@code v} as a JSON number, or null where it is not one (NaN: not measured here). */
    private static String num(double v) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%.3f", v) : "null";
    }

    /** Seconds of untimed steps at least, before the first segment. */
    private static final double WARM_S = 2.0;

    private static double median(List<Double> v) {
        return v.isEmpty() ? Double.NaN : DemoMetrics.median(v.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /**
     * Steps untimed for {@code settle} seconds, then for {@code seconds} (at least one), each added to
     * {@code into}; returns the segment's median step.
     */
    private static double segment(Session s, Map<String, Tensor> inputs, LanternMetrics metrics, long tokens, double seconds, double settle,
            List<Double> into, SegmentCpu cpu) {
        long settled = System.nanoTime() + (long) (settle * 1e9);
        while (System.nanoTime() < settled) {
            s.run(inputs);
        }
        SegmentCpu.Mark start = SegmentCpu.Mark.now();
        long end = start.wall() + (long) (seconds * 1e9);
        List<Double> mine = new ArrayList<>();
        List<Double> mineCpu = new ArrayList<>();
        do {
            long c0 = cpu.perStep() ? SegmentCpu.threadNanos() : 0;
            long t0 = System.nanoTime();
            s.run(inputs);
            double ms = (System.nanoTime() - t0) / 1e6;
            if (cpu.perStep()) {
                mineCpu.add((SegmentCpu.threadNanos() - c0) / 1e6);
            }
            metrics.recordStep(ms, tokens);
            mine.add(ms);
        } while (System.nanoTime() < end);
        cpu.add(start, SegmentCpu.Mark.now(), median(mineCpu));
        into.addAll(mine);
        return median(mine);
    }

    /**
     * The exporter on loopback and a thread that reads {@code /metrics} at every tick of the run's
     * scrape clock ({@code origin} + k × period) while the segment lasts, as a Prometheus server
     * would. Closing lets the scrape in flight finish before the server stops (an interrupted request
     * would leave the server writing to a closed stream).
     */
    private static final class Scraper implements AutoCloseable {
        /** Why the first failed scrape of the run failed, for the report; null while none has. */
        static final java.util.concurrent.atomic.AtomicReference<String> firstFailure = new java.util.concurrent.atomic.AtomicReference<>();

        private final MetricsServer server;
        private final Thread thread;
        private volatile boolean stop;

        private Scraper(MetricsServer server, long origin, int periodMs, AtomicInteger scrapes, AtomicInteger failed) {
            this.server = server;
            HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            HttpRequest req = HttpRequest.newBuilder(URI.create(server.url())).timeout(Duration.ofSeconds(5)).build();
            long period = periodMs * 1_000_000L;
            this.thread = Thread.ofPlatform().daemon().name("scraper").start(() -> {
                while (!stop) {
                    // the next tick of the run's scrape clock: a steady rate however short the segments
                    long next = origin + ((System.nanoTime() - origin) / period + 1) * period;
                    while (!stop && System.nanoTime() < next) {
                        LockSupport.parkNanos(Math.min(next - System.nanoTime(), 10_000_000L));
                    }
                    if (stop) {
                        return;
                    }
                    try {
                        HttpResponse<InputStream> r = client.send(req, HttpResponse.BodyHandlers.ofInputStream());
                        try (InputStream body = r.body()) {
                            body.transferTo(OutputStream.nullOutputStream());
                        }
                        if (r.statusCode() == 200) {
                            scrapes.incrementAndGet();
                        } else {
                            failed.incrementAndGet();
                            firstFailure.compareAndSet(null, "HTTP " + r.statusCode());
                        }
                    } catch (IOException e) {
                        failed.incrementAndGet();
                        firstFailure.compareAndSet(null, ExitStatus.oneLine(String.valueOf(e)));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }

        int port() {
            return server.port();
        }

        static Scraper start(LanternMetrics metrics, long origin, int periodMs, AtomicInteger scrapes, AtomicInteger failed) {
            MetricsServer server;
            try {
                server = MetricsServer.start(MetricsServer.DEFAULT_HOST, 0, metrics.registry());
            } catch (IOException e) {
                throw new UsageException("bench overhead: cannot serve metrics on loopback: " + ExitStatus.oneLine(String.valueOf(e.getMessage())));
            }
            return new Scraper(server, origin, periodMs, scrapes, failed);
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
