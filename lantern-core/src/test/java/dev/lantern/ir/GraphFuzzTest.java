package dev.lantern.ir;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.Pipeline;
import dev.lantern.passes.Passes;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzzes the IR with graphs built from the op specs ({@link RandomGraphs}), not only with mutated
 * text. A well-typed graph must parse back from its text, verify, go through every pass alone and
 * the standard pipeline (f32 and bf16 AMP) with every result round-tripping through the text
 * format, and, when small, compile and run on the CPU to within tolerance of the float64 reference.
 * The only refusal allowed is the CPU partition's of integer kernels. A hostile graph (edge values,
 * wrong declared types, odd strides) must either be refused with a {@link LanternException} or be
 * taken all the way, as a well-typed one (its values are not compared: f32 and float64 part ways at
 * edge values such as a softmax scale of 1e308). Anything else that escapes is a finding: an untyped
 * exception, a valid graph refused, an invalid one accepted (it then fails downstream), a wrong
 * result, and an input that takes over {@link #SLOW_SECONDS} of CPU (a hang).
 *
 * <p>In CI this runs the regression seeds under src/test/resources; {@code scripts/fuzz} fuzzes.
 */
class GraphFuzzTest {
    /** Outputs are compared with the reference only below this many elements per value (the reference is slow). */
    private static final long NUMERIC_LIMIT = 4096;

    /**
     * CPU seconds one graph of at most a dozen ops may take through everything: some 100x a normal
     * input's. A graph over it is a finding (a hang, or a pass that went super-linear). CPU time, not
     * wall time, so that a loaded machine does not make findings; a true hang never returns, and
     * scripts/fuzz's outer time limit counts it.
     */
    private static final double SLOW_SECONDS = 10;

    @FuzzTest(maxDuration = "30s")
    void fuzzGraphs(FuzzedDataProvider data) {
        boolean hostile = data.consumeBoolean();
        long seed = data.consumeInt();
        Graph g;
        try {
            g = RandomGraphs.build(data, hostile, 10);
        } catch (TypeException refusedWhereWritten) {
            if (!hostile) {
                throw refusedWhereWritten;
            }
            return; // an edge-value type (over the tensor limit, say) is refused as it is made
        }
        String text = IrPrinter.print(g);
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long t0 = mx.getCurrentThreadCpuTime();
        try {
            check(text, hostile, seed);
        } catch (RuntimeException | AssertionError e) {
            // name the graph: the finding is then readable without a debugger
            throw e instanceof LanternException l ? l : new IllegalStateException(e + "\n" + text, e);
        }
        double seconds = (mx.getCurrentThreadCpuTime() - t0) / 1e9;
        if (seconds > SLOW_SECONDS) {
            throw new AssertionError("hang: " + seconds + " CPU seconds for one graph\n" + text);
        }
    }

    private static void check(String text, boolean hostile, long seed) {
        Graph parsed;
        try {
            parsed = Verifier.verify(IrParser.parse(text));
        } catch (LanternException e) {
            if (hostile) {
                return; // a typed refusal of a bad graph
            }
            throw new AssertionError("a well-typed graph was refused:\n" + text, e);
        }
        assertEquals(text, IrPrinter.print(parsed), "print -> parse -> print");
        boolean floats = parsed.nodes().stream().allMatch(n -> n.type().dtype().isFloating() || onlyGatherIds(parsed, n));
        for (String name : Passes.all().keySet()) {
            try {
                GraphChecks.roundTrips(name, Passes.byName(name).run(parsed));
            } catch (LanternException e) {
                allowed(e, floats, text);
            }
        }
        boolean compiles = true;
        for (CompileOptions.Amp amp : CompileOptions.Amp.values()) {
            try {
                GraphChecks.roundTrips("standard " + amp, Pipeline.standard(CompileOptions.defaults().withAmp(amp)).run(parsed));
            } catch (LanternException e) {
                allowed(e, floats, text);
                compiles = false;
            }
        }
        boolean small = parsed.nodes().stream().allMatch(n -> n.type().shape().numel() <= NUMERIC_LIMIT);
        if (compiles && small && hostile) {
            GraphChecks.compiledRuns(parsed, seed);
        } else if (compiles && small) {
            boolean narrow = parsed.nodes().stream().anyMatch(n -> n.type().dtype().bytes() < 4 || n.attrs().toString().contains("cast_"));
            GraphChecks.compiledMatchesReferenceLoosely(parsed, seed, narrow ? 3e-2 : 1e-3);
        }
    }

    /** Whether {@code n} is read only as ids or targets (gather, scatter_add, cross_entropy), which kernels take as integers. */
    private static boolean onlyGatherIds(Graph g, Node n) {
        boolean read = false;
        for (Node u : g.nodes()) {
            for (int i = 0; i < u.inputs().size(); i++) {
                if (u.input(i).equals(n.name())) {
                    if (!dev.lantern.kernel.KernelLowering.readsIntegerIds(u.op(), i)) {
                        return false;
                    }
                    read = true;
                }
            }
        }
        return read && !g.outputs().contains(n.name());
    }

    /** A pass may refuse a graph only where the CPU has no kernel for it: integer or bool values. */
    private static void allowed(LanternException e, boolean floats, String text) {
        if (floats || !e.getMessage().startsWith("partition: ")) {
            throw new AssertionError("a pass refused a verified graph:\n" + text, e);
        }
    }
}
