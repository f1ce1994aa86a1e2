package dev.lantern.bench.profile;

import java.util.Locale;

/**
 * Numbers and units as the profilers print them. nsys names the unit in the header
 * ({@code "Total Time (ns)"}, {@code "Avg (us)"} with {@code --timeunit}); ncu's raw page has a
 * second row of units, scaled to the value unless {@code --print-units base}
 * ({@code "usecond"}, {@code "Gbyte/second"}); ncu groups thousands ({@code "12,345.6"}).
 */
final class Units {
    private Units() {}

    /**
     * Microseconds per one of {@code unit}: ns, us, µs, ms, s and ncu's nsecond, usecond,
     * msecond, second. A header without a unit is nsys's default, nanoseconds.
     */
    static double timeToMicros(String unit, String source) {
        if (unit == null || unit.isBlank()) {
            return 1e-3;
        }
        return switch (unit.strip().toLowerCase(Locale.ROOT)) {
            case "ns", "nsec", "nsecond", "nseconds" -> 1e-3;
            case "us", "µs", "μs", "usec", "usecond", "useconds" -> 1;
            case "ms", "msec", "msecond", "mseconds" -> 1e3;
            case "s", "sec", "second", "seconds" -> 1e6;
            default -> throw new ProfileFormatException(source + ": unknown time unit '" + unit + "'");
        };
    }

    /** GB/s (1e9 bytes per second) per one of {@code unit}: byte/second with an SI prefix (K, M, G, T). */
    static double rateToGbps(String unit, String source) {
        String u = unit == null ? "" : unit.strip();
        int slash = u.indexOf('/');
        if (slash < 0 || !u.substring(slash + 1).toLowerCase(Locale.ROOT).startsWith("s")) {
            throw new ProfileFormatException(source + ": '" + unit + "' is not a byte rate");
        }
        String bytes = u.substring(0, slash).toLowerCase(Locale.ROOT);
        double scale = switch (bytes) {
            case "byte", "bytes", "b" -> 1;
            case "kbyte", "kbytes", "kb" -> 1e3;
            case "mbyte", "mbytes", "mb" -> 1e6;
            case "gbyte", "gbytes", "gb" -> 1e9;
            case "tbyte", "tbytes", "tb" -> 1e12;
            case "pbyte", "pbytes", "pb" -> 1e15;
            default -> throw new ProfileFormatException(source + ": '" + unit + "' is not a byte rate");
        };
        return scale / 1e9;
    }

    /**
     * A number cell: thousands separators dropped; empty, {@code n/a} or {@code -} is null (the
     * metric was not collected for that launch). Anything else that is not a number is an error.
     */
    static Double number(String cell, String source, int line, String column) {
        if (cell == null) {
            return null;
        }
        String s = cell.strip();
        if (s.isEmpty() || s.equalsIgnoreCase("n/a") || s.equals("-") || s.equalsIgnoreCase("nan")) {
            return null;
        }
        if (s.matches("[-+]?\\d{1,3}(,\\d{3})+(\\.\\d*)?([eE][-+]?\\d+)?")) {
            s = s.replace(",", "");
        }
        try {
            double v = Double.parseDouble(s);
            if (!Double.isFinite(v)) {
                return null;
            }
            return v;
        } catch (NumberFormatException e) {
            throw new ProfileFormatException(source + ": line " + line + ", column '" + column + "': '" + cell + "' is not a number");
        }
    }

    /** As {@link #number}, for a figure every row must have. */
    static double required(String cell, String source, int line, String column) {
        Double v = number(cell, source, line, column);
        if (v == null) {
            throw new ProfileFormatException(source + ": line " + line + ", column '" + column + "' is empty");
        }
        return v;
    }
}
