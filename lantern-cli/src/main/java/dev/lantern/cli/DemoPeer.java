package dev.lantern.cli;

import dev.lantern.bench.cpu.CpuMachine;
import dev.lantern.bench.cpu.OrtBeside;
import dev.lantern.cpu.CpuConfig;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.Feeds;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The CPU demo's line beside Lantern's time (issue 15): ONNX Runtime timed now on the block exported
 * to {@code --onnx FILE} (scripts/bench/export_block.py), else the newest ratio {@code lantern bench
 * cpu} stored for the config (from a machine of this one's vector width first, and saying which), else
 * how to get one. Only an f32 run is compared: the peer runs f32.
 */
final class DemoPeer {
    private DemoPeer() {}

    /** Adds the ORT fields to {@code r} and returns the table's line. */
    static String figure(String onnx, Model model, BlockConfig cfg, CompileOptions options, long seed, int runs, double lanternMs,
                         Map<String, Object> r) {
        if (options.amp() != CompileOptions.Amp.NONE) {
            return "onnxruntime  (compared in f32 only: run without --amp)";
        }
        int threads = CpuConfig.THREADS;
        if (onnx != null) {
            Path file = Path.of(onnx);
            if (!Files.isRegularFile(file)) {
                throw new UsageException("demo: --onnx " + file + " is not a file");
            }
            OrtBeside.Measured o = OrtBeside.measure(file, Feeds.inputs(model.graph(), seed), threads, dev.lantern.cli.DemoMetrics.DEFAULT_WARMUP, runs);
            r.put("ort_ms", DemoCommand.round(o.ortMs(), 4));
            r.put("lantern_speed_vs_ort", DemoCommand.round(o.ortMs() / lanternMs, 3));
            r.put("ort_source", "measured now, ONNX Runtime " + o.version() + ", " + threads + " threads");
            return String.format(Locale.ROOT, "onnxruntime  %.3f ms median per forward (ONNX Runtime %s, %d threads, same input): Lantern at %.2fx ORT's speed",
                    o.ortMs(), o.version(), threads, o.ortMs() / lanternMs);
        }
        int bits = CpuMachine.vectorBits();
        List<Path> roots = roots();
        Optional<OrtBeside.Stored> s = OrtBeside.stored(roots, cfg.name(), threads, bits, history(roots));
        if (s.isPresent()) {
            OrtBeside.Stored st = s.get();
            // the stored run's machine, so that a figure from another kind of CPU is read as such
            String machine = st.vectorBits() == 0 ? "a machine of unrecorded vector width"
                    : (st.vectorBits() == bits ? "a machine with this one's " : "another machine, with ") + st.vectorBits() + "-bit vectors";
            r.put("lantern_speed_vs_ort", DemoCommand.round(st.ratio(), 3));
            r.put("ort_source", "stored: " + st.file().getFileName() + ", " + st.threads() + " threads, " + machine);
            return String.format(Locale.ROOT, "onnxruntime  stored figure: Lantern at %.2fx ORT's speed on %s, %d threads, on %s (%.3f vs %.3f ms, %s); "
                    + "--onnx FILE times it here", st.ratio(), cfg.name(), st.threads(), machine, st.lanternMs(), st.ortMs(),
                    st.file().getFileName());
        }
        return "onnxruntime  no figure for " + cfg.name() + ": export it (scripts/bench/export_block.py " + cfg.name()
                + " FILE) and pass --onnx FILE, or run lantern bench cpu --config " + cfg.name() + " --onnx FILE";
    }

    /**
     * The checkout's commits, newest first (at most 2,000, from {@code git log}), so that a day's stored
     * runs are ordered by history, not by the modification times a fresh clone gives them; empty where
     * git or a repository is missing.
     */
    static List<String> history(List<Path> roots) {
        for (Path root : roots) {
            if (!Files.isDirectory(root.resolve(".git")) && !Files.isRegularFile(root.resolve(".git"))) {
                continue;
            }
            try {
                Process p = new ProcessBuilder("git", "-C", root.toAbsolutePath().toString(), "log", "--format=%H", "-n", "2000")
                        .redirectErrorStream(false).redirectError(ProcessBuilder.Redirect.DISCARD).start();
                List<String> lines;
                try (var in = p.inputReader()) {
                    lines = in.lines().map(String::trim).filter(l -> !l.isEmpty()).toList();
                }
                if (p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS) && p.exitValue() == 0 && !lines.isEmpty()) {
                    return lines;
                }
                p.destroyForcibly();
            } catch (IOException e) {
                // no git on the PATH: the files' own order
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return List.of();
            }
        }
        return List.of();
    }

    /** Where stored results may be: the working directory and the checkout the CLI jar was built in. */
    private static List<Path> roots() {
        List<Path> roots = new ArrayList<>(List.of(Path.of("")));
        try {
            Path jar = Path.of(DemoPeer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path root = jar.getParent() == null ? null : jar.getParent().getParent();
            root = root == null ? null : root.getParent(); // <root>/lantern-cli/target/lantern-cli.jar
            if (root != null) {
                roots.add(root);
            }
        } catch (Exception e) {
            // no code source (an unusual class loader): the working directory alone
        }
        return roots;
    }
}
