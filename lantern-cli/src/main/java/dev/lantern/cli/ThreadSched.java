package dev.lantern.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What Linux's scheduler says of the calling thread ({@code /proc/thread-self}) and of the machine
 * ({@code /proc/stat}), for {@code bench overhead}: a step that slows with no more CPU time of its own
 * was either waiting for a core ({@code waitNanos}, the time it was runnable but not running), moved
 * to another core ({@code migrations}, {@code cpu}), or running on a core that the hypervisor gave
 * elsewhere ({@code stealTicks}, all cores, in clock ticks of 1/100 s). Each field is -1 where the
 * kernel does not say (not Linux, or a kernel built without scheduler statistics).
 *
 * @param waitNanos  the thread's time on a run queue, waiting for a core (schedstat's second field)
 * @param migrations times the thread moved between cores ({@code se.nr_migrations})
 * @param cpu        the core the thread last ran on (stat's 39th field)
 * @param stealTicks ticks the hypervisor ran something else on this machine's cores
 */
record ThreadSched(long waitNanos, long migrations, int cpu, long stealTicks) {
    private static final Path SCHEDSTAT = Path.of("/proc/thread-self/schedstat");
    private static final Path SCHED = Path.of("/proc/thread-self/sched");
    private static final Path STAT = Path.of("/proc/thread-self/stat");
    private static final Path MACHINE = Path.of("/proc/stat");

    /** The calling thread's counters now. */
    static ThreadSched now() {
        long wait = -1;
        long migrations = -1;
        int cpu = -1;
        long steal = -1;
        String s = read(SCHEDSTAT);
        if (s != null) {
            String[] f = s.trim().split("\\s+");
            wait = f.length > 1 ? parse(f[1]) : -1;
        }
        s = read(SCHED);
        int at = s == null ? -1 : s.indexOf("se.nr_migrations");
        if (at >= 0) {
            int colon = s.indexOf(':', at);
            int end = s.indexOf('\n', colon);
            migrations = parse(s.substring(colon + 1, end < 0 ? s.length() : end).trim());
        }
        s = read(STAT);
        if (s != null && s.lastIndexOf(')') > 0) {
            // the fields after the command name (which may hold spaces): state is field 3, the processor field 39
            String[] f = s.substring(s.lastIndexOf(')') + 1).trim().split("\\s+");
            cpu = f.length > 36 ? (int) parse(f[36]) : -1;
        }
        s = read(MACHINE);
        if (s != null && s.startsWith("cpu ")) {
            String[] f = s.substring(0, s.indexOf('\n')).trim().split("\\s+"); // cpu user nice system idle iowait irq softirq steal
            steal = f.length > 8 ? parse(f[8]) : -1;
        }
        return new ThreadSched(wait, migrations, cpu, steal);
    }

    /** {@code later - this}, field by field; -1 where either side is unknown. */
    ThreadSched since(ThreadSched earlier) {
        return new ThreadSched(minus(waitNanos, earlier.waitNanos), minus(migrations, earlier.migrations), cpu,
                minus(stealTicks, earlier.stealTicks));
    }

    private static long minus(long a, long b) {
        return a < 0 || b < 0 ? -1 : a - b;
    }

    private static long parse(String v) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
