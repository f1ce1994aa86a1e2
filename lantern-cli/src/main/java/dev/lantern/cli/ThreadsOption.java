package dev.lantern.cli;

import dev.lantern.cpu.CpuConfig;

/**
 * {@code --threads N}: sets {@code lantern.cpu.threads} before the CPU backend reads it. The backend
 * reads it once per process, so a JVM that already runs another count refuses the option rather
 * than run with the wrong one.
 */
final class ThreadsOption {
    private ThreadsOption() {}

    /** The CPU worker count for {@code command}: {@code --threads N}, else the backend's. */
    static int apply(String command, Args a) {
        if (a.get("threads", null) == null) {
            return CpuConfig.THREADS;
        }
        int n = a.getInt(command, "threads", 1, 1, 4096);
        System.setProperty("lantern.cpu.threads", String.valueOf(n));
        if (CpuConfig.THREADS != n) {
            throw new UsageException(command + ": --threads " + n + ": this process's CPU backend already runs " + CpuConfig.THREADS
                    + " threads (set once per process); run " + command + " in a fresh process");
        }
        return n;
    }
}
