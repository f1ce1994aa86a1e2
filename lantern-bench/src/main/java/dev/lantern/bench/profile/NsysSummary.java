package dev.lantern.bench.profile;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code nsys stats --format csv}'s summaries: {@code cuda_gpu_kern_sum} (older nsys:
 * {@code gpukernsum}) and {@code cuda_gpu_mem_time_sum} ({@code gpumemtimesum}). Columns are
 * found by name, their units read from the header ({@code "Total Time (ns)"}), so a reordered
 * or re-unitted report reads the same; times come out in microseconds.
 */
public final class NsysSummary {
    /** One kernel (or one memory operation): how often it ran and for how long in all. */
    public record Entry(String name, long calls, double totalUs) {
        public double meanUs() {
            return calls == 0 ? 0 : totalUs / calls;
        }
    }

    private NsysSummary() {}

    /** The kernel summary's rows, in file order (nsys sorts them by total time). */
    public static List<Entry> kernels(String source, String csv) {
        return entries(source, csv, "name");
    }

    /** The memory-operation summary's rows ({@code [CUDA memcpy Host-to-Device]}, {@code [CUDA memset]}, ...). */
    public static List<Entry> memoryOps(String source, String csv) {
        return entries(source, csv, "operation");
    }

    /** A memory operation that copies (memcpy in any direction), as opposed to a memset. */
    public static boolean isMemcpy(String operation) {
        return operation.toLowerCase(Locale.ROOT).contains("memcpy");
    }

    private static List<Entry> entries(String source, String csv, String nameColumn) {
        Csv.Table t = Csv.table(source, csv, h -> h.stream().anyMatch(c -> Csv.bare(c).equals("total time"))
                && h.stream().anyMatch(c -> Csv.bare(c).equals(nameColumn) || Csv.bare(c).equals("name")));
        int name = t.column(c -> Csv.bare(c).equals(nameColumn));
        if (name < 0) {
            name = t.required("name", c -> Csv.bare(c).equals("name"));
        }
        int total = t.required("Total Time", c -> Csv.bare(c).equals("total time"));
        int calls = t.required("Instances/Count", c -> switch (Csv.bare(c)) {
            case "instances", "count", "calls", "num calls", "operations" -> true;
            default -> false;
        });
        double toUs = Units.timeToMicros(Csv.unit(t.header().get(total)), source);
        List<Entry> out = new ArrayList<>();
        for (Csv.Row r : t.rows()) {
            String n = r.get(name);
            double us = Units.required(r.get(total), source, r.line(), t.header().get(total)) * toUs;
            double k = Units.required(r.get(calls), source, r.line(), t.header().get(calls));
            if (us < 0 || k < 0 || k != Math.rint(k)) {
                throw new ProfileFormatException(source + ": line " + r.line() + ": a negative time or a fractional count");
            }
            out.add(new Entry(n, (long) k, us));
        }
        return out;
    }
}
