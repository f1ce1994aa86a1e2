package dev.lantern.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The abuse of the metrics endpoint on loopback, held for as long as this object is open
 * ({@code bench overhead --abuse}, {@code MetricsServerAbuseTest} tests the server's side alone):
 * {@link #IDLE} connections that never send a byte and {@link #SLOW} requests stopped halfway through
 * their headers, opened at the start, and one client thread that sends, back to back with
 * {@link #PAUSE_MS} ms between, a request for an unknown path and a request whose header is
 * {@link #BIG_HEADER} bytes (over the server's 8 KiB limit). The client thread's CPU time goes to the
 * counter given to {@link #start} (the connections are opened before the caller times anything, and
 * closed after), so that it can be told from the server's.
 *
 * <p>{@code bench overhead --abuse} runs it in a process of its own ({@link #main}, driven by
 * {@link AbuseProcess}), as an attacker would be: in the step's JVM its threads, allocation and
 * garbage collections were counted against the step.
 */
final class MetricsAbuse implements AutoCloseable {
    static final int IDLE = 1000;
    static final int SLOW = 50;
    static final int BIG_HEADER = 1 << 20;
    static final int PAUSE_MS = 10;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final byte[] BIG = ("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(BIG_HEADER) + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);

    private final List<Socket> held = new ArrayList<>();
    private final Thread client;
    private final AtomicLong requests;
    private final AtomicLong failures;
    private final AtomicLong clientCpu;
    private volatile boolean stop;

    private MetricsAbuse(int port, AtomicLong requests, AtomicLong failures, AtomicLong clientCpu) throws IOException {
        this.requests = requests;
        this.failures = failures;
        this.clientCpu = clientCpu;
        InetAddress lo = InetAddress.getLoopbackAddress();
        try {
            for (int i = 0; i < IDLE; i++) {
                held.add(new Socket(lo, port));
            }
            for (int i = 0; i < SLOW; i++) {
                Socket slow = new Socket(lo, port);
                held.add(slow);
                OutputStream o = slow.getOutputStream();
                o.write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
                o.flush();
            }
        } catch (IOException e) {
            closeHeld();
            throw e;
        }
        this.client = Thread.ofPlatform().daemon().name("metrics-abuse").start(() -> churn(lo, port));
    }

    /**
     * Opens the connections and starts the client against {@code port} on loopback; {@code requests} and
     * {@code failures} count the churn's requests (a failure: one that got neither an answer nor a close),
     * {@code clientCpu} gets this abuse's CPU nanoseconds when it is closed.
     */
    static MetricsAbuse start(int port, AtomicLong requests, AtomicLong failures, AtomicLong clientCpu) throws IOException {
        return new MetricsAbuse(port, requests, failures, clientCpu);
    }

    private void churn(InetAddress lo, int port) {
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        byte[] unknown = "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        try {
            for (long i = 0; !stop; i++) {
                exchange(lo, port, i % 2 == 0 ? unknown : BIG);
                requests.incrementAndGet();
                LockSupport.parkNanos(PAUSE_MS * 1_000_000L);
            }
        } finally {
            clientCpu.addAndGet(THREADS.getCurrentThreadCpuTime() - cpu0);
        }
    }

    /** Sends {@code request} and reads until the server closes; a reset counts as the server's answer too. */
    private void exchange(InetAddress lo, int port, byte[] request) {
        try (Socket k = new Socket(lo, port)) {
            k.setSoTimeout(5000);
            try {
                k.getOutputStream().write(request);
                k.getOutputStream().flush();
                InputStream in = k.getInputStream();
                in.transferTo(OutputStream.nullOutputStream());
            } catch (java.net.SocketTimeoutException e) {
                failures.incrementAndGet(); // neither answered nor closed within 5 s
            } catch (IOException reset) {
                // an oversized header is refused by closing the connection: an answer
            }
        } catch (IOException e) {
            failures.incrementAndGet(); // could not connect
        }
    }

    /**
     * The abuser as a process: {@code java -cp ... dev.lantern.cli.MetricsAbuse PORT}. Each line
     * {@code start} on standard input opens the connections and starts the client, answering
     * {@code started} (or {@code failed REASON}); each {@code stop} closes them and answers
     * {@code stopped REQUESTS FAILURES CLIENT_CPU_NANOS}; the end of input ends the process.
     */
    static void main(String[] args) throws IOException {
        int port = Integer.parseInt(args[0]);
        java.io.BufferedReader in = new java.io.BufferedReader(new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        java.io.PrintStream out = new java.io.PrintStream(System.out, true, StandardCharsets.UTF_8);
        MetricsAbuse running = null;
        AtomicLong requests = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicLong cpu = new AtomicLong();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.equals("start") && running == null) {
                try {
                    running = start(port, requests, failures, cpu);
                    out.println("started");
                } catch (IOException e) {
                    out.println("failed " + ExitStatus.oneLine(String.valueOf(e)));
                }
            } else if (line.equals("stop") && running != null) {
                running.close();
                running = null;
                out.println("stopped " + requests.getAndSet(0) + " " + failures.getAndSet(0) + " " + cpu.getAndSet(0));
            } else {
                out.println("failed unexpected '" + line + "'");
            }
        }
        if (running != null) {
            running.close();
        }
    }

    @Override
    public void close() {
        stop = true;
        try {
            client.join(15_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeHeld();
    }

    private void closeHeld() {
        for (Socket k : held) {
            try {
                k.close();
            } catch (IOException ignored) {
                // closing a loopback socket: nothing to do about a failure
            }
        }
        held.clear();
    }
}
