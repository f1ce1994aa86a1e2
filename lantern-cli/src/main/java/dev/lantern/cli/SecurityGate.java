package dev.lantern.cli;

import dev.lantern.ir.LanternException;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code lantern gate security}: what the build's supply-chain checks left behind, read after
 * {@code ./lantern test} (which runs them: the enforcer rules at validate, the licence allow-list at
 * verify, the SBOMs at package; a failed rule fails the build before this gate). It checks that
 * <ul>
 * <li>no main class of any module loads a JNI library ({@link JniScan});</li>
 * <li>every module has its CycloneDX SBOM and the root the aggregate one, and the CLI's lists every
 *     jar of the CLI distribution (lantern-cli/target/lib);</li>
 * <li>the licence allow-list ran for every module (its THIRD-PARTY.txt is there);</li>
 * <li>with {@code --fixtures-log FILE}, Maven's log of the bad-case fixtures
 *     (.ci/fixtures/supply-chain, built with {@code -fae}) shows each rule rejecting its case.</li>
 * </ul>
 */
final class SecurityGate {
    static final String USAGE = "gate security [--root DIR] [--fixtures-log FILE]";

    /** Each fixture module, and the text of Maven's log that shows its rule rejecting it. */
    static final List<List<String>> FIXTURES = List.of(
            List.of("unpinned-plugin", "RequirePluginVersions failed"),
            List.of("banned-dependency", "BannedDependencies failed"),
            List.of("range-version", "BanDynamicVersions failed"),
            List.of("disallowed-licence", "There are some forbidden licenses used"));

    private SecurityGate() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("gate security", argv, Set.of(), Set.of("root", "fixtures-log")).noPositional("gate security");
        Path root = Path.of(a.get("root", ".")).toAbsolutePath().normalize();
        Path log = a.get("fixtures-log", null) == null ? null : Path.of(a.get("fixtures-log", null));
        GateResult g = evaluate(root, log);
        out.println(g.line());
        return g.exitCode();
    }

    static GateResult evaluate(Path root, Path fixturesLog) {
        List<Path> modules = modules(root);
        List<String> problems = new ArrayList<>();
        JniScan.Report jni = JniScan.scan(modules.stream().map(m -> m.resolve("target/classes")).toList());
        jni.findings().stream().limit(3).forEach(f -> problems.add("JNI: " + f));
        if (jni.findings().size() > 3) {
            problems.add("and " + (jni.findings().size() - 3) + " more JNI findings");
        }
        int sboms = 0;
        for (Path m : modules) {
            Path sbom = m.resolve("target").resolve(m.getFileName() + "-sbom.json");
            if (components(sbom, problems) != null) {
                sboms++;
            }
            if (!Files.isRegularFile(m.resolve("target/generated-sources/license/THIRD-PARTY.txt"))) {
                problems.add("no licence report for " + m.getFileName() + " (the allow-list did not run: ./lantern test runs it)");
            }
        }
        if (components(root.resolve("target/lantern-sbom.json"), problems) != null) {
            sboms++;
        }
        Set<String> cli = components(root.resolve("lantern-cli/target/lantern-cli-sbom.json"), new ArrayList<>());
        int jars = 0;
        if (cli != null) {
            for (Path jar : list(root.resolve("lantern-cli/target/lib"))) {
                jars++;
                if (!cli.contains(jar.getFileName().toString())) {
                    problems.add("the CLI's SBOM does not list " + jar.getFileName());
                }
            }
        }
        int rejected = 0;
        if (fixturesLog != null) {
            String text;
            try {
                text = Files.readString(fixturesLog);
            } catch (IOException e) {
                throw new LanternException("gate security: cannot read " + fixturesLog + ": " + TextFiles.reason(e), e);
            }
            for (List<String> f : FIXTURES) {
                if (text.contains(f.get(1)) && text.contains("on project " + f.getFirst())) {
                    rejected++;
                } else {
                    problems.add("fixture " + f.getFirst() + " was not rejected (expected: " + f.get(1) + ")");
                }
            }
        }
        String figure = String.format("JNI: %d loads in %d main classes of %d modules; %d SBOMs (the CLI's lists all %d jars "
                        + "of target/lib); licence allow-list ran for %d modules%s",
                jni.findings().size(), jni.classes(), modules.size(), sboms, jars, modules.size(),
                fixturesLog == null ? "" : "; " + rejected + "/" + FIXTURES.size() + " bad fixtures rejected");
        return new GateResult("security", problems.isEmpty(), figure + (problems.isEmpty() ? "" : ": " + String.join("; ", problems)));
    }

    /** The modules: folders under root named lantern-* with a pom.xml. */
    static List<Path> modules(Path root) {
        List<Path> out = list(root).stream().filter(p -> p.getFileName().toString().startsWith("lantern-")
                && Files.isRegularFile(p.resolve("pom.xml"))).toList();
        if (out.isEmpty()) {
            throw new LanternException("gate security: no lantern-* modules under " + root);
        }
        return out;
    }

    /** An SBOM's components as {@code name-version.jar}; null (and a problem) when it is missing, unreadable or empty. */
    static Set<String> components(Path sbom, List<String> problems) {
        if (!Files.isRegularFile(sbom)) {
            problems.add("no SBOM " + sbom.getFileName() + " (./lantern test writes it)");
            return null;
        }
        try {
            JsonValue doc = JsonParser.parse(Files.readAllBytes(sbom), 64);
            if (!(doc instanceof JsonValue.JsonObject o) || !(o.members().get("bomFormat") instanceof JsonValue.JsonString f)
                    || !f.value().equals("CycloneDX") || !(o.members().get("metadata") instanceof JsonValue.JsonObject meta)
                    || !(meta.members().get("component") instanceof JsonValue.JsonObject)) {
                problems.add(sbom.getFileName() + " is not a CycloneDX SBOM of a component");
                return null;
            }
            // a module without dependencies (lantern-core) has no components list
            List<JsonValue> comps = o.members().get("components") instanceof JsonValue.JsonArray arr ? arr.elements() : List.of();
            Set<String> names = new HashSet<>();
            for (JsonValue c : comps) {
                if (c instanceof JsonValue.JsonObject co && co.members().get("name") instanceof JsonValue.JsonString n
                        && co.members().get("version") instanceof JsonValue.JsonString v) {
                    names.add(n.value() + "-" + v.value() + ".jar");
                }
            }
            return names;
        } catch (IOException | LanternException e) {
            problems.add("cannot read " + sbom.getFileName() + ": " + e.getMessage());
            return null;
        }
    }

    private static List<Path> list(Path dir) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        } catch (IOException e) {
            throw new LanternException("gate security: cannot list " + dir + ": " + TextFiles.reason(e), e);
        }
    }
}
