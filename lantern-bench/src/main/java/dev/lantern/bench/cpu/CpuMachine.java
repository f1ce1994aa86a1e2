package dev.lantern.bench.cpu;

import jdk.incubator.vector.FloatVector;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * What a CPU result must say about where it ran: the CPU model ({@code /proc/cpuinfo}), the cores the
 * JVM sees, the vector width the Vector API prefers (what {@code lantern doctor} reports), the JDK,
 * the load average (how busy the shared machine was), and the commit measured.
 */
public final class CpuMachine {
    private CpuMachine() {}

    public static String cpuModel() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .map(l -> l.substring(l.indexOf(':') + 1).trim()).findFirst().orElse("unknown");
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    public static int cores() {
        return Runtime.getRuntime().availableProcessors();
    }

    public static int vectorBits() {
        return FloatVector.SPECIES_PREFERRED.vectorBitSize();
    }

    public static String jdk() {
        return System.getProperty("java.vm.name") + " " + Runtime.version();
    }

    /** /proc/loadavg's 1, 5 and 15 minute figures. */
    public static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "unknown";
        }
    }

    /**
     * The short commit of the working directory's repository, with {@code -dirty} when the library
     * sources differ from it; {@code unknown} outside a repository or without git.
     */
    public static String commit() {
        String head = git("rev-parse", "--short", "HEAD");
        if (head.isEmpty()) {
            return "unknown";
        }
        String dirty = git("status", "--porcelain", "--", "lantern-core", "lantern-runtime", "lantern-onnx", "lantern-bench");
        return dirty.isEmpty() ? head : head + "-dirty";
    }

    private static String git(String... args) {
        String[] cmd = new String[args.length + 1];
        cmd[0] = "git";
        System.arraycopy(args, 0, cmd, 1, args.length);
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
                return "";
            }
            return out;
        } catch (IOException e) {
            return "";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** {@code s} as a JSON string literal. */
    public static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            switch (ch) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                default -> b.append(ch < 0x20 ? String.format("\\u%04x", (int) ch) : String.valueOf(ch));
            }
        }
        return b.append('"').toString();
    }
}
