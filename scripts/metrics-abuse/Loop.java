import dev.lantern.metrics.LanternMetrics;
import dev.lantern.metrics.MetricsServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.*;
import java.lang.management.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.locks.LockSupport;

/**
 * Times a tight host loop (calibrated to ~0.33 ms, allocation-free) in ABBA pairs of segments beside a MetricsServer
 * scraped every second; "on" adds the abuse of bench overhead --abuse, from this JVM (mode inproc: the client as it
 * was at e2f5f3f) or from a child JVM (mode outproc: dev.lantern.cli.MetricsAbuse, told start/stop on its stdin).
 * Prints the median-of-blocks estimate with a bootstrap 95 % interval, and per side the CPU, collections and heap.
 * From the repository root, after ./lantern has built the CLI:
 *
 *   java -XX:+UseParallelGC -Xlog:gc:file=gc.log \
 *     -cp 'lantern-cli/target/lantern-cli-0.1.0-SNAPSHOT.jar:lantern-cli/target/lib/*' \
 *     scripts/metrics-abuse/Loop.java inproc|outproc PAIRS SEGMENT_S SETTLE_S
 */
public class Loop {
    static final com.sun.management.ThreadMXBean T = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    static final com.sun.management.OperatingSystemMXBean OS = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    static final InetAddress LO = InetAddress.getLoopbackAddress();
    static double[] x = new double[4096];
    static double sink;
    static int reps = 1;
    static void step() { double s = 0; for (int r = 0; r < reps; r++) for (int i = 0; i < x.length; i++) { s += x[i] * 1.0000001 + r; x[i] = s * 1e-9; } sink += s; }

