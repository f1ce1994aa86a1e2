package dev.lantern.cli;

import dev.lantern.ir.LanternException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * What the performance gate asks of the checkout's git history: when a results file was committed
 * (to order files of one day), and whether results measured at a commit hold the newest commit that
 * touched GPU code ({@link #GPU_CODE}). A checkout without git history (a source archive, a shallow
 * clone missing the commit) is stale by definition: the gate cannot tell, so it fails and says so.
 */
final class GitHistory implements GpuResultsGate.Freshness, GpuResultsGate.Order {
    /** The paths whose changes make stored GPU results stale: the CUDA backend's main code. */
    static final List<String> GPU_CODE = List.of("lantern-cuda/src/main");

    private final Path root;

    GitHistory(Path root) {
        this.root = root;
    }

    @Override
    public long of(Path file) {
        Result r = git("log", "-1", "--format=%ct", "--", root.relativize(file.toAbsolutePath()).toString());
        try {
            return r.ok() && !r.out().isBlank() ? Long.parseLong(r.out().strip()) : Long.MAX_VALUE; // not committed yet: newest
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    @Override
    public Optional<String> stale(String resultsCommit) {
        List<String> args = new ArrayList<>(List.of("log", "-1", "--format=%H", "--"));
        args.addAll(GPU_CODE);
        Result newest = git(args.toArray(String[]::new));
        if (!newest.ok() || newest.out().isBlank()) {
            return Optional.of("no git history here to find the newest GPU code commit (" + newest.err().strip() + ")");
        }
        String gpu = newest.out().strip();
        if (resultsCommit == null || !resultsCommit.matches("[0-9a-f]{7,40}")) {
            return Optional.of("its commit '" + resultsCommit + "' is not a commit id");
        }
        Result holds = git("merge-base", "--is-ancestor", gpu, resultsCommit);
        if (holds.ok()) {
            return Optional.empty();
        }
        return Optional.of("measured at " + resultsCommit + ", which does not hold " + gpu.substring(0, 7)
                + ", the newest commit touching " + String.join(", ", GPU_CODE) + " (run scripts/gpu-bench and scripts/gpu-train again)");
    }

    private record Result(int code, String out, String err) {
        boolean ok() {
            return code == 0;
        }
    }

    private Result git(String... args) {
        List<String> cmd = new ArrayList<>(List.of("git", "-C", root.toString()));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            byte[] err = p.getErrorStream().readAllBytes();
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new LanternException("gate performance: git " + String.join(" ", args) + " did not finish in 60 s");
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
        } catch (IOException e) {
            return new Result(-1, "", "git cannot run: " + TextFiles.reason(e));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LanternException("gate performance: interrupted while git ran", e);
        }
    }
}
