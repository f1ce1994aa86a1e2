package dev.lantern.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layering the packages promise (issue 13), read from the source trees of every module: the
 * package dependency graph of the main sources (imports and fully qualified references in code)
 * has no cycle, lantern-cuda's packages only depend downwards, no main class grows over 400
 * lines beyond a named list of today's big files, and no library holds a command-line entry
 * point. Lives in lantern-cli because this is the module whose tests run beside every other
 * module's sources (the working directory is lantern-cli/, the repository root its parent).
 */
class PackageCyclesTest {
    static final int MAX_LINES = 400;

    /**
     * Main classes allowed over {@link #MAX_LINES} lines: none. Issue 13 split the six there were
     * (CudaSession, CudaLowering, CudaDriver, AttentionWgmmaRenderer, CachingAllocator, IrParser).
     * The list only shrinks: a class that falls under the limit is reported so that it can leave it.
     */
    static final Set<String> BIG = Set.of();

    /** Library modules: no {@code main} in their main sources (the commands live in lantern-cli). */
    static final List<String> LIBRARIES = List.of("lantern-core", "lantern-runtime", "lantern-cuda", "lantern-onnx");

    /**
     * lantern-cuda's layers, lowest first: a package may depend only on packages of a lower rank
     * (codegen renders text and knows no device; lower turns kernels into steps without the
     * driver; engine runs them).
     */
    static final Map<String, Integer> CUDA_RANK = Map.of(
            "dev.lantern.cuda.ffi", 0,
            "dev.lantern.cuda.codegen", 0,
            "dev.lantern.cuda.driver", 1,
            "dev.lantern.cuda.nvrtc", 2,
            "dev.lantern.cuda.blas", 2,
            "dev.lantern.cuda.doctor", 3,
            "dev.lantern.cuda.lower", 3,
            "dev.lantern.cuda.engine", 4,
            "dev.lantern.cuda.train", 5);

    private static final Pattern PACKAGE = Pattern.compile("(?m)^\\s*package\\s+([\\w.]+)\\s*;");
    private static final Pattern IMPORT = Pattern.compile("(?m)^\\s*import\\s+(?:static\\s+)?(dev\\.lantern\\.[\\w.*]+)\\s*;");
    /** {@code dev.lantern.x.y.Type}: the package is every lower-case component before the type. */
    private static final Pattern QUALIFIED = Pattern.compile("\\bdev\\.lantern(?:\\.[a-z_]\\w*)*(?=\\.[A-Z])");
    private static final Pattern MAIN = Pattern.compile("\\b(?:public\\s+static|static\\s+public)\\s+void\\s+main\\s*\\(");

    record Source(String module, Path path, String pkg, String fqn, int lines, String code) {}

    static List<Source> sources;

