package dev.lantern.bench.cpu;

import dev.lantern.ir.LanternException;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * PyTorch on the CPU beside Lantern, for {@code lantern bench cpu --torch}: one Python process
 * ({@code scripts/bench/torch_peer.py}) built once and kept warm, asked for one forward at a time so
 * that its forwards interleave with Lantern's and ONNX Runtime's in the same rounds. The time is
 * measured in Python around the forward alone: the pipe's round trip is not in it. Python idles on
 * its pipe while the other sides run, but its OpenMP workers spin for milliseconds after a forward;
 * {@link CpuBench} therefore leads each timed forward in with untimed ones of the same side.
 */
public final class TorchPeer implements AutoCloseable {
    private final Process process;
    private final BufferedReader in;
    private final Writer out;
    private final String version;
    private double lastCpuMs = Double.NaN;

    /**
     * Starts {@code python script spec threads} and waits for the model to be built.
     *
     * @param python the interpreter ({@code python3} unless the environment names another)
     * @param spec   a block ({@code B,S,H,N,M,decoder|encoder}) or {@code gpt2:BxS}
     * @throws LanternException when Python, PyTorch or the script is missing, or the script fails
     */
    public TorchPeer(String python, Path script, String spec, int threads) {
        if (!Files.isRegularFile(script)) {
            throw new LanternException("PyTorch peer: no script at " + script + " (run from the repository root)");
        }
        try {
            process = new ProcessBuilder(List.of(python, script.toString(), spec, String.valueOf(threads)))
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        } catch (IOException e) {
            throw new LanternException("PyTorch peer: cannot start " + python + ": " + e.getMessage()
                    + " (install Python 3 and `pip install torch` for the CPU)");
        }
        in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        out = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        String first = readLine();
        if (first == null || !first.startsWith("ready ")) {
            close();
            throw new LanternException("PyTorch peer: " + script + " did not start (" + (first == null ? "it exited" : first)
                    + "); check that `" + python + " -c 'import torch'` works, or `pip install torch` for the CPU");
        }
        version = first.substring("ready ".length()).strip();
    }

    /** PyTorch's version, as {@code torch.__version__} gives it. */
    public String version() {
        return version;
    }

    /** One forward in the peer: its wall milliseconds as Python measured them. */
    public double run() {
        try {
            out.write("run\n");
            out.flush();
        } catch (IOException e) {
            throw new LanternException("PyTorch peer: it stopped answering: " + e.getMessage());
        }
        String line = readLine();
        if (line == null) {
            throw new LanternException("PyTorch peer: it exited during a forward (exit " + exitCode() + ")");
        }
        String[] f = line.strip().split(" ");
        try {
            lastCpuMs = Double.parseDouble(f[1]);
            return Double.parseDouble(f[0]);
        } catch (RuntimeException e) {
            throw new LanternException("PyTorch peer: unexpected answer '" + line + "'");
        }
    }

    /** The thread CPU milliseconds of the last {@link #run}: the whole forward at one thread. */
    public double lastCpuMs() {
        return lastCpuMs;
    }

    private String readLine() {
        try {
            return in.readLine();
        } catch (IOException e) {
            return null;
        }
    }

    private String exitCode() {
        try {
            return process.waitFor(1, TimeUnit.SECONDS) ? String.valueOf(process.exitValue()) : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    @Override
    public void close() {
        try {
            out.write("quit\n");
            out.flush();
        } catch (IOException ignored) {
            // already gone: nothing to ask
        }
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
