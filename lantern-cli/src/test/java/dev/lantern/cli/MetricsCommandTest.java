package dev.lantern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --metrics-port}/{@code --metrics-host} of train, soak and run: the endpoint is up while the
 * command runs, scraped over HTTP with the figures moving, and gone (port closed, threads ended)
 * once the command returns; a bad port or host is one usage line and exit 2.
 */
class MetricsCommandTest {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern URL = Pattern.compile("metrics at (http://127\\.0\\.0\\.1:(\\d+)/metrics)");
    private static final String[] NAMES = {"step_time_ms", "tokens_per_s", "alloc_frag_pct", "alloc_reserved_bytes",
        "alloc_allocated_bytes", "occ_pct", "graph_hit_pct", "graph_fallbacks", "dram_gbps", "kernel_launches",
        "compiles", "compile_cache_hits", "oom", "loss_scale", "overflow_steps"};

    /** A command running on its own thread, its standard error readable while it runs. */
    record Live(CompletableFuture<Integer> code, ByteArrayOutputStream out, ByteArrayOutputStream err) {
        static Live start(String... args) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            CompletableFuture<Integer> code = CompletableFuture.supplyAsync(() -> Main.run(args,
                    new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8)));
            return new Live(code, out, err);
        }

        String errText() {
            synchronized (err) {
                return err.toString(StandardCharsets.UTF_8);
            }
        }

        /** The URL the command printed, waiting for it up to 60 s. */
        String url() throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                Matcher m = URL.matcher(errText());
                if (m.find()) {
                    return m.group(1);
                }
                if (code.isDone()) {
                    break;
                }
                Thread.sleep(5);
            }
            throw new AssertionError("no metrics URL on standard error: " + errText());
        }
    }

    static String scrape(String url) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), url);
        return r.body();
    }

    /**
     * A scrape of a running command, or null when the command ended before or during it (the port closed, or the
     * server closed the connection as the command closed it); a failure while the command still runs is thrown.
     */
    static String scrapeWhileRunning(Live run, String url) throws Exception {
        try {
            return scrape(url);
        } catch (ConnectException e) {
            return null;
        } catch (java.io.IOException e) {
            try {
                run.code().get(5, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException stillRunning) {
                throw e;
            }
            return null;
        }
    }

    static double value(String body, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)").matcher(body);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    static long serverThreads() {
        // the JDK server's dispatcher (joined by close()) is the server's platform thread; its exchanges run on
        // virtual threads, which getAllStackTraces does not list
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().equals("HTTP-Dispatcher"))
                .count();
    }

    static void assertEveryMetric(String body) {
        for (String name : NAMES) {
            assertTrue(Pattern.compile("(?m)^# HELP " + name + "(_total)? \\S").matcher(body).find(), name + ": " + body);
            assertTrue(Pattern.compile("(?m)^# TYPE " + name + "(_total)? (gauge|counter|histogram)$").matcher(body).find(),
                    name + ": " + body);
        }
    }

    @Test
    void trainServesItsStepsWhileItRunsAndStopsServingAfter() throws Exception {
        long threadsBefore = serverThreads();
        Live run = Live.start("train", "--shape", "2,16,16,2,32", "--vocab", "16", "--steps", "300", "--amp", "f16",
                "--metrics-port", "0", "--json");
        String url = run.url();
        double first = Double.NaN;
        double later = Double.NaN;
        String body = null;
        while (!run.code().isDone()) {
            try {
                body = scrape(url);
            } catch (ConnectException e) {
                break; // the command ended between the check and the scrape
            } catch (java.io.IOException e) {
                // the command ended during the scrape (the server closed the connection before answering);
                // a command still running means the server failed, which is the error
                try {
                    run.code().get(5, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException stillRunning) {
                    throw e;
                }
                break;
            }
            double steps = value(body, "step_time_ms_count");
            if (steps > 0 && Double.isNaN(first)) {
                first = steps;
                assertEveryMetric(body);
                assertTrue(value(body, "tokens_per_s") > 0, body);
                assertTrue(value(body, "loss_scale") > 1, "f16 trains with a dynamic loss scale: " + body);
            } else if (steps > first) {
                later = steps;
            }
        }
        assertEquals(0, run.code().get(120, TimeUnit.SECONDS), run.errText());
        assertTrue(first >= 1 && later > first, "the step count rose while train ran: " + first + " -> " + later);
        assertThrows(ConnectException.class, () -> scrape(url), "the endpoint outlived the command");
        assertEquals(threadsBefore, serverThreads(), "the server's threads outlived the command");
        assertFalse(run.out().toString(StandardCharsets.UTF_8).contains("metrics at"), "the address goes to standard error");
    }

    @Test
    void theSimulatorSoakServesTheAllocatorWhileItRuns() throws Exception {
        long threadsBefore = serverThreads();
        Live run = Live.start("soak", "--seconds", "2", "--device", "sim", "--metrics-port", "0", "--json");
        String url = run.url();
        double reserved = 0;
        double allocated = 0;
        while (!run.code().isDone()) {
            String body = scrapeWhileRunning(run, url);
            if (body == null) {
                break;
            }
            assertEveryMetric(body);
            reserved = Math.max(reserved, value(body, "alloc_reserved_bytes"));
            allocated = Math.max(allocated, value(body, "alloc_allocated_bytes"));
            assertTrue(value(body, "alloc_allocated_bytes") <= value(body, "alloc_reserved_bytes"), body);
            Thread.sleep(50);
        }
        assertEquals(0, run.code().get(60, TimeUnit.SECONDS), run.errText());
        assertTrue(reserved > 0 && allocated > 0, "the soak's allocator showed on /metrics: " + reserved + ", " + allocated);
        assertThrows(ConnectException.class, () -> scrape(url));
        assertEquals(threadsBefore, serverThreads());
    }

    @Test
    void runCountsTheCpuSessionsGraphFallbacksWhileItRuns(@TempDir Path dir) throws Exception {
        long threadsBefore = serverThreads();
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        // the warm-up alone runs forwards for a second: long enough to be scraped during it
        Live run = Live.start("run", ir.toString(), "--device", "cpu", "--mode", "graph", "--runs", "200", "--metrics-port", "0");
        String url = run.url();
        double fallbacks = 0;
        while (!run.code().isDone()) {
            String body = scrapeWhileRunning(run, url);
            if (body == null) {
                break;
            }
            assertEveryMetric(body);
            fallbacks = Math.max(fallbacks, value(body, "graph_fallbacks_total{reason=\"cpu\"}"));
            assertEquals(0, value(body, "graph_hit_pct"), "the CPU replays no graph: " + body);
            Thread.sleep(20);
        }
        assertEquals(0, run.code().get(60, TimeUnit.SECONDS), run.errText());
        assertTrue(fallbacks > 0, "a graph-mode forward on the CPU is a fallback with reason cpu, seen on /metrics");
        assertThrows(ConnectException.class, () -> scrape(url));
        assertEquals(threadsBefore, serverThreads());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            train port too big     | train --shape 2,16,16,2,32 --steps 1 --metrics-port 65536      | --metrics-port takes a port number
            train port not a number| train --shape 2,16,16,2,32 --steps 1 --metrics-port http       | --metrics-port takes a port number
            train host alone       | train --shape 2,16,16,2,32 --steps 1 --metrics-host 127.0.0.1 | --metrics-host needs --metrics-port
            train unknown host     | train --shape 2,16,16,2,32 --steps 1 --metrics-port 0 --metrics-host no-such-host.invalid | unknown host
            train foreign address  | train --shape 2,16,16,2,32 --steps 1 --metrics-port 0 --metrics-host 192.0.2.1 | cannot serve metrics on 192.0.2.1:0
            soak negative port     | soak --max-ops 10 --metrics-port -1                               | --metrics-port takes a port number
            run port too big       | run x.ir --metrics-port 99999                                   | --metrics-port takes a port number
            bench port too big     | bench macro --config decoder-small --metrics-port 70000       | --metrics-port takes a port number
            bench model port       | bench model --model m.onnx --metrics-port 70000                | --metrics-port takes a port number
            bench cpu port         | bench cpu --config cpu-small --metrics-port 70000              | --metrics-port takes a port number
            soak unknown host      | soak --max-ops 10 --metrics-port 0 --metrics-host no-such-host.invalid | unknown host
            """)
    void badPortsAndHostsAreOneUsageLine(String what, String argLine, String message) {
        MainTest.Run r = MainTest.run(argLine.split(" "));
        assertEquals(2, r.code(), () -> what + ": " + r.err());
        assertTrue(r.err().contains(message), () -> what + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), () -> what + ": " + r.err());
    }

    @Test
    void aPortInUseIsAUsageError() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            MainTest.Run r = MainTest.run("train", "--shape", "2,16,16,2,32", "--steps", "1", "--metrics-port",
                    String.valueOf(taken.getLocalPort()));
            assertEquals(2, r.code(), r.err());
            assertTrue(r.err().contains("cannot serve metrics on 127.0.0.1:" + taken.getLocalPort()), r.err());
        }
    }
}
