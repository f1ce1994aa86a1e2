package dev.lantern.bench.profile;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;

/**
 * RFC 4180 CSV as nsys and ncu write it: fields in double quotes may hold commas, doubled quotes
 * and line breaks (a kernel's demangled name holds all three kinds of bracket and commas). The
 * tools print progress lines before the table when their output is captured from a terminal
 * stream, so {@link #table} skips lines up to the first row that looks like the wanted header.
 */
final class Csv {
    /** A header row (its cells) and the rows after it, each with its 1-based line number. */
    record Table(String source, List<String> header, List<Row> rows) {
        /** The index of the first header cell {@code match} accepts, or -1. */
        int column(Predicate<String> match) {
            for (int i = 0; i < header.size(); i++) {
                if (match.test(header.get(i))) {
                    return i;
                }
            }
            return -1;
        }

        int required(String what, Predicate<String> match) {
            int c = column(match);
            if (c < 0) {
                throw new ProfileFormatException(source + ": no " + what + " column in the header " + header);
            }
            return c;
        }
    }

    record Row(int line, List<String> cells) {
        String get(int column) {
            return column >= 0 && column < cells.size() ? cells.get(column) : null;
        }
    }

    private Csv() {}

    /**
     * The table whose header is the first row {@code isHeader} accepts. Empty lines are skipped;
     * a row after the header with fewer or more cells than the header is an error.
     */
    static Table table(String source, String text, Predicate<List<String>> isHeader) {
        List<Row> all = rows(source, text);
        for (int i = 0; i < all.size(); i++) {
            List<String> cells = all.get(i).cells();
            if (!isHeader.test(cells)) {
                continue;
            }
            List<Row> body = new ArrayList<>();
            for (Row r : all.subList(i + 1, all.size())) {
                if (r.cells().size() != cells.size()) {
                    throw new ProfileFormatException(source + ": line " + r.line() + " has " + r.cells().size()
                            + " fields, the header " + cells.size());
                }
                body.add(r);
            }
            return new Table(source, List.copyOf(cells), body);
        }
        throw new ProfileFormatException(source + ": no header row found (" + all.size() + " rows read)");
    }

    /** Every non-empty record of the text. */
    static List<Row> rows(String source, String text) {
        List<Row> out = new ArrayList<>();
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        boolean wasQuoted = false;
        int line = 1;
        int rowLine = 1;
        int quoteLine = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '"') {
                    if (i + 1 < text.length() && text.charAt(i + 1) == '"') {
                        cell.append('"');
                        i++;
                    } else {
                        quoted = false;
                    }
                } else {
                    if (c == '\n') {
                        line++;
                    }
                    cell.append(c);
                }
            } else if (c == '"') {
                if (cell.toString().isBlank()) {
                    cell.setLength(0);
                    quoted = true;
                    wasQuoted = true;
                    quoteLine = line;
                } else {
                    cell.append(c); // a quote inside an unquoted field is kept, as readers do
                }
            } else if (c == ',') {
                cells.add(finish(cell, wasQuoted));
                wasQuoted = false;
            } else if (c == '\n' || c == '\r') {
                if (c == '\r' && i + 1 < text.length() && text.charAt(i + 1) == '\n') {
                    i++;
                }
                cells.add(finish(cell, wasQuoted));
                wasQuoted = false;
                add(out, rowLine, cells);
                cells = new ArrayList<>();
                line++;
                rowLine = line;
            } else {
                cell.append(c);
            }
        }
        if (quoted) {
            throw new ProfileFormatException(source + ": the quote opened on line " + quoteLine + " is never closed");
        }
        cells.add(finish(cell, wasQuoted));
        add(out, rowLine, cells);
        return out;
    }

    private static String finish(StringBuilder cell, boolean wasQuoted) {
        String s = wasQuoted ? cell.toString() : cell.toString().strip();
        cell.setLength(0);
        return s;
    }

    private static void add(List<Row> out, int line, List<String> cells) {
        if (cells.size() == 1 && cells.getFirst().isEmpty()) {
            return; // an empty line
        }
        out.add(new Row(line, List.copyOf(cells)));
    }

    /** A header cell's name without its unit and case: {@code "Total Time (ns)"} -> {@code "total time"}. */
    static String bare(String header) {
        int p = header.indexOf('(');
        String s = p >= 0 ? header.substring(0, p) : header;
        return s.strip().toLowerCase(Locale.ROOT);
    }

    /** The unit in a header's parentheses ({@code "Total Time (ns)"} -> {@code "ns"}), or null. */
    static String unit(String header) {
        int p = header.lastIndexOf('(');
        int q = header.lastIndexOf(')');
        return p >= 0 && q > p ? header.substring(p + 1, q).strip() : null;
    }
}
