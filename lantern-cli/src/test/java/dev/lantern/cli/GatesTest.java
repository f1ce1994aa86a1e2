package dev.lantern.cli;

import dev.lantern.bench.cpu.CpuTarget;
import dev.lantern.bench.cpu.EagerVsCompiled;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.runtime.soak.Soak;
import dev.lantern.runtime.soak.SoakOptions;
import dev.lantern.runtime.soak.SoakReport;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Each gate of .ci/gates shown failing on its bad case, and passing on a good one: runs that differ
 * by one ulp in strict mode, a compiled forward under the speedup floor or disagreeing with eager, a
 * stored results file over the limit, a leaking allocator user, too much fragmentation, and a module
 * that loads JNI or lacks its SBOM. The lines are the ones CI prints ({@code GATE name PASS|FAIL figure}).
 */
class GatesTest {
    @TempDir
    Path dir;

    static Map<String, Object> record(String sha) {
        return Map.of("graph_hash", "9f".repeat(32), "cache_key", "c", "kernel_keys", List.of("k0", "k1", "k2"),
                "autotune", Map.of("gemm.x", "1"), "threads", 1, "outputs", List.of(Map.of("name", "y", "sha256", sha)));
    }

    /** {@code lantern determinism --json}'s report for two runs with these outputs, as the command prints it. */
    static String report(Tensor first, Tensor second, boolean strict) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        DeterminismCommand.report(List.of(record("a"), record(first == second ? "a" : "b")), List.of(List.of(first), List.of(second)),
                strict, "cpu", "none", true, new PrintStream(out, true, StandardCharsets.UTF_8), err);
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void determinismFailsOnRunsOneUlpApartInStrictModeAndPassesOnIdenticalOnes() {
        Tensor a = Philox.normal(Tensor.allocate(DType.F32, Shape.of(2, 3, 4)), 11, 1f);
        Tensor b = Tensor.allocate(DType.F32, a.shape());
        java.lang.foreign.MemorySegment.copy(a.segment(), 0, b.segment(), 0, a.segment().byteSize());
        b.set(7, Math.nextUp(a.get(7)));

        GateResult bad = DeterminismGate.evaluate(report(a, b, true));
        assertFalse(bad.pass(), bad.line());
        assertTrue(bad.line().startsWith("GATE determinism FAIL 2 runs in separate JVMs"), bad.line());
        assertTrue(bad.line().contains("not bit-identical, first difference run=1 field=output where=y index=7 position=[0, 1, 3]"), bad.line());

        GateResult good = DeterminismGate.evaluate(report(a, a, true));
        assertTrue(good.pass(), good.line());
        assertTrue(good.line().contains("3 kernel keys"), good.line());
        // the same runs outside strict mode pass the tolerance, and the gate still refuses them: it needs strict mode
        GateResult loose = DeterminismGate.evaluate(report(a, b, false));
        assertFalse(loose.pass(), loose.line());
        assertTrue(loose.line().contains("not in strict mode"), loose.line());
    }

    static EagerVsCompiled.Result perf(double compiledMs, double eagerMs, double relErr) {
        return new EagerVsCompiled.Result("cpu-small", 10, 10, compiledMs, eagerMs, compiledMs, eagerMs, compiledMs, eagerMs, relErr);
    }

