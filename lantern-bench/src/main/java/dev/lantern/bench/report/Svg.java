package dev.lantern.bench.report;

import java.util.List;
import java.util.Locale;

/**
 * The report's charts as inline SVG, drawn here (no script, no library, nothing fetched): a line
 * chart of series over runs, a horizontal bar chart of one file's figures, and a soak's memory
 * over time. Every chart is an {@code <svg class="chart">} with {@code data-chart} (its kind) and
 * {@code data-file} or {@code data-case} attributes, which the browser test counts.
 */
final class Svg {
    static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
        "#7f7f7f", "#bcbd22"};
    private static final int W = 560;
    private static final int H = 230;
    private static final int L = 66;
    private static final int R = 12;
    private static final int T = 16;
    private static final int B = 46;

    private Svg() {}

    /** One line per series over the runs {@code labels} (x: run index), y from the values' range; peers dashed. */
    static String lines(String caseName, List<Trends.Series> series, List<String> labels, List<Trends.Regression> regressions) {
        double lo = Double.MAX_VALUE;
        double hi = -Double.MAX_VALUE;
        int minRun = Integer.MAX_VALUE;
        int maxRun = Integer.MIN_VALUE;
        for (Trends.Series s : series) {
            for (Trends.Point p : s.points()) {
                lo = Math.min(lo, p.value());
                hi = Math.max(hi, p.value());
                minRun = Math.min(minRun, p.run());
                maxRun = Math.max(maxRun, p.run());
            }
        }
        double[] y = range(lo, hi);
        int span = Math.max(1, maxRun - minRun);
        StringBuilder b = open("trend", "data-case=\"" + Html.esc(caseName) + "\"", W, H);
        axes(b, y, series.isEmpty() ? "" : series.getFirst().unit());
        // x labels: at most 8 commits, evenly picked
        int step = Math.max(1, (maxRun - minRun + 1 + 7) / 8);
        for (int r = minRun; r <= maxRun; r += step) {
            double x = L + (W - L - R) * (r - minRun) / (double) span;
            b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" font-size=\"9\" text-anchor=\"end\" transform=\"rotate(-30 %.1f %d)\">%s</text>",
                    x + 4, H - B + 12, x + 4, H - B + 12, Html.esc(labels.get(r))));
        }
        for (int i = 0; i < series.size(); i++) {
            Trends.Series s = series.get(i);
            String color = COLORS[i % COLORS.length];
            StringBuilder pts = new StringBuilder();
            StringBuilder dots = new StringBuilder();
            for (Trends.Point p : s.points()) {
                double x = L + (W - L - R) * (p.run() - minRun) / (double) span;
                double yy = ypos(p.value(), y);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, yy));
                boolean regressed = regressions.stream().anyMatch(r -> r.series() == s && r.after() == p);
                if (regressed) {
                    dots.append(String.format(Locale.ROOT, "<circle class=\"regression\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"1.5\"/>", x, yy));
                }
                dots.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.6\" fill=\"%s\"><title>%s %s: %s %s (%s, %s)</title></circle>",
                        x, yy, color, Html.esc(s.impl()), Html.esc(caseName), fmt(p.value()), Html.esc(s.unit()), Html.esc(p.commit()),
                        Html.esc(p.file())));
            }
            b.append("<polyline fill=\"none\" stroke=\"").append(color).append("\" stroke-width=\"").append(s.lantern() ? "2" : "1.3")
                    .append(s.lantern() ? "" : "\" stroke-dasharray=\"4 3").append("\" points=\"").append(pts.toString().trim()).append("\"/>")
                    .append(dots);
        }
        return b.append("</svg>").toString();
    }

    /** One horizontal bar per figure (a file's own chart); values as text beside the bars. */
    static String bars(String file, String metric, List<Figure> figs) {
        int rowH = 15;
        int left = 300;
        int h = T + rowH * figs.size() + 20;
        double hi = figs.stream().mapToDouble(Figure::value).max().orElse(1);
        StringBuilder b = open("file", "data-file=\"" + Html.esc(file) + "\" data-metric=\"" + Html.esc(metric) + "\"", W + 160, h);
        for (int i = 0; i < figs.size(); i++) {
            Figure f = figs.get(i);
            double y = T + i * rowH;
            double len = hi > 0 ? (W + 160 - left - 90) * f.value() / hi : 0;
            String color = f.lantern() ? COLORS[0] : "#9aa5b1";
            b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s</text>", left - 6, y + 10,
                    Html.esc(trim(f.caseName() + " · " + f.impl(), 52))));
            b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s %s: %s %s</title></rect>",
                    left, y + 2, Math.max(0.5, len), rowH - 4, color, Html.esc(f.caseName()), Html.esc(f.impl()), fmt(f.value()), Html.esc(f.unit())));
            b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%s %s</text>", left + Math.max(0.5, len) + 4, y + 10,
                    fmt(f.value()), Html.esc(f.unit())));
        }
        return b.append("</svg>").toString();
    }

    /** A soak's reserved and allocated MiB over seconds (and fragmentation % on the right-hand scale). */
    static String soak(String file, List<TimelinePoint> tl) {
        double tMax = tl.stream().mapToDouble(TimelinePoint::seconds).max().orElse(1);
        double mib = tl.stream().mapToDouble(p -> Math.max(p.reservedBytes(), p.allocatedBytes())).max().orElse(1) / 1048576.0;
        double[] y = range(0, mib);
        StringBuilder b = open("soak", "data-file=\"" + Html.esc(file) + "\"", W, H);
        axes(b, y, "MiB");
        String[] names = {"reserved", "allocated", "fragmentation %"};
        for (int k = 0; k < 3; k++) {
            StringBuilder pts = new StringBuilder();
            for (TimelinePoint p : tl) {
                double v = k == 0 ? p.reservedBytes() / 1048576.0 : k == 1 ? p.allocatedBytes() / 1048576.0 : p.fragPct();
                if (!Double.isFinite(v)) {
                    continue;
                }
                double x = L + (W - L - R) * p.seconds() / Math.max(tMax, 1e-9);
                double yy = k == 2 ? T + (H - T - B) * (1 - v / 100.0) : ypos(v, y);
                pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, yy));
            }
            b.append("<polyline fill=\"none\" stroke=\"").append(COLORS[k]).append(k == 2 ? "\" stroke-dasharray=\"3 2" : "")
                    .append("\" stroke-width=\"1.5\" points=\"").append(pts.toString().trim()).append("\"><title>").append(names[k])
                    .append("</title></polyline>");
        }
        b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">seconds (0 to %s)</text>",
                (W + L) / 2, H - 8, fmt(tMax)));
        return b.append("</svg>").toString();
    }

    private static StringBuilder open(String kind, String attrs, int w, int h) {
        return new StringBuilder(String.format(Locale.ROOT,
                "<svg class=\"chart\" data-chart=\"%s\" %s xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">",
                kind, attrs, w, h, w, h));
    }

    private static void axes(StringBuilder b, double[] y, String unit) {
        b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", L, T, L, H - B));
        b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#444\"/>", L, H - B, W - R, H - B));
        for (int i = 0; i <= 4; i++) {
            double v = y[0] + (y[1] - y[0]) * i / 4;
            double yy = ypos(v, y);
            b.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>", L + 1, yy, W - R, yy));
            b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"end\">%s</text>", L - 4, yy + 3, fmt(v)));
        }
        b.append(String.format(Locale.ROOT, "<text x=\"12\" y=\"%d\" font-size=\"10\" transform=\"rotate(-90 12 %d)\" text-anchor=\"middle\">%s</text>",
                (T + H - B) / 2, (T + H - B) / 2, Html.esc(unit)));
    }

    /** A y range around [lo, hi] with 5 % room, never empty. */
    private static double[] range(double lo, double hi) {
        if (!(hi > lo)) {
            double pad = Math.abs(hi) > 0 ? Math.abs(hi) * 0.1 : 1;
            return new double[] {lo - pad, hi + pad};
        }
        double pad = (hi - lo) * 0.05;
        return new double[] {Math.max(lo >= 0 ? 0 : -Double.MAX_VALUE, lo - pad), hi + pad};
    }

    private static double ypos(double v, double[] y) {
        return T + (H - T - B) * (1 - (v - y[0]) / (y[1] - y[0]));
    }

    static String fmt(double v) {
        double a = Math.abs(v);
        if (a >= 1000) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        if (a >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        if (a >= 0.1) {
            return String.format(Locale.ROOT, "%.3f", v);
        }
        return String.format(Locale.ROOT, "%.4f", v);
    }

    private static String trim(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }
}
