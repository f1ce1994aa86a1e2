package dev.lantern.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The report as one static HTML page (inline CSS and SVG, no script, nothing fetched): the
 * regression alerts, then a view per machine (GPU model or CPU) with each benchmark's figures over
 * commits, Lantern's lines solid and its peers' (PyTorch, ONNX Runtime) dashed beside them, then
 * every file of that machine with its own chart, kernel tables and soak timeline; last, the files
 * that could not be read and why.
 */
public final class ReportHtml {
    private ReportHtml() {}

    public static String render(String title, List<ResultFile> files, CommitOrder order) {
        StringBuilder b = new StringBuilder(1 << 20);
        b.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>").append(Html.esc(title)).append("</title>\n<style>")
                .append(CSS).append("</style></head>\n<body>\n<h1>").append(Html.esc(title)).append("</h1>\n");
        List<String> machines = new ArrayList<>(new TreeSet<>(files.stream().filter(ResultFile::readable).map(ResultFile::machine).toList()));
        long unreadable = files.stream().filter(f -> !f.readable()).count();
        long texts = files.stream().filter(f -> f.kind().equals("text")).count();
        b.append("<p class=\"summary\">").append(files.size()).append(" files: ").append(files.size() - unreadable - texts)
                .append(" with figures, ").append(texts).append(" text, <a href=\"#unreadable\">").append(unreadable).append(" not read</a>. Machines: ");
        for (String m : machines) {
            b.append("<a class=\"nav\" href=\"#").append(Html.id("machine", m)).append("\">").append(Html.esc(m)).append("</a> ");
        }
        b.append("</p>\n");

        Map<String, Map<String, List<Trends.Series>>> trends = new LinkedHashMap<>();
        List<Trends.Regression> regressions = new ArrayList<>();
        for (String m : machines) {
            Map<String, List<Trends.Series>> byCase = Trends.byCase(files, m, order);
            trends.put(m, byCase);
            byCase.values().forEach(list -> list.forEach(s -> regressions.addAll(Trends.regressions(s))));
        }
        alerts(b, regressions);
        for (String m : machines) {
            machine(b, m, files, trends.get(m), regressions, order);
        }
        b.append("<section id=\"unreadable\"><h2>Files not read</h2>");
        if (unreadable == 0) {
            b.append("<p>None: every file was read.</p>");
        } else {
            b.append("<ul>");
            for (ResultFile f : files) {
                if (!f.readable()) {
                    b.append("<li class=\"unreadable\" data-file=\"").append(Html.esc(f.path())).append("\"><code>").append(Html.esc(f.path()))
                            .append("</code>: ").append(Html.esc(f.problem())).append("</li>");
                }
            }
            b.append("</ul>");
        }
        return b.append("</section>\n</body></html>\n").toString();
    }

    private static void alerts(StringBuilder b, List<Trends.Regression> regressions) {
        java.util.Comparator<Trends.Regression> worst = (x, y) -> Double.compare(y.pct(), x.pct());
        List<Trends.Regression> ours = regressions.stream().filter(r -> r.series().lantern()).sorted(worst).toList();
        List<Trends.Regression> now = ours.stream().filter(ReportHtml::latest).toList();
        List<Trends.Regression> earlier = ours.stream().filter(r -> !latest(r)).toList();
        List<Trends.Regression> peers = regressions.stream().filter(r -> !r.series().lantern()).sorted(worst).toList();
        b.append("<section id=\"alerts\"><h2>Regression alerts</h2><p>A figure more than ")
                .append(String.format(Locale.ROOT, "%.0f", Trends.THRESHOLD * 100))
                .append(" % worse than the one before it in its series (same machine, case, implementation). <b>")
                .append(now.size()).append(" standing</b> (the series' latest figure), ").append(earlier.size())
                .append(" earlier in Lantern's history, ").append(peers.size()).append(" in its peers'.</p>");
        alertTable(b, now, "alert");
        if (!earlier.isEmpty()) {
            b.append("<details><summary>Earlier regressions of Lantern's (").append(earlier.size()).append(", later runs may have recovered)</summary>");
            alertTable(b, earlier, "alert earlier");
            b.append("</details>");
        }
        if (!peers.isEmpty()) {
            b.append("<details><summary>Peers' (PyTorch, ONNX Runtime: the other side's noise, not ours; ").append(peers.size()).append(")</summary>");
            alertTable(b, peers, "peer-alert");
            b.append("</details>");
        }
        b.append("</section>\n");
    }

