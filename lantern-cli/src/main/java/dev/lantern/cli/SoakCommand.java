package dev.lantern.cli;

import dev.lantern.runtime.alloc.SegmentSource;
import dev.lantern.runtime.alloc.SegmentSourceProvider;
import dev.lantern.runtime.soak.Soak;
import dev.lantern.runtime.soak.SoakOptions;
import dev.lantern.runtime.soak.SoakReport;
import java.io.PrintStream;
import java.util.Locale;
import java.util.ServiceLoader;

/**
 * {@code lantern soak}: runs the allocator soak and prints a table or one JSON object.
 *
 * <pre>
 * lantern soak [--seconds N] [--max-ops N] [--device sim|cuda] [--seed S] [--streams N]
 *              [--metrics-port P [--metrics-host H]] [--json]
 * </pre>
 *
 * With {@code --metrics-port}, the allocator's figures (alloc_frag_pct, reserved and allocated
 * bytes, OOMs) are served at /metrics as the soak samples them, the simulator's as well as a GPU's.
 *
 * Exit codes: 0 the gates pass (at least {@link SoakReport#MIN_OPS} operations, no leak, median
 * alloc_frag_pct at most 15), 1 a gate fails, 2 bad arguments or no such device. A progress bar
 * shows on a terminal only.
 */
public final class SoakCommand {
    static final String USAGE = "usage: lantern soak [--seconds N] [--max-ops N] [--device sim|cuda] [--seed S]"
            + " [--streams N] " + MetricsOption.USAGE + " [--json]";

    private SoakCommand() {
    }

    public static int run(String[] args, PrintStream out, PrintStream err) {
        double seconds = 60;
        long maxOps = 0;
        long seed = 1;
        int streams = 4;
        String device = "sim";
        boolean json = false;
        boolean secondsGiven = false;
        String metricsPort = null;
        String metricsHost = null;
        SoakOptions options;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--json" -> json = true;
                    case "--seconds" -> {
                        seconds = Double.parseDouble(value(args, ++i, a));
                        secondsGiven = true;
                        if (!(seconds > 0) || Double.isInfinite(seconds)) {
                            throw new IllegalArgumentException("--seconds must be > 0, got " + args[i]);
                        }
                    }
                    case "--max-ops" -> {
                        maxOps = Long.parseLong(value(args, ++i, a));
                        if (maxOps <= 0) {
                            throw new IllegalArgumentException("--max-ops must be > 0, got " + args[i]);
                        }
                    }
                    case "--metrics-port" -> metricsPort = value(args, ++i, a);
                    case "--metrics-host" -> metricsHost = value(args, ++i, a);
                    case "--seed" -> seed = Long.parseLong(value(args, ++i, a));
                    case "--streams" -> streams = Integer.parseInt(value(args, ++i, a));
                    case "--device" -> {
                        device = value(args, ++i, a);
                        if (!device.equals("sim") && !device.equals("cuda")) {
                            throw new IllegalArgumentException("--device must be sim or cuda, got " + device);
                        }
                    }
                    case "-h", "--help" -> {
                        out.println(USAGE);
                        return 0;
                    }
                    default -> throw new IllegalArgumentException("unknown argument " + a);
                }
            }
            if (maxOps > 0 && !secondsGiven) {
                seconds = 0; // bounded by operations only: the deterministic form
            }
            options = new SoakOptions(seconds, maxOps, seed, streams, device, null, null,
                    SoakOptions.DEFAULT_SIM_CAPACITY, 256, dev.lantern.runtime.alloc.AllocatorConfig.defaults());
        } catch (NumberFormatException e) {
            err.println("lantern soak: not a number: " + e.getMessage() + "; " + USAGE);
            return 2;
        } catch (IllegalArgumentException e) {
            err.println("lantern soak: " + e.getMessage() + "; " + USAGE);
            return 2;
        }
        MetricsOption.Spec metricsSpec;
        try {
            metricsSpec = MetricsOption.parse("soak", metricsPort, metricsHost);
        } catch (UsageException e) {
            err.println("lantern " + e.getMessage() + "; " + USAGE);
            return 2;
        }
        // outside the argument checks: an IllegalArgumentException from the soak itself is a bug, not usage
        return execute(options, metricsSpec, json, out, err);
    }

    private static int execute(SoakOptions options, MetricsOption.Spec metricsSpec, boolean json, PrintStream out, PrintStream err) {
        SegmentSourceProvider provider = null;
        if (!options.device().equals("sim")) {
            provider = find(options.device());
            if (provider == null) {
                err.println("lantern soak: no CUDA device: no SegmentSourceProvider for \"" + options.device()
                        + "\" on the class path (is lantern-cuda present?)");
                return 2;
            }
            SegmentSource source;
            try {
                source = provider.open();
            } catch (RuntimeException e) {
                err.println("lantern soak: no CUDA device: " + firstLine(e.getMessage()));
                return 2;
            }
            options = options.withSource(options.device(), source, provider.streamSync());
        }
        SoakReport report;
        SoakTimeline timeline = new SoakTimeline();
        boolean byTime = options.seconds() > 0;
        MetricsOption.Served metrics;
        try {
            metrics = MetricsOption.start("soak", metricsSpec, err);
        } catch (UsageException e) {
            closeSource(options, err);
            err.println("lantern " + e.getMessage());
            return 2;
        }
        try (metrics; ProgressBar bar = ProgressBar.forTerminal("soak", byTime ? (long) Math.ceil(options.seconds())
                : options.maxOps(), byTime ? "s" : "ops")) {
            report = Soak.run(options, (ops, nanos) -> bar.update(byTime ? nanos / 1_000_000_000L : ops), stats -> {
                metrics.metrics.allocator(stats);
                timeline.add(stats);
            });
            bar.update(byTime ? (long) Math.ceil(options.seconds()) : options.maxOps());
        } finally {
            closeSource(options, err);
        }
        out.print(json ? timeline.addTo(report.toJson()) + System.lineSeparator() : report.toTable());
        out.flush();
        if (!report.ranEnough()) {
            err.printf(Locale.ROOT, "lantern soak: only %d operations and %d samples in %.3g s: too few to judge "
                    + "(the gates need at least %d operations); raise --seconds or --max-ops%n",
                    report.ops(), report.samples(), report.seconds(), SoakReport.MIN_OPS);
        }
        return report.passes() ? 0 : 1;
    }

    private static void closeSource(SoakOptions options, PrintStream err) {
        if (options.source() instanceof AutoCloseable c) {
            try {
                c.close();
            } catch (Exception e) {
                err.println("lantern soak: closing " + options.device() + ": " + firstLine(e.getMessage()));
            }
        }
    }

    private static SegmentSourceProvider find(String device) {
        for (SegmentSourceProvider p : ServiceLoader.load(SegmentSourceProvider.class)) {
            if (p.device().equals(device)) {
                return p;
            }
        }
        return null;
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[i];
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "unknown error";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