    @Test
    void performanceFailsUnderTheFloorOnADisagreementAndOnAStoredRegression() throws IOException {
        assertTrue(PerformanceGate.evaluate(perf(4.0, 20.0, 1e-7), 1.2, null, null).pass());
        GateResult slow = PerformanceGate.evaluate(perf(4.0, 4.4, 1e-7), 1.2, null, null);
        assertFalse(slow.pass());
        assertTrue(slow.line().startsWith("GATE performance FAIL cpu-small compiled 1.10x eager"), slow.line());
        GateResult wrong = PerformanceGate.evaluate(perf(4.0, 20.0, 3e-3), 1.2, null, null);
        assertFalse(wrong.pass());
        assertTrue(wrong.line().contains("the forwards disagree"), wrong.line());

        Path stored = ResultsComparisonTest.STORED;
        Path slower = dir.resolve("slower.json");
        Files.writeString(slower, Files.readString(stored).replace("\"ms\": 10.1885", "\"ms\": 11.5")); // decoder compiled, 12.9 % slower
        ResultsComparison.Outcome cmp = ResultsComparison.compare(slower, stored, 0.10, false);
        GateResult regressed = PerformanceGate.evaluate(perf(4.0, 20.0, 1e-7), 1.2, cmp, "slower.json vs stored");
        assertFalse(regressed.pass());
        assertTrue(regressed.line().contains("over the limit: decoder/lantern ms 10.19 -> 11.50 (+12.9%)"), regressed.line());
        // accepted with a reason for this pair of files: reported, not failed
        Path accepted = dir.resolve("accepted.tsv");
        String pair = "slower.json\t" + stored.getFileName() + "\t";
        Files.writeString(accepted, "# pair, figure, why\n" + pair + "decoder/lantern ms\ta test\n" + pair + "decoder eager/compiled\tthe same\n");
        GateResult waived = PerformanceGate.evaluate(perf(4.0, 20.0, 1e-7), 1.2,
                cmp.accepting(ResultsComparison.accepted(accepted, slower, stored)), "slower.json vs stored");
        assertTrue(waived.pass(), waived.line());
        assertTrue(waived.line().contains("accepted (with a reason) past the limit: decoder/lantern ms 10.19 -> 11.50 (+12.9%), "
                + "decoder eager/compiled 1.188 -> 1.052 (-11.4%)"), waived.line());
    }

    @Test
    void theMeasurementAgreesWithEagerAndFindsTheCompiledForwardFaster() {
        // two seconds of warm-up, as the gate's eight: with three forwards C2 had not compiled the compiled
        // forward's GEMM and attention tiles (eager runs one of them), and the compiled side lost 2 runs in 3.
        // Faster by the best of 7 interleaved rounds: on a busy 2-core CI box the median of 5 once had the
        // compiled forward at 7.24 ms against eager's 4.93 (its usual 3.5 against 4.9), in one run of five
        EagerVsCompiled.Result r = EagerVsCompiled.run(CpuTarget.block(BlockConfig.named("cpu-small"), 42), 7, 3, 2.0);
        assertTrue(r.relErr() < PerformanceGate.MAX_REL_ERR, "rel err " + r.relErr());
        assertTrue(r.compiledMs() > 0 && r.eagerMs() > 0, r.toString());
        assertTrue(r.compiledMinMs() < r.eagerMinMs(), "compiled best " + r.compiledMinMs() + " ms, eager best " + r.eagerMinMs()
                + " ms (medians " + r.compiledMs() + ", " + r.eagerMs() + ")");
    }

    @Test
    void memoryFailsOnALeakingAllocatorUserAndOnFragmentation() {
        MemoryGate.Leak clean = MemoryGate.leakCheck(3, 5_000, 0, false);
        MemoryGate.Leak cleanExpandable = MemoryGate.leakCheck(4, 5_000, 0, true);
        assertEquals(0, clean.liveBytes());
        assertEquals(0, cleanExpandable.liveBytes());
        MemoryGate.Leak leaking = MemoryGate.leakCheck(3, 5_000, 3, false); // three allocations never freed
        assertTrue(leaking.liveBytes() > 0, leaking.toString());

        SoakReport soak = Soak.run(SoakOptions.simOps(20_000, 1));
        GateResult good = MemoryGate.evaluate(soak, List.of(clean, cleanExpandable));
        assertTrue(good.pass(), good.line());
        GateResult leaked = MemoryGate.evaluate(soak, List.of(clean, leaking));
        assertFalse(leaked.pass());
        assertTrue(leaked.line().contains(leaking.liveBytes() + " live bytes after free and emptyCache: the random-shape check leaked"),
                leaked.line());
        SoakReport fragmented = new SoakReport(soak.ops(), 1, 20.0, 60, 10, 0, 0, 0, "d", "sim", 100, 1 << 20, 1);
        assertTrue(MemoryGate.evaluate(fragmented, List.of(clean)).line().endsWith("fragmentation over the limit"));
        SoakReport soakLeak = new SoakReport(soak.ops(), 1, 2.0, 60, 10, 4096, 0, 0, "d", "sim", 100, 1 << 20, 1);
        assertTrue(MemoryGate.evaluate(soakLeak, List.of(clean)).line().contains("4096 bytes leaked"));
        assertFalse(MemoryGate.evaluate(soakLeak, List.of(clean)).pass());
    }