    /** Whether the regression's later figure is its series' last: the regression still stands. */
    static boolean latest(Trends.Regression r) {
        return r.after().equals(r.series().points().getLast());
    }

    private static void alertTable(StringBuilder b, List<Trends.Regression> list, String cls) {
        if (list.isEmpty()) {
            b.append("<p>None.</p>");
            return;
        }
        b.append("<table class=\"alerts\"><tr><th>machine</th><th>case</th><th>impl</th><th>before</th><th>after</th><th>worse</th><th>files</th></tr>");
        for (Trends.Regression r : list) {
            Trends.Series s = r.series();
            b.append("<tr class=\"").append(cls).append("\"><td>").append(Html.esc(s.machine())).append("</td><td>").append(Html.esc(s.caseName()))
                    .append("</td><td>").append(Html.esc(s.impl())).append("</td><td>").append(Svg.fmt(r.before().value())).append(' ')
                    .append(Html.esc(s.unit())).append(" @").append(Html.esc(r.before().commit())).append("</td><td>").append(Svg.fmt(r.after().value()))
                    .append(' ').append(Html.esc(s.unit())).append(" @").append(Html.esc(r.after().commit())).append("</td><td class=\"bad\">+")
                    .append(String.format(Locale.ROOT, "%.1f %%", r.pct())).append("</td><td><small>").append(Html.esc(r.before().file()))
                    .append(" → ").append(Html.esc(r.after().file())).append("</small></td></tr>");
        }
        b.append("</table>");
    }

    private static void machine(StringBuilder b, String m, List<ResultFile> files, Map<String, List<Trends.Series>> byCase,
            List<Trends.Regression> regressions, CommitOrder order) {
        b.append("<section class=\"machine\" id=\"").append(Html.id("machine", m)).append("\" data-machine=\"").append(Html.esc(m))
                .append("\"><h2>").append(Html.esc(m)).append("</h2>\n");
        List<ResultFile> runs = Trends.runs(files, m, order);
        List<String> labels = runs.stream().map(ResultFile::commit).toList();
        b.append("<h3>Figures over commits</h3><p>").append(runs.size())
                .append(order.known() ? " runs in date order, a day's in commit order." : " runs in date order (no git history: a day's in file order).")
                .append(" Solid: Lantern; dashed: PyTorch / ONNX Runtime from the same run. Hover a point for its file.</p><div class=\"grid\">");
        int once = 0;
        for (Map.Entry<String, List<Trends.Series>> c : byCase.entrySet()) {
            long distinctRuns = c.getValue().stream().flatMap(s -> s.points().stream()).mapToInt(Trends.Point::run).distinct().count();
            if (distinctRuns < 2) {
                once++;
                continue;
            }
            boolean alert = regressions.stream().anyMatch(r -> r.series().lantern() && r.series().machine().equals(m)
                    && r.series().caseName().equals(c.getKey()));
            b.append("<figure class=\"trend").append(alert ? " has-alert" : "").append("\"><figcaption><b>").append(Html.esc(c.getKey())).append("</b>")
                    .append(alert ? " <span class=\"bad\">regression</span>" : "").append("<br>");
            for (int i = 0; i < c.getValue().size(); i++) {
                Trends.Series s = c.getValue().get(i);
                b.append("<span class=\"key\"><i style=\"background:").append(Svg.COLORS[i % Svg.COLORS.length]).append("\"></i>")
                        .append(Html.esc(s.impl())).append("</span> ");
            }
            b.append("</figcaption>").append(Svg.lines(c.getKey(), c.getValue(), labels, caseRegressions(regressions, m, c.getKey()))).append("</figure>\n");
        }
        b.append("</div>");
        if (once > 0) {
            b.append("<p>").append(once).append(" cases measured in one run only: their figures are in the files below.</p>");
        }
        b.append("<h3>Files</h3>\n");
        for (ResultFile f : files) {
            if (f.machine().equals(m) && f.readable()) {
                file(b, f);
            }
        }
        b.append("</section>\n");
    }

    private static List<Trends.Regression> caseRegressions(List<Trends.Regression> all, String machine, String caseName) {
        return all.stream().filter(r -> r.series().machine().equals(machine) && r.series().caseName().equals(caseName)).toList();
    }

