package dev.lantern.cli;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.IrParser;
import dev.lantern.kernel.Kernel;
import dev.lantern.weights.JsonParser;
import dev.lantern.weights.JsonValue;
import dev.lantern.weights.JsonValue.JsonArray;
import dev.lantern.weights.JsonValue.JsonNumber;
import dev.lantern.weights.JsonValue.JsonObject;
import dev.lantern.weights.JsonValue.JsonString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code --trace FILE} on {@code run}, {@code train} and {@code bench cpu} (the CPU backend): the
 * file is Chrome trace JSON whose kernel slices carry the compiled plan's kernel names and sit
 * inside their forwards, with the compile's passes inside the compile; bad paths are one usage line.
 */
class TraceCommandTest {
    @TempDir
    Path dir;

    record Ev(String name, String cat, double ts, double dur, long tid) {
        boolean contains(Ev o) {
            return o.tid == tid && o.ts >= ts - 0.002 && o.ts + o.dur <= ts + dur + 0.002;
        }
    }

    static List<Ev> read(Path file) throws IOException {
        JsonObject root = assertInstanceOf(JsonObject.class, JsonParser.parse(Files.readAllBytes(file), 16));
        List<Ev> out = new ArrayList<>();
        for (JsonValue v : assertInstanceOf(JsonArray.class, root.members().get("traceEvents")).elements()) {
            Map<String, JsonValue> m = assertInstanceOf(JsonObject.class, v).members();
            String ph = assertInstanceOf(JsonString.class, m.get("ph")).value();
            assertTrue(ph.equals("X") || ph.equals("M"), ph);
            assertInstanceOf(JsonNumber.class, m.get("pid"));
            long tid = assertInstanceOf(JsonNumber.class, m.get("tid")).longValueOrNull();
            if (ph.equals("X")) {
                out.add(new Ev(assertInstanceOf(JsonString.class, m.get("name")).value(), assertInstanceOf(JsonString.class, m.get("cat")).value(),
                        Double.parseDouble(assertInstanceOf(JsonNumber.class, m.get("ts")).literal()),
                        Double.parseDouble(assertInstanceOf(JsonNumber.class, m.get("dur")).literal()), tid));
            }
        }
        return out;
    }

    static List<Ev> within(List<Ev> all, Ev outer, String cat) {
        return all.stream().filter(e -> e != outer && e.cat().equals(cat) && outer.contains(e))
                .sorted(java.util.Comparator.comparingDouble(Ev::ts)).toList();
    }

    @Test
    void runTracesTheCompileAndEveryForwardsKernelsByThePlansNames() throws IOException {
        Path ir = Path.of("../examples/mlp-softmax.ir");
        Path trace = dir.resolve("run.json");
        MainTest.Run r = MainTest.run("run", ir.toString(), "--device", "cpu", "--mode", "compiled", "--runs", "3", "--trace", trace.toString());
        assertEquals(0, r.code(), r.err());
        assertTrue(r.err().contains("lantern run: trace written to " + trace), r.err());
        List<Ev> ev = read(trace);
        List<String> plan = Compiler.compile(IrParser.parse(Files.readString(ir)), CompileOptions.defaults().withTarget("cpu")).kernels().stream()
                .map(Kernel::name).toList();
        List<Ev> forwards = ev.stream().filter(e -> e.name().equals("forward")).toList();
        assertEquals(3, forwards.size(), "one slice per timed forward");
        for (Ev f : forwards) {
            assertEquals(plan, within(ev, f, "kernel").stream().map(Ev::name).toList(), "the compiled plan's kernels in each forward");
        }
        Ev compile = ev.stream().filter(e -> e.name().equals("compile")).findFirst().orElseThrow();
        assertTrue(within(ev, compile, "pass").stream().map(Ev::name).toList().containsAll(List.of("canonicalize", "fuse", "partition")),
                "the passes inside the compile");
        assertTrue(ev.stream().anyMatch(e -> e.name().equals("warm-up forward")));
    }

    @Test
    void trainTracesEachStepWithItsForwardBackwardAndOptimizer() throws IOException {
        Path trace = dir.resolve("train.json");
        MainTest.Run r = MainTest.run("train", "--shape", "1,16,32,2,64", "--vocab", "16", "--steps", "3", "--trace", trace.toString());
        assertEquals(0, r.code(), r.err());
        List<Ev> ev = read(trace);
        List<Ev> steps = ev.stream().filter(e -> e.name().equals("train step")).toList();
        assertEquals(3, steps.size());
        for (Ev s : steps) {
            assertEquals(List.of("forward+backward", "optimizer"), within(ev, s, "step").stream().map(Ev::name).toList());
            assertFalse(within(ev, s, "kernel").isEmpty());
        }
    }

    @Test
    void benchCpuTracesItsProfiledForwardsOnly() throws IOException {
        Path trace = dir.resolve("bench.json");
        MainTest.Run r = MainTest.run("bench", "cpu", "--shape", "1,16,32,2,64", "--rounds", "2", "--warmups", "1",
                "--out", dir.resolve("bench-out.json").toString(), "--trace", trace.toString());
        assertEquals(0, r.code(), r.err());
        List<Ev> ev = read(trace);
        List<Ev> profiled = ev.stream().filter(e -> e.name().equals("profiled forward")).toList();
        assertEquals(2, profiled.size(), "the timed rounds are untraced, the profiled ones traced");
        long runs = ev.stream().filter(e -> e.name().equals("compiled run")).count();
        assertEquals(2, runs, "no other forward was traced");
        assertFalse(within(ev, profiled.getFirst(), "kernel").isEmpty());
        assertEquals(1, ev.stream().filter(e -> e.name().equals("compile")).count());
    }

    @ParameterizedTest
    @ValueSource(strings = {"run", "train", "bench cpu", "bench macro"})
    void aTraceInAMissingFolderOrOnAFolderIsOneUsageLine(String command) {
        List<String> base = new ArrayList<>(List.of(command.split(" ")));
        if (command.equals("run")) {
            base.add("../examples/mlp-softmax.ir");
        }
        for (String bad : List.of(dir.resolve("no/such/t.json").toString(), dir.toString())) {
            List<String> args = new ArrayList<>(base);
            args.addAll(List.of("--trace", bad));
            MainTest.Run r = MainTest.run(args.toArray(String[]::new));
            assertEquals(2, r.code(), r.err());
            assertTrue(r.err().contains("--trace"), r.err());
            assertEquals(1, r.err().strip().lines().count(), r.err());
        }
    }

    @Test
    void benchModelRefusesTrace() {
        MainTest.Run r = MainTest.run("bench", "model", "--model", "../examples", "--trace", dir.resolve("t.json").toString());
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains("--trace applies to bench macro, micro and cpu"), r.err());
    }
}
