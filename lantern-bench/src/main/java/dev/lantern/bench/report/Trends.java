package dev.lantern.bench.report;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Figures over commits, per machine: a {@link Series} per (case, implementation, metric), its
 * points in run order (date, then commit history, then file path), and the
 * {@link Regression}s where a figure is more than {@link #THRESHOLD} worse than the one before it.
 */
public final class Trends {
    /** A figure this much worse than the previous one of its series is an alert (5 %). */
    public static final double THRESHOLD = 0.05;

    private Trends() {}

    /** One figure of a series, from one file. */
    public record Point(int run, String commit, String date, String file, double value) {}

    /** One line of a trend chart. */
    public record Series(String machine, String caseName, String impl, String metric, String unit, boolean higherIsBetter,
                         List<Point> points) {
        public boolean lantern() {
            return impl.startsWith("lantern");
        }
    }

    /** A figure worse than the one before it in its series by {@code pct} percent. */
    public record Regression(Series series, Point before, Point after, double pct) {}

    /** The files of one machine that go on trends, in run order: date, then the commit's place in history, then path. */
    public static List<ResultFile> runs(List<ResultFile> files, String machine, CommitOrder order) {
        return files.stream().filter(f -> f.trended() && f.machine().equals(machine))
                .sorted(Comparator.comparing(ResultFile::date).thenComparingInt((ResultFile f) -> order.of(f.commit()))
                        .thenComparing(ResultFile::path)).toList();
    }

    /** Every series of {@code machine}, grouped by case (insertion order: first seen first). */
    public static Map<String, List<Series>> byCase(List<ResultFile> files, String machine, CommitOrder order) {
        List<ResultFile> runs = runs(files, machine, order);
        Map<String, Map<String, List<Point>>> points = new TreeMap<>();
        Map<String, Figure> first = new LinkedHashMap<>();
        for (int i = 0; i < runs.size(); i++) {
            ResultFile f = runs.get(i);
            for (Figure g : f.figures()) {
                String key = g.impl() + "\u0000" + g.metric();
                first.putIfAbsent(g.caseName() + "\u0000" + key, g);
                points.computeIfAbsent(g.caseName(), c -> new LinkedHashMap<>()).computeIfAbsent(key, k -> new ArrayList<>())
                        .add(new Point(i, f.commit(), f.date(), f.path(), g.value()));
            }
        }
        Map<String, List<Series>> out = new LinkedHashMap<>();
        for (Map.Entry<String, Map<String, List<Point>>> c : points.entrySet()) {
            List<Series> list = new ArrayList<>();
            for (Map.Entry<String, List<Point>> s : c.getValue().entrySet()) {
                Figure g = first.get(c.getKey() + "\u0000" + s.getKey());
                list.add(new Series(machine, c.getKey(), g.impl(), g.metric(), g.unit(), g.higherIsBetter(), List.copyOf(s.getValue())));
            }
            list.sort(Comparator.comparing((Series s) -> !s.lantern()).thenComparing(Series::impl));
            out.put(c.getKey(), list);
        }
        return out;
    }

    /** Every point more than {@link #THRESHOLD} worse than the previous point of its series. */
    public static List<Regression> regressions(Series s) {
        List<Regression> out = new ArrayList<>();
        List<Point> p = s.points();
        for (int i = 1; i < p.size(); i++) {
            double worse = worseBy(p.get(i - 1).value(), p.get(i).value(), s.higherIsBetter());
            if (worse > THRESHOLD) {
                out.add(new Regression(s, p.get(i - 1), p.get(i), 100 * worse));
            }
        }
        return out;
    }

    /** How much worse {@code after} is than {@code before}, as a fraction (negative: better). */
    static double worseBy(double before, double after, boolean higherIsBetter) {
        if (!(before > 0) || !Double.isFinite(after)) {
            return 0;
        }
        return higherIsBetter ? (before - after) / before : (after - before) / before;
    }
}
