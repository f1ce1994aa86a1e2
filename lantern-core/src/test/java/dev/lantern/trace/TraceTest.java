package dev.lantern.trace;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.engine.Feeds;
import dev.lantern.engine.Pipeline;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.kernel.Kernel;
import dev.lantern.passes.Pass;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.TrainOptions;
import dev.lantern.train.run.Trainer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Traces of a compile and of compiled CPU forwards and training steps, written to a file and read
 * back: well-formed complete events, each pass inside the compile, each forward's kernel events in
 * the compiled plan's order and names, every slice nested in its parent; tracing changes no result.
 */
class TraceTest {
    private static final BlockConfig BLOCK = BlockConfig.parse("1,16,32,2,64");

    @TempDir
    Path dir;

    @Test
    void compileAndForwardsTraceAsTheCompiledPlanRuns() throws IOException {
        Model model = TransformerBlock.build(BLOCK, DType.F32);
        Map<String, Tensor> params = model.parameters(7);
        Map<String, Tensor> inputs = Feeds.inputs(model.graph(), 7);
        CompileOptions options = CompileOptions.defaults();
        double[] untraced;
        try (CompiledCpuExecutor e = new CompiledCpuExecutor(Compiler.compile(model.graph(), options)).bind(params)) {
            untraced = e.run(inputs).values().iterator().next().toDoubles();
        }
        TraceRecorder rec = new TraceRecorder();
        CompiledModel compiled;
        double[] traced;
        try (Tracing.Installed t = Tracing.install(rec)) {
            compiled = Compiler.compile(model.graph(), options);
            try (CompiledCpuExecutor e = new CompiledCpuExecutor(compiled).bind(params)) {
                e.run(inputs);
                traced = e.run(inputs).values().iterator().next().toDoubles();
            }
        }
        assertFalse(Tracing.enabled(), "closing the install removes the recorder");
        assertArrayEquals(untraced, traced, 0.0, "tracing changes no result");

        Path file = dir.resolve("trace.json");
        rec.write(file);
        TraceFile tf = TraceFile.read(file);
        tf.assertNested();
        assertEquals(0, tf.dropped());

        List<TraceFile.Ev> compiles = tf.named("compile");
        assertEquals(1, compiles.size());
        List<String> passNames = Pipeline.standard(options).passes().stream().map(Pass::name).toList();
        List<TraceFile.Ev> passes = tf.within(compiles.getFirst(), "pass");
        assertEquals(passNames, passes.stream().map(TraceFile.Ev::name).toList(), "every pass once, in pipeline order, inside the compile");
        assertEquals(1, tf.within(compiles.getFirst(), "compile").stream().filter(e -> e.name().equals("kernels and memory plan")).count());

        List<String> planned = compiled.kernels().stream().filter(k -> k.output().shape().numel() > 0).map(Kernel::name).toList();
        assertTrue(planned.size() >= 5, "a block compiles to several kernels: " + planned);
        List<TraceFile.Ev> runs = tf.named("compiled run");
        assertEquals(2, runs.size(), "one event per forward");
        double kernelSum = 0;
        for (TraceFile.Ev run : runs) {
            List<TraceFile.Ev> kernels = tf.within(run, "kernel");
            assertEquals(planned, kernels.stream().map(TraceFile.Ev::name).toList(), "the plan's kernels, in order");
            for (int i = 1; i < kernels.size(); i++) {
                assertTrue(kernels.get(i).ts() >= kernels.get(i - 1).end() - 0.002, "kernels run one after another");
            }
            kernelSum += kernels.stream().mapToDouble(TraceFile.Ev::dur).sum();
            assertTrue(kernels.stream().mapToDouble(TraceFile.Ev::dur).sum() <= run.dur() + 0.01, "kernels fit in their forward");
        }
        assertTrue(kernelSum > 0);
        assertTrue(runs.getFirst().end() <= runs.get(1).ts() + 0.002, "forwards in order");
        assertTrue(compiles.getFirst().end() <= runs.getFirst().ts() + 0.002, "compile before the forwards");
        String thread = Thread.currentThread().getName();
        assertEquals(thread, tf.tracks().get(runs.getFirst().tid()), "host work on the thread that did it");
    }

