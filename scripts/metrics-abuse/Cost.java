import dev.lantern.metrics.LanternMetrics;
import dev.lantern.metrics.MetricsServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.*;
import java.lang.management.*;
import java.net.*;
import java.nio.charset.StandardCharsets;
import java.util.*;

/**
 * The metrics server's CPU and heap per abusive request, by kind (process totals minus this client thread; a
 * virtual thread's allocation counts on its carrier). From the repository root, after ./lantern has built the CLI:
 *
 *   java -XX:+UseParallelGC -cp 'lantern-cli/target/lib/*' scripts/metrics-abuse/Cost.java ROUNDS [PHASES]
 *
 * PHASES: any of s (scrapes), u (unknown paths), b (1 MiB headers), c (1,050 connections opened and closed),
 * h (1,050 held); default subc. The first rounds include class loading and JIT: read the last. Swap the
 * lantern-runtime jar on the class path for an older build's to compare servers (docs/observability.md).
 */
public class Cost {
    static final com.sun.management.ThreadMXBean T = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    static final com.sun.management.OperatingSystemMXBean OS = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    static final InetAddress LO = InetAddress.getLoopbackAddress();
    static int port;
    static byte[] BIG = ("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(1 << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    static byte[] UNKNOWN = "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    static byte[] SCRAPE = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    static void exchange(byte[] req) throws IOException {
        try (Socket k = new Socket(LO, port)) {
            k.setSoTimeout(5000);
            try { k.getOutputStream().write(req); k.getOutputStream().flush(); k.getInputStream().transferTo(OutputStream.nullOutputStream()); }
            catch (IOException reset) {}
        }
    }
    interface Work { void run() throws Exception; }
    static void measure(String what, int n, Work w) throws Exception {
        System.gc(); Thread.sleep(300);
        long cpu0 = OS.getProcessCpuTime(), me0 = T.getCurrentThreadCpuTime(), a0 = T.getTotalThreadAllocatedBytes(), ma0 = T.getCurrentThreadAllocatedBytes();
        long t0 = System.nanoTime();
        w.run();
        Thread.sleep(500); // let the server finish
        long cpu = OS.getProcessCpuTime() - cpu0 - (T.getCurrentThreadCpuTime() - me0);
        long alloc = T.getTotalThreadAllocatedBytes() - a0 - (T.getCurrentThreadAllocatedBytes() - ma0);
        System.out.printf("%-40s n=%5d  server CPU %8.1f us/each  server alloc %10.1f KiB/each  (client thread %.1f us/each)  wall %.2f s%n",
            what, n, (cpu - 500e6 * 0) / 1e3 / n, alloc / 1024.0 / n, (T.getCurrentThreadCpuTime() - me0) / 1e3 / n, (System.nanoTime() - t0) / 1e9);
    }
    static String phases = "subc";
    static boolean ph(String x) { return phases.contains(x); }
    public static void main(String[] a) throws Exception {
        if (a.length > 1) phases = a[1];
        LanternMetrics m = new LanternMetrics(new PrometheusRegistry());
        m.recordStep(3, 10);
        try (MetricsServer s = MetricsServer.start("127.0.0.1", 0, m.registry())) {
            port = s.port();
            for (int round = 0; round < Integer.parseInt(a.length > 0 ? a[0] : "3"); round++) {
                System.out.println("round " + round);
                measure("idle (baseline, 0.5 s)", 1, () -> {});
                if (ph("s")) measure("scrape /metrics", 200, () -> { for (int i = 0; i < 200; i++) exchange(SCRAPE); });
                if (ph("u")) measure("unknown path", 200, () -> { for (int i = 0; i < 200; i++) exchange(UNKNOWN); });
                if (ph("b")) measure("1 MiB header", 100, () -> { for (int i = 0; i < 100; i++) exchange(BIG); });
                if (ph("h")) {
                    List<Socket> held = new ArrayList<>();
                    for (int i = 0; i < 1000; i++) held.add(new Socket(LO, port));
                    for (int i = 0; i < 50; i++) { Socket k = new Socket(LO, port); held.add(k);
                        k.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII)); }
                    Thread.sleep(500);
                    measure("1,050 held for 1 s (after 0.5 s)", 1, () -> Thread.sleep(500));
                    for (Socket k : held) k.close();
                }
                if (ph("c")) measure("1,000 idle + 50 slow opened and closed", 1050, () -> {
                    List<Socket> held = new ArrayList<>();
                    for (int i = 0; i < 1000; i++) held.add(new Socket(LO, port));
                    for (int i = 0; i < 50; i++) { Socket k = new Socket(LO, port); held.add(k);
                        k.getOutputStream().write("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII)); }
                    Thread.sleep(300);
                    for (Socket k : held) k.close();
                });
            }
        }
    }
}
