package dev.lantern.metrics;

import io.prometheus.metrics.model.registry.PrometheusRegistry;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The endpoint under abuse on loopback, all held at once: 1,000 idle connections, 50 requests stopped
 * halfway through their headers, a 4 MiB header, unknown paths, then the 1,000 connections closed at
 * once. Scrapes answer within 5 s throughout (well under one on an idle machine), the platform threads do not grow with the clients,
 * and nothing is left once the clients and the server close. With small bounds, the half requests past
 * what runs and what waits are closed at once, not held. Each phase has a time limit: before the listen backlog was raised from the exporter's 3 and
 * the exchanges moved off two platform threads, the connects took 162 s and the 4 MiB header 61 s.
 * No Prometheus binary needed: it runs in the default build.
 */
class MetricsServerAbuseTest {
    private static final InetAddress LO = InetAddress.getLoopbackAddress();

    @Test
    void scrapesKeepAnsweringUnderIdleSlowAndOversizedConnections() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        m.recordStep(3, 10);
        List<Socket> held = new ArrayList<>();
        int platformBefore = Thread.activeCount();
        long dispatchersBefore = Scrape.serverThreads();
        int port;
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            port = s.port();
            try {
                assertScrapeWithin(s, 30.0, "first (class loading and JIT, on a loaded machine)");
                long t0 = System.nanoTime();
                for (int i = 0; i < 1000; i++) {
                    held.add(new Socket(LO, port)); // connected, never a byte
                }
                assertWithin(t0, 20, "1,000 connects");
                assertScrapeWithin(s, 5.0, "with 1,000 idle connections");

                t0 = System.nanoTime();
                for (int i = 0; i < 50; i++) { // slow: half a request, then silence (each holds an exchange)
                    held.add(halfRequest(port));
                }
                waitForExchanges(s, 50);
                assertWithin(t0, 10, "50 half requests");
                assertScrapeWithin(s, 5.0, "with 50 half requests held");

                t0 = System.nanoTime();
                try (Socket big = new Socket(LO, port)) {
                    OutputStream o = big.getOutputStream();
                    o.write(("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(4 << 20) + "\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    o.flush();
                    String status = new String(big.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
                    assertTrue(!status.contains(" 200"), "a 4 MiB header is not served: " + status);
                } catch (IOException closed) {
                    // the server closing the connection on an oversized header (380 KiB is the JDK's limit) is an answer too
                }
                assertWithin(t0, 10, "the 4 MiB header");

                for (int i = 0; i < 20; i++) {
                    assertEquals(404, Scrape.get("http://127.0.0.1:" + port + "/x" + i).statusCode());
                }
                assertScrapeWithin(s, 5.0, "after the oversized header and unknown paths");

                assertTrue(s.exchangesRunning() <= MetricsServer.MAX_EXCHANGES, "running: " + s.exchangesRunning());
                assertTrue(Thread.activeCount() < platformBefore + 10,
                        "platform threads grew with the connections: " + platformBefore + " -> " + Thread.activeCount());

                // the 1,000 idle connections closed at once: each is handed to the executor (end of stream), a burst of
                // exchanges; scrapes during it wait their turn in the queue, none is refused
                t0 = System.nanoTime();
                List<Socket> idle = held.subList(0, 1000);
                Thread closer = Thread.ofPlatform().start(() -> {
                    for (Socket k : idle) {
                        try {
                            k.close();
                        } catch (IOException ignored) {
                            // closing a loopback socket
                        }
                    }
                });
                while (closer.isAlive()) {
                    assertScrapeWithin(s, 5.0, "while 1,000 connections close");
                }
                closer.join();
                assertScrapeWithin(s, 5.0, "after 1,000 connections closed");
                assertWithin(t0, 10, "closing 1,000 connections");
            } finally {
                for (Socket k : held) {
                    k.close();
                }
            }
            // the clients gone, their exchanges end (a read fails) and the server answers again
            long t0 = System.nanoTime();
            while (s.exchangesRunning() + s.exchangesWaiting() > 0 && System.nanoTime() - t0 < 10_000_000_000L) {
                Thread.sleep(20);
            }
            assertEquals(0, s.exchangesRunning() + s.exchangesWaiting(), "exchanges left after every client closed");
            assertScrapeWithin(s, 5.0, "after the abuse");
        }
        assertThrows(ConnectException.class, () -> new Socket(LO, port).close(), "the port outlived close()");
        assertEquals(dispatchersBefore, Scrape.serverThreads(), "the server's dispatcher outlived close()");
    }

    @Test
    void pastTheRunningAndWaitingBoundsConnectionsAreClosedNotHeld() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        m.recordStep(3, 10);
        List<Socket> held = new ArrayList<>();
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry(), 16, 16)) {
            try {
                for (int i = 0; i < 50; i++) {
                    held.add(halfRequest(s.port()));
                }
                long t0 = System.nanoTime();
                while ((s.exchangesRunning() < 16 || s.exchangesWaiting() < 16) && System.nanoTime() - t0 < 10_000_000_000L) {
                    Thread.sleep(5);
                }
                Thread.sleep(300); // the refusals of the last to arrive
                assertEquals(16, s.exchangesRunning(), "16 half requests read at once");
                assertEquals(16, s.exchangesWaiting(), "16 wait");
                int closed = 0;
                for (Socket k : held) {
                    k.setSoTimeout(5); // a refused one reads end-of-stream at once; a held one times out
                    closed += closedByServer(k) ? 1 : 0;
                }
                assertEquals(50 - 32, closed, "the half requests past both bounds are closed at once");
            } finally {
                for (Socket k : held) {
                    k.close();
                }
            }
            long t0 = System.nanoTime();
            while (s.exchangesRunning() + s.exchangesWaiting() > 0 && System.nanoTime() - t0 < 10_000_000_000L) {
                Thread.sleep(20);
            }
            assertEquals(0, s.exchangesRunning() + s.exchangesWaiting(), "exchanges left after every client closed");
            assertScrapeWithin(s, 5.0, "after the flood");
        }
    }

    /**
     * The heap the server allocates for an abusive request, counted by the JVM (a virtual thread's
     * allocation counts on its carrier): an oversized header is refused having read at most
     * {@link MetricsServer#MAX_HEADER} bytes of it, and a scrape (a half request whose client then
     * closes is served as one) renders without growing its buffer a few chars at a time. Before, an
     * oversized header cost 2.6 MB (the JDK reading up to 380 KiB into a doubling char array) and a
     * scrape 4.6 MB (the exporter's BufferedWriter growing on a virtual thread); now about 70 and 90 KiB.
     * This is what the step under {@code bench overhead --abuse} paid for in collections.
     */
    @Test
    void anAbusiveRequestCostsTheServerLittleHeap() throws Exception {
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        m.recordStep(3, 10);
        byte[] big = ("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(1 << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] scrape = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        byte[] half = "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            int port = s.port();
            for (int i = 0; i < 10; i++) { // class loading and the first compilations are not the steady state
                exchange(port, big, false);
                exchange(port, scrape, false);
                exchange(port, half, true);
            }
            long oversized = allocatedPerRequest(20, () -> exchange(port, big, false));
            long scraped = allocatedPerRequest(20, () -> exchange(port, scrape, false));
            long halfThenClosed = allocatedPerRequest(20, () -> exchange(port, half, true));
            System.out.printf("abuse: heap allocated per request: oversized header %d KiB, scrape %d KiB, half request closed %d KiB%n",
                    oversized >> 10, scraped >> 10, halfThenClosed >> 10);
            assertTrue(oversized < 32L * MetricsServer.MAX_HEADER, "an oversized header allocated " + oversized + " bytes");
            assertTrue(scraped < 512 << 10, "a scrape allocated " + scraped + " bytes");
            assertTrue(halfThenClosed < 512 << 10, "a half request, closed, allocated " + halfThenClosed + " bytes");
        }
    }

    private interface Request {
        void send() throws IOException;
    }

    /** Heap allocated by every thread but this one, per request, over {@code n} requests sent one after another. */
    private static long allocatedPerRequest(int n, Request r) throws IOException {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long all0 = threads.getTotalThreadAllocatedBytes();
        long mine0 = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < n; i++) {
            r.send();
        }
        long all = threads.getTotalThreadAllocatedBytes() - all0;
        long mine = threads.getCurrentThreadAllocatedBytes() - mine0;
        return (all - mine) / n;
    }

    /** Sends {@code request} (then, if {@code close}, ends the stream), and reads until the server closes: its exchange is over then. */
    private static void exchange(int port, byte[] request, boolean close) throws IOException {
        try (Socket k = new Socket(LO, port)) {
            k.setSoTimeout(10_000);
            try {
                k.getOutputStream().write(request);
                if (close) {
                    k.shutdownOutput();
                }
                k.getInputStream().transferTo(OutputStream.nullOutputStream());
            } catch (java.net.SocketTimeoutException e) {
                throw e;
            } catch (IOException reset) {
                // an oversized header: the server closes with the rest unread, a reset on this side
            }
        }
    }

    private static Socket halfRequest(int port) throws IOException {
        Socket slow = new Socket(LO, port);
        OutputStream o = slow.getOutputStream();
        o.write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
        o.flush();
        return slow;
    }

    /** Whether the server closed (or reset) {@code k} without answering; false when it is still open after the timeout. */
    private static boolean closedByServer(Socket k) {
        try {
            InputStream in = k.getInputStream();
            return in.read() < 0;
        } catch (java.net.SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private static void waitForExchanges(MetricsServer s, int n) throws InterruptedException {
        long t0 = System.nanoTime();
        while (s.exchangesRunning() < n && System.nanoTime() - t0 < 10_000_000_000L) {
            Thread.sleep(5);
        }
    }

    private static void assertWithin(long t0, double seconds, String what) {
        double took = (System.nanoTime() - t0) / 1e9;
        System.out.printf("abuse: %s took %.2f s%n", what, took);
        assertTrue(took < seconds, what + " took " + took + " s (limit " + seconds + " s)");
    }

    private static void assertScrapeWithin(MetricsServer s, double seconds, String when) throws Exception {
        long t0 = System.nanoTime();
        var r = Scrape.get(s.url());
        double took = (System.nanoTime() - t0) / 1e9;
        assertEquals(200, r.statusCode(), when);
        assertEquals(1, Scrape.value(r.body(), "step_time_ms_count"), r.body());
        assertTrue(took < seconds, "a scrape " + when + " took " + took + " s");
    }
}