    @Test
    void trainingStepsNestForwardBackwardAndOptimizer() throws IOException {
        TrainOptions o = TrainOptions.defaults().withThreads(1);
        TraceRecorder rec = new TraceRecorder();
        try (Tracing.Installed t = Tracing.install(rec);
             Trainer tr = new Trainer(LanguageModel.of(BLOCK, o.vocab(), o.seed()), o)) {
            tr.step();
            tr.step();
        }
        Path file = dir.resolve("train.json");
        rec.write(file);
        TraceFile tf = TraceFile.read(file);
        tf.assertNested();
        assertEquals(1, tf.named("differentiate").size());
        List<TraceFile.Ev> steps = tf.named("train step");
        assertEquals(2, steps.size());
        for (TraceFile.Ev s : steps) {
            List<String> inside = tf.within(s, "step").stream().map(TraceFile.Ev::name).toList();
            assertEquals(List.of("forward+backward", "optimizer"), inside);
            TraceFile.Ev fb = tf.within(s, "step").getFirst();
            assertEquals(1, tf.within(fb, "run").size(), "the compiled forward+backward inside its step");
            assertFalse(tf.within(fb, "kernel").isEmpty());
        }
    }

    @Test
    void writeReplacesAtomicallyAndABadPathIsATypedError() throws IOException {
        TraceRecorder rec = new TraceRecorder();
        try (Tracing.Installed t = Tracing.install(rec); Span s = Tracing.span("a \"quoted\"\nname", "host")) {
            assertTrue(Tracing.enabled());
        }
        Path file = dir.resolve("t.json");
        Files.writeString(file, "old");
        rec.write(file);
        assertEquals(List.of("a \"quoted\"\nname"), TraceFile.read(file).events().stream().map(TraceFile.Ev::name).toList());
        try (var listing = Files.list(dir)) {
            assertEquals(List.of(file), listing.toList(), "no temporary file left beside the trace");
        }
        TraceException e = assertThrows(TraceException.class, () -> rec.write(dir.resolve("missing/t.json")));
        assertFalse(e.getMessage().contains("\n"));
        assertTrue(e.getMessage().contains("missing"), e.getMessage());
        assertThrows(TraceException.class, () -> rec.write(dir), "a folder is no trace file");
    }

    @Test
    void untracedSpansRecordNothingAndInstallsNest() {
        assertNull(Tracing.current());
        assertSame(Span.NONE, Tracing.span("x", "host"));
        TraceRecorder outer = new TraceRecorder();
        TraceRecorder inner = new TraceRecorder();
        try (Tracing.Installed a = Tracing.install(outer)) {
            try (Tracing.Installed b = Tracing.install(inner)) {
                Tracing.span("in", "host").close();
            }
            assertSame(outer, Tracing.current());
            Tracing.span("out", "host").close();
        }
        assertNull(Tracing.current());
        assertEquals(List.of("in"), inner.events().stream().map(TraceEvent::name).toList());
        assertEquals(List.of("out"), outer.events().stream().map(TraceEvent::name).toList());
    }

    @Test
    void eventsPastTheCapAreCountedNotKept() throws IOException {
        TraceRecorder rec = new TraceRecorder(3);
        long track = rec.track("cuda stream 0");
        for (int i = 0; i < 5; i++) {
            rec.complete(track, "k" + i, "kernel", rec.origin() + i * 1000L, 500, Map.of("bytes", 1024L * i));
        }
        assertEquals(3, rec.events().size());
        assertEquals(2, rec.dropped());
        Path file = dir.resolve("cap.json");
        rec.write(file);
        TraceFile tf = TraceFile.read(file);
        assertEquals(2, tf.dropped());
        assertEquals("cuda stream 0", tf.tracks().get(track));
        assertEquals(2.0, tf.named("k2").getFirst().ts(), 1e-9, "2000 ns after the origin is 2 µs");
        assertEquals(0.5, tf.named("k2").getFirst().dur(), 1e-9);
    }
}
