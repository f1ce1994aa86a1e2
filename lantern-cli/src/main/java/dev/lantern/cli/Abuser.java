package dev.lantern.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code bench overhead --abuse}'s {@link MetricsAbuse}, begun before and ended after each "on"
 * segment: by default in a child JVM started once for the run (as an attacker is another process), or,
 * with {@code --abuse-in-process}, on threads of the step's own JVM as before. In the step's JVM the
 * client's threads, its allocation and the collections it causes count against the step; in a child
 * they count only where they really compete (the cores and the kernel's loopback). The child runs the
 * serial collector in a 256 MiB heap, so its own GC threads stay few. Its counts add up over the run.
 */
final class Abuser implements AutoCloseable {
    final AtomicLong requests = new AtomicLong();
    final AtomicLong failures = new AtomicLong();
    final AtomicLong clientCpuNanos = new AtomicLong();
    private final int port;
    private final Process child;
    private final BufferedReader fromChild;
    private final PrintStream toChild;
    private MetricsAbuse inProcess;

    private Abuser(int port, Process child) {
        this.port = port;
        this.child = child;
        this.fromChild = child == null ? null : new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        this.toChild = child == null ? null : new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
    }

    /** An abuser of the server on {@code port} of loopback; {@code separateProcess} starts its JVM now. */
    static Abuser of(int port, boolean separateProcess) throws IOException {
        if (!separateProcess) {
            return new Abuser(port, null);
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(java, "-XX:+UseSerialGC", "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                MetricsAbuse.class.getName(), String.valueOf(port))).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        return new Abuser(port, p);
    }

    /** Whether the abuse runs in a child JVM. */
    boolean separateProcess() {
        return child != null;
    }

    /** Opens the connections and starts the client; returns once they are open. */
    void begin() throws IOException {
        if (child == null) {
            inProcess = MetricsAbuse.start(port, requests, failures, clientCpuNanos);
            return;
        }
        String answer = ask("start");
        if (!answer.equals("started")) {
            throw new IOException("the abuse process: " + answer);
        }
    }

    /** Stops the client and closes its connections; returns once they are closed. */
    void end() throws IOException {
        if (child == null) {
            inProcess.close();
            inProcess = null;
            return;
        }
        String[] w = ask("stop").split(" ");
        if (w.length != 4 || !w[0].equals("stopped")) {
            throw new IOException("the abuse process: " + String.join(" ", w));
        }
        requests.addAndGet(Long.parseLong(w[1]));
        failures.addAndGet(Long.parseLong(w[2]));
        clientCpuNanos.addAndGet(Long.parseLong(w[3]));
    }

    private String ask(String command) throws IOException {
        toChild.println(command);
        String answer = fromChild.readLine();
        if (answer == null) {
            throw new IOException("the abuse process ended" + (child.isAlive() ? " its output" : " (exit status " + child.exitValue() + ")"));
        }
        return answer;
    }

    @Override
    public void close() {
        if (inProcess != null) {
            inProcess.close();
        }
        if (child != null) {
            toChild.close(); // end of input: the child closes what it holds and exits
            try {
                if (!child.waitFor(20, TimeUnit.SECONDS)) {
                    child.destroyForcibly();
                }
            } catch (InterruptedException e) {
                child.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