    // ---- in-process abuse: the same as MetricsAbuse at e2f5f3f
    static byte[] BIG = ("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(1 << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    static byte[] UNKNOWN = "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    static volatile boolean stop;
    static List<Socket> held = new ArrayList<>();
    static Thread churn;
    static Process child; static BufferedReader childOut; static Writer childIn;
    static String mode;
    static int port;
    static void abuseStart() throws Exception {
        if (mode.equals("outproc")) { childIn.write("start\n"); childIn.flush(); String l = childOut.readLine(); if (!l.startsWith("started")) throw new IOException(l); return; }
        for (int i = 0; i < 1000; i++) held.add(new Socket(LO, port));
        for (int i = 0; i < 50; i++) { Socket k = new Socket(LO, port); held.add(k); k.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII)); }
        stop = false;
        churn = Thread.ofPlatform().daemon().start(() -> { for (long i = 0; !stop; i++) { try (Socket k = new Socket(LO, port)) { k.setSoTimeout(5000);
            try { k.getOutputStream().write(i % 2 == 0 ? UNKNOWN : BIG); k.getInputStream().transferTo(OutputStream.nullOutputStream()); } catch (IOException e) {} } catch (IOException e) {}
            LockSupport.parkNanos(10_000_000L); } });
    }
    static void abuseStop() throws Exception {
        if (mode.equals("outproc")) { childIn.write("stop\n"); childIn.flush(); String l = childOut.readLine(); if (!l.startsWith("stopped")) throw new IOException(l); return; }
        stop = true; churn.join(); for (Socket k : held) k.close(); held.clear();
    }
    static long gcCount() { long n = 0; for (var g : ManagementFactory.getGarbageCollectorMXBeans()) n += g.getCollectionCount(); return n; }
    static long gcMs() { long n = 0; for (var g : ManagementFactory.getGarbageCollectorMXBeans()) n += g.getCollectionTime(); return n; }
    static long[] arm(boolean on) { return on ? ON : OFF; }
    static long[] ON = new long[7], OFF = new long[7]; // wall ns, process cpu ns, step cpu ns, gc count, gc ms, steps, allocated bytes

    static double segment(double s, long[] acc) {
        long t = System.nanoTime(), end = t + (long) (s * 1e9), p0 = OS.getProcessCpuTime(), c0 = T.getCurrentThreadCpuTime(), g0 = gcCount(), gm0 = gcMs(), al0 = T.getTotalThreadAllocatedBytes();
        double[] v = new double[200000]; int n = 0;
        do { long a = System.nanoTime(); step(); v[n++] = (System.nanoTime() - a) / 1e6; } while (System.nanoTime() < end && n < v.length);
        acc[0] += System.nanoTime() - t; acc[1] += OS.getProcessCpuTime() - p0; acc[2] += T.getCurrentThreadCpuTime() - c0; acc[3] += gcCount() - g0; acc[4] += gcMs() - gm0; acc[5] += n; acc[6] += T.getTotalThreadAllocatedBytes() - al0;
        double[] w = Arrays.copyOf(v, n); Arrays.sort(w); return w[n / 2];
    }
    static double median(double[] v) { double[] w = v.clone(); Arrays.sort(w); return w.length % 2 == 1 ? w[w.length / 2] : (w[w.length / 2 - 1] + w[w.length / 2]) / 2; }

    public static void main(String[] a) throws Exception {
        mode = a[0]; int pairs = Integer.parseInt(a[1]); double segS = Double.parseDouble(a[2]); double settle = Double.parseDouble(a[3]);
        new Random(1).doubles(x.length).toArray();
        long t0 = System.nanoTime(); for (int i = 0; i < 2000; i++) step(); // warm
        t0 = System.nanoTime(); for (int i = 0; i < 200; i++) step(); double one = (System.nanoTime() - t0) / 200e6; reps = Math.max(1, (int) Math.round(0.33 / one)); 
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            port = s.port();
            if (mode.equals("outproc")) {
                child = new ProcessBuilder(ProcessHandle.current().info().command().orElseThrow(), "-XX:+UseSerialGC", "-Xmx256m", "-cp", System.getProperty("java.class.path"), "dev.lantern.cli.MetricsAbuse", String.valueOf(port))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
                childOut = new BufferedReader(new InputStreamReader(child.getInputStream())); childIn = new OutputStreamWriter(child.getOutputStream());
            }
            HttpClientScraper sc = new HttpClientScraper(s.url());
            long w = System.nanoTime() + 2_000_000_000L; while (System.nanoTime() < w) { step(); m.recordStep(0.33, 1); }
            double[] ratio = new double[pairs];
            for (int p = 0; p < pairs; p++) {
                double offM = 0, onM = 0;
                for (int half = 0; half < 2; half++) {
                    boolean on = (half == 1) == (p % 2 == 0);
                    if (on) abuseStart();
                    long se = System.nanoTime() + (long) (settle * 1e9); while (System.nanoTime() < se) step();
                    double med = segment(segS, arm(on));
                    if (on) { onM = med; abuseStop(); } else offM = med;
                }
                ratio[p] = 100 * (onM / offM - 1);
            }
            sc.stop = true;
            double[] blocks = new double[pairs / 2]; for (int b = 0; b < blocks.length; b++) blocks[b] = (ratio[2 * b] + ratio[2 * b + 1]) / 2;
            Random r = new Random(7); double[] boot = new double[2000];
            for (int i = 0; i < boot.length; i++) { double[] bb = new double[blocks.length]; for (int j = 0; j < bb.length; j++) bb[j] = blocks[r.nextInt(blocks.length)]; boot[i] = median(bb); }
            Arrays.sort(boot);
            System.out.printf(Locale.ROOT, "mode=%s pairs=%d seg=%.2fs settle=%.2fs reps=%d: on vs off %+.2f %% [%+.2f, %+.2f]; pairs min %+.1f max %+.1f%n", mode, pairs, segS, settle, reps,
                median(blocks), boot[50], boot[1949], Arrays.stream(ratio).min().getAsDouble(), Arrays.stream(ratio).max().getAsDouble());
            for (String k : List.of("off", "on")) { long[] v = k.equals("on") ? ON : OFF;
                System.out.printf(Locale.ROOT, "  %-3s: process CPU %.2f s/s, step thread %.2f s/s, GCs %d (%d ms, %.2f/s), steps %d, heap %.1f MB/s%n", k, v[1] / (double) v[0], v[2] / (double) v[0], v[3], v[4], v[3] / (v[0] / 1e9), v[5], v[6] / 1e6 / (v[0] / 1e9)); }
            System.out.println("  pairs: " + Arrays.toString(Arrays.stream(ratio).map(d -> Math.round(d * 10) / 10.0).toArray()));
            if (child != null) { childIn.close(); child.waitFor(); }
        }
    }
    static final class HttpClientScraper { volatile boolean stop; HttpClientScraper(String url) { Thread.ofPlatform().daemon().start(() -> {
        var c = java.net.http.HttpClient.newHttpClient(); var req = java.net.http.HttpRequest.newBuilder(URI.create(url)).build();
        while (!stop) { try { c.send(req, java.net.http.HttpResponse.BodyHandlers.discarding()); Thread.sleep(1000); } catch (Exception e) { } } }); } }
}
