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
 * {@link #BIG_HEADER} bytes (over the JDK server's 380 KiB limit). The client runs in the same
 * process as the step it disturbs, so on a small machine its own CPU time is a share of what the step
 * loses: the client thread's CPU time goes to the counter given to {@link #start} (the connections are
 * opened before the caller times anything, and closed after), so that the two can be told apart.
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