    private static void file(StringBuilder b, ResultFile f) {
        if (f.kind().equals("text")) {
            b.append("<details class=\"text\" data-file=\"").append(Html.esc(f.path())).append("\"><summary><code>").append(Html.esc(f.path()))
                    .append("</code> (text)</summary><pre>").append(Html.esc(f.text())).append("</pre></details>\n");
            return;
        }
        b.append("<section class=\"file\" id=\"").append(Html.id("file", f.path())).append("\" data-file=\"").append(Html.esc(f.path()))
                .append("\"><h4><code>").append(Html.esc(f.path())).append("</code></h4><p class=\"meta\">").append(Html.esc(f.kind()))
                .append(", commit ").append(Html.esc(f.commit())).append(", ").append(Html.esc(f.date().isEmpty() ? "no date" : f.date()))
                .append(", ").append(f.figures().size()).append(" figures").append(f.kernels().isEmpty() ? "" : ", " + f.kernels().size() + " kernel rows")
                .append("</p>");
        Map<String, List<Figure>> byMetric = new LinkedHashMap<>();
        f.figures().forEach(g -> byMetric.computeIfAbsent(g.metric(), k -> new ArrayList<>()).add(g));
        for (Map.Entry<String, List<Figure>> e : byMetric.entrySet()) {
            b.append(Svg.bars(f.path(), e.getKey(), e.getValue()));
        }
        if (!f.timeline().isEmpty()) {
            b.append("<p>Allocator memory over the soak: blue reserved, red allocated (MiB, left scale); green dashed fragmentation % (0–100 over the same height).</p>")
                    .append(Svg.soak(f.path(), f.timeline()));
        }
        Map<String, List<KernelRow>> groups = new LinkedHashMap<>();
        f.kernels().forEach(k -> groups.computeIfAbsent(k.caseName() + " · " + k.impl(), x -> new ArrayList<>()).add(k));
        for (Map.Entry<String, List<KernelRow>> g : groups.entrySet()) {
            double total = g.getValue().stream().mapToDouble(KernelRow::ms).filter(Double::isFinite).sum();
            b.append("<details class=\"kernels\"><summary>Kernel table: ").append(Html.esc(g.getKey())).append(" (").append(g.getValue().size())
                    .append(" steps, ").append(Svg.fmt(total)).append(" ms)</summary><table class=\"kernels\"><tr><th>step</th><th>ms</th><th>share</th>"
                    + "<th>occupancy %</th><th>DRAM GB/s</th></tr>");
            for (KernelRow k : g.getValue()) {
                b.append("<tr><td><code>").append(Html.esc(k.op())).append("</code></td><td>").append(cell(k.ms())).append("</td><td>")
                        .append(total > 0 && Double.isFinite(k.ms()) ? String.format(Locale.ROOT, "%.1f %%", 100 * k.ms() / total) : "")
                        .append("</td><td>").append(cell(k.occupancyPct())).append("</td><td>").append(cell(k.dramGbps())).append("</td></tr>");
            }
            b.append("</table></details>");
        }
        b.append("</section>\n");
    }

    private static String cell(double v) {
        return Double.isFinite(v) ? Svg.fmt(v) : "–";
    }

    private static final String CSS = """
            body{font:14px/1.4 system-ui,sans-serif;margin:16px 24px;color:#1d2630;background:#fbfbfc}
            h1{font-size:22px;margin:4px 0}h2{border-bottom:2px solid #d0d7de;padding-bottom:3px;margin-top:28px}
            h3{margin:18px 0 6px}h4{margin:12px 0 2px}a.nav{margin-right:10px}
            .grid{display:flex;flex-wrap:wrap;gap:10px}
            figure.trend{margin:0;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:6px}
            figure.has-alert{border-color:#d62728}
            figcaption{font-size:12px;max-width:560px}.key{white-space:nowrap;margin-right:6px}
            .key i{display:inline-block;width:10px;height:10px;margin-right:3px;vertical-align:middle}
            section.file{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:4px 10px;margin:8px 0}
            .meta{color:#57606a;margin:0 0 4px}.bad{color:#d62728;font-weight:600}
            table{border-collapse:collapse;font-size:12px;margin:4px 0}td,th{border:1px solid #d0d7de;padding:2px 6px;text-align:left}
            pre{font-size:11px;overflow:auto;max-height:300px}
            """;
}