    @BeforeAll
    static void readSources() throws IOException {
        Path root = Path.of("").toAbsolutePath();
        while (root != null && !Files.isDirectory(root.resolve("lantern-core/src/main/java"))) {
            root = root.getParent();
        }
        assertTrue(root != null, "no lantern-core/src/main/java above " + Path.of("").toAbsolutePath());
        List<Source> all = new ArrayList<>();
        try (Stream<Path> modules = Files.list(root)) {
            for (Path module : modules.filter(p -> Files.isDirectory(p.resolve("src/main/java"))).sorted().toList()) {
                Path base = module.resolve("src/main/java");
                try (Stream<Path> files = Files.walk(base)) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                        all.add(read(module.getFileName().toString(), f));
                    }
                }
            }
        }
        sources = all;
        assertTrue(sources.size() > 100, "read only " + sources.size() + " main sources under " + root);
    }

    private static Source read(String module, Path f) {
        try {
            String text = Files.readString(f, StandardCharsets.UTF_8);
            Matcher m = PACKAGE.matcher(text);
            assertTrue(m.find(), f + " has no package line");
            String pkg = m.group(1);
            String name = f.getFileName().toString().replace(".java", "");
            return new Source(module, f, pkg, pkg + "." + name, (int) text.lines().count(), stripCommentsAndLiterals(text));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The package of each {@code dev.lantern} type that {@code s} imports or names in full. */
    static Set<String> dependencies(Source s) {
        Set<String> deps = new TreeSet<>();
        Matcher imp = IMPORT.matcher(s.code());
        while (imp.find()) {
            StringBuilder pkg = new StringBuilder();
            for (String part : imp.group(1).split("\\.")) {
                if (part.isEmpty() || !Character.isLowerCase(part.charAt(0))) {
                    break;
                }
                pkg.append(pkg.isEmpty() ? "" : ".").append(part);
            }
            deps.add(pkg.toString());
        }
        Matcher q = QUALIFIED.matcher(s.code());
        while (q.find()) {
            deps.add(q.group());
        }
        deps.remove(s.pkg());
        return deps;
    }

    /** package -> package it depends on -> the files that make the edge. */
    static Map<String, Map<String, Set<String>>> graph() {
        Map<String, Map<String, Set<String>>> g = new TreeMap<>();
        for (Source s : sources) {
            Map<String, Set<String>> out = g.computeIfAbsent(s.pkg(), k -> new TreeMap<>());
            for (String d : dependencies(s)) {
                out.computeIfAbsent(d, k -> new TreeSet<>()).add(s.path().getFileName().toString());
            }
        }
        return g;
    }

    @Test
    void packageGraphHasNoCycle() {
        Map<String, Map<String, Set<String>>> g = graph();
        List<List<String>> cycles = new ArrayList<>();
        for (Set<String> scc : stronglyConnected(g)) {
            if (scc.size() > 1) {
                cycles.add(cycleWithin(g, scc));
            }
        }
        StringBuilder why = new StringBuilder();
        for (List<String> c : cycles) {
            why.append("\ncycle:");
            for (int i = 0; i + 1 < c.size(); i++) {
                why.append("\n  ").append(c.get(i)).append(" -> ").append(c.get(i + 1))
                        .append("  (").append(String.join(", ", g.get(c.get(i)).get(c.get(i + 1)))).append(')');
            }
        }
        int edges = g.values().stream().mapToInt(m -> (int) m.keySet().stream().filter(g::containsKey).count()).sum();
        System.out.println("[layers] " + g.size() + " packages, " + edges + " dependencies between them, "
                + cycles.size() + " cycles" + why);
        assertTrue(cycles.isEmpty(), "package cycles:" + why);
    }

    @Test
    void cudaPackagesDependOnlyDownwards() {
        Map<String, Map<String, Set<String>>> g = graph();
        List<String> bad = new ArrayList<>();
        for (var e : g.entrySet()) {
            if (!e.getKey().startsWith("dev.lantern.cuda")) {
                continue;
            }
            Integer from = CUDA_RANK.get(e.getKey());
            if (from == null) {
                bad.add(e.getKey() + " is not one of lantern-cuda's layers " + new TreeSet<>(CUDA_RANK.keySet()));
                continue;
            }
            for (var d : e.getValue().entrySet()) {
                Integer to = CUDA_RANK.get(d.getKey());
                if (to != null && to >= from) {
                    bad.add(e.getKey() + " -> " + d.getKey() + " (" + String.join(", ", d.getValue()) + ")");
                }
            }
        }
        String layers = CUDA_RANK.entrySet().stream().sorted(Map.Entry.comparingByValue())
                .map(e -> e.getKey().substring("dev.lantern.cuda.".length()) + "=" + e.getValue()).toList().toString();
        assertEquals(List.of(), bad, "lantern-cuda layers, lowest first: " + layers);
    }

    @Test
    void noMainClassOverTheLimitBeyondTheNamedList() {
        Map<String, Integer> big = new TreeMap<>();
        List<String> over = new ArrayList<>();
        for (Source s : sources) {
            if (BIG.contains(s.fqn())) {
                big.put(s.fqn(), s.lines());
            } else if (s.lines() > MAX_LINES) {
                over.add(s.fqn() + " " + s.lines());
            }
        }
        StringBuilder report = new StringBuilder("[layers] allow-listed over " + MAX_LINES + " lines:");
        big.forEach((c, n) -> report.append("\n  ").append(c).append(' ').append(n)
                .append(n <= MAX_LINES ? "  (now under the limit: remove it from the list)" : ""));
        Set<String> gone = new TreeSet<>(BIG);
        gone.removeAll(big.keySet());
        gone.forEach(c -> report.append("\n  ").append(c).append(" (no longer exists: remove it from the list)"));
        System.out.println(report);
        assertEquals(List.of(), over, "main classes over " + MAX_LINES + " lines (split them; one concept per file)");
    }

    @Test
    void librariesHoldNoCommandLineEntryPoint() {
        List<String> mains = sources.stream()
                .filter(s -> LIBRARIES.contains(s.module()) && MAIN.matcher(s.code()).find())
                .map(s -> s.module() + ": " + s.fqn()).toList();
        assertEquals(List.of(), mains, "a main() belongs in lantern-cli (or in test sources for probes)");
        assertTrue(sources.stream().noneMatch(s -> s.pkg().equals("dev.lantern.cuda")),
                "the flat dev.lantern.cuda package is split into driver, nvrtc, blas, codegen, lower, engine");
    }

    /** Tarjan's strongly connected components over the packages that have sources. */
    static List<Set<String>> stronglyConnected(Map<String, Map<String, Set<String>>> g) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<Set<String>> out = new ArrayList<>();
        for (String v : g.keySet()) {
            if (!index.containsKey(v)) {
                strongConnect(v, g, index, low, stack, onStack, out);
            }
        }
        return out;
    }

    private static void strongConnect(String v, Map<String, Map<String, Set<String>>> g, Map<String, Integer> index,
                                      Map<String, Integer> low, Deque<String> stack, Set<String> onStack,
                                      List<Set<String>> out) {
        index.put(v, index.size());
        low.put(v, index.get(v));
        stack.push(v);
        onStack.add(v);
        for (String w : g.get(v).keySet()) {
            if (!g.containsKey(w)) {
                continue; // a package without main sources here (e.g. only in tests): no outgoing edges
            }
            if (!index.containsKey(w)) {
                strongConnect(w, g, index, low, stack, onStack, out);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            Set<String> scc = new TreeSet<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                scc.add(w);
            } while (!w.equals(v));
            out.add(scc);
        }
    }

    /** One shortest cycle through the first package of {@code scc}, staying inside it: a, b, ..., a. */
    static List<String> cycleWithin(Map<String, Map<String, Set<String>>> g, Set<String> scc) {
        String start = scc.iterator().next();
        Map<String, String> parent = new HashMap<>();
        Deque<String> queue = new ArrayDeque<>(List.of(start));
        while (!queue.isEmpty()) {
            String v = queue.poll();
            for (String w : g.get(v).keySet()) {
                if (!scc.contains(w)) {
                    continue;
                }
                if (w.equals(start)) {
                    List<String> path = new ArrayList<>(List.of(start));
                    for (String u = v; !u.equals(start); u = parent.get(u)) {
                        path.add(1, u);
                    }
                    path.add(start);
                    return path;
                }
                if (!parent.containsKey(w)) {
                    parent.put(w, v);
                    queue.add(w);
                }
            }
        }
        throw new IllegalStateException("no cycle in the component " + scc);
    }

    /**
     * {@code text} with comments and the contents of string, text-block and char literals blanked
     * (newlines kept), so that a package named in a comment or a message is not a dependency.
     */
    static String stripCommentsAndLiterals(String text) {
        StringBuilder b = new StringBuilder(text.length());
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == '/' && i + 1 < n && text.charAt(i + 1) == '/') {
                while (i < n && text.charAt(i) != '\n') {
                    i++;
                }
            } else if (c == '/' && i + 1 < n && text.charAt(i + 1) == '*') {
                int end = text.indexOf("*/", i + 2);
                end = end < 0 ? n : end + 2;
                blankKeepingNewlines(b, text, i, end);
                i = end;
            } else if (text.startsWith("\"\"\"", i)) {
                int end = i + 3;
                while (end < n && !text.startsWith("\"\"\"", end)) {
                    end += text.charAt(end) == '\\' ? 2 : 1;
                }
                end = Math.min(n, end + 3);
                blankKeepingNewlines(b, text, i, end);
                i = end;
            } else if (c == '"' || c == '\'') {
                int end = i + 1;
                while (end < n && text.charAt(end) != c && text.charAt(end) != '\n') {
                    end += text.charAt(end) == '\\' ? 2 : 1;
                }
                end = Math.min(n, end + 1);
                b.append(c).append(c);
                i = end;
            } else {
                b.append(c);
                i++;
            }
        }
        return b.toString();
    }

    private static void blankKeepingNewlines(StringBuilder b, String text, int from, int to) {
        for (int k = from; k < to; k++) {
            if (text.charAt(k) == '\n') {
                b.append('\n');
            }
        }
        b.append(' ');
    }

    @Test
    void stripperKeepsCodeAndDropsCommentsAndLiterals() {
        String src = "import dev.lantern.a.B; // dev.lantern.x.Y\n/* dev.lantern.z.W */ String s = \"dev.lantern.q.R\";"
                + " char c = '\"'; var t = \"\"\"\n dev.lantern.t.T \"\"\"; dev.lantern.k.K.f();";
        String code = stripCommentsAndLiterals(src);
        Source s = new Source("m", Path.of("X.java"), "dev.lantern.m", "dev.lantern.m.X", 2, code);
        assertEquals(Set.of("dev.lantern.a", "dev.lantern.k"), dependencies(s), code);
        assertEquals(src.lines().count(), code.lines().count(), "line structure kept");
    }
}