    /** A root with one module whose main classes are {@code classes} and whose SBOM and licence report are there or not. */
    Path fakeRoot(String module, Path classFile, boolean sbom) throws IOException {
        Path root = dir.resolve("root-" + module);
        Path m = root.resolve(module);
        Files.createDirectories(m.resolve("target/classes/dev/lantern"));
        Files.writeString(m.resolve("pom.xml"), "<project/>");
        Files.copy(classFile, m.resolve("target/classes/dev/lantern").resolve(classFile.getFileName()));
        Files.createDirectories(m.resolve("target/generated-sources/license"));
        Files.writeString(m.resolve("target/generated-sources/license/THIRD-PARTY.txt"), "Lists of 0 third-party dependencies.\n");
        String bom = "{\"bomFormat\": \"CycloneDX\", \"metadata\": {\"component\": {\"name\": \"" + module + "\"}}}";
        if (sbom) {
            Files.writeString(m.resolve("target/" + module + "-sbom.json"), bom);
        }
        Files.createDirectories(root.resolve("target"));
        Files.writeString(root.resolve("target/lantern-sbom.json"), bom);
        return root;
    }

    @Test
    void securityFailsOnAJniLoadAMissingSbomAndAnAcceptedBadFixture() throws IOException {
        Path clean = JniScanTest.FIXTURES.resolve("JniFixture$Ffm.class");
        Path jni = JniScanTest.FIXTURES.resolve("JniFixture.class");
        assertTrue(SecurityGate.evaluate(fakeRoot("lantern-good", clean, true), null).pass());

        GateResult loads = SecurityGate.evaluate(fakeRoot("lantern-jni", jni, true), null);
        assertFalse(loads.pass());
        assertTrue(loads.line().contains("JNI: JniFixture.class: dev.lantern.cli.JniFixture.load calls java.lang.System.loadLibrary"), loads.line());

        GateResult noSbom = SecurityGate.evaluate(fakeRoot("lantern-nosbom", clean, false), null);
        assertFalse(noSbom.pass());
        assertTrue(noSbom.line().contains("no SBOM lantern-nosbom-sbom.json"), noSbom.line());

        // Maven's log of the fixtures with one rule missing: its fixture built, so the gate fails naming it
        Path log = dir.resolve("fixtures.log");
        Files.writeString(log, String.join("\n",
                "[ERROR] Failed to execute goal ...:enforce (enforce) on project unpinned-plugin: ",
                "[ERROR] Rule 2: org.apache.maven.enforcer.rules.RequirePluginVersions failed with message:",
                "[ERROR] Failed to execute goal ...:enforce (enforce) on project banned-dependency: ",
                "[ERROR] Rule 4: org.apache.maven.enforcer.rules.dependency.BannedDependencies failed with message:",
                "[ERROR] Failed to execute goal ...:add-third-party (licence-allow-list) on project disallowed-licence: "
                        + "There are some forbidden licenses used, please check your dependencies."));
        GateResult fixtures = SecurityGate.evaluate(fakeRoot("lantern-good2", clean, true), log);
        assertFalse(fixtures.pass());
        assertTrue(fixtures.line().contains("3/4 bad fixtures rejected: fixture range-version was not rejected"), fixtures.line());
    }

    @Test
    void aGateCommandLineIsCheckedBeforeAnythingRuns() {
        assertEquals(2, MainTest.run("gate").code());
        assertEquals(2, MainTest.run("gate", "speed").code());
        assertEquals(2, MainTest.run("gate", "performance", "--stored", "x.json").code());
        assertEquals(2, MainTest.run("gate", "memory", "--seconds", "0").code());
        assertEquals(2, MainTest.run("gate", "determinism", "--config", "no-such-block").code());
    }
}
