package dev.lantern.engine;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.Verifier;
import dev.lantern.kernel.Target;
import dev.lantern.passes.Autocast;
import dev.lantern.passes.Canonicalize;
import dev.lantern.passes.Fuse;
import dev.lantern.passes.FuseAttention;
import dev.lantern.passes.LayoutNormalize;
import dev.lantern.passes.Partition;
import dev.lantern.passes.Pass;
import dev.lantern.passes.PlanMemory;
import dev.lantern.passes.VerifyPass;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;

/**
 * The pass pipeline, in order. Why this order:
 * <ol>
 * <li>canonicalize first, so every later rule matches one spelling (no transposes, no identities);
 * <li>verify before anything relies on types;
 * <li>layout-normalize before fusion, so views that readers take through strides cost nothing
 *     and the fusion rules see the final reader of each permute;
 * <li>fuse-attention before autocast, so that autocast sees one attention and runs all of it in
 *     the low dtype (rather than a bf16 GEMM, an f32 softmax and casts between the pieces);
 * <li>autocast (opt-in) before the other fusions, so that the casts it inserts are folded into
 *     GEMM outputs and norm outputs like any other elementwise neighbour;
 * <li>fuse: GEMM epilogues, then norms, then elementwise chains (each takes what the previous left);
 * <li>partition and plan-memory last: they read the final graph and change nothing in it.
 * </ol>
 */
public final class Pipeline {
    private final List<Pass> passes;
    private final boolean verifyEach;

    private Pipeline(List<Pass> passes, boolean verifyEach) {
        this.passes = List.copyOf(passes);
        this.verifyEach = verifyEach;
    }

    public static Pipeline standard(CompileOptions options) {
        Target target = options.kernelTarget();
        List<Pass> p = new ArrayList<>();
        p.add(new Canonicalize());
        p.add(new VerifyPass());
        p.add(new LayoutNormalize());
        if (options.fuse()) {
            p.add(new FuseAttention());
        }
        if (options.amp() != CompileOptions.Amp.NONE) {
            p.add(new Autocast(options.amp().dtype(), options.lowOutputs()));
        }
        if (options.fuse()) {
            // CUDA: the residual stream through C (BackendChoices.residualInGemm)
            p.add(new Fuse(target.arch().equals("cuda") && options.choices().residualInGemm()));
        }
        p.add(new Partition(target));
        p.add(new PlanMemory(target));
        return new Pipeline(p, options.verifyEach());
    }

    /** Any passes, in the given order (what {@code lantern opt --passes a,b} runs). */
    public static Pipeline of(List<Pass> passes, boolean verifyEach) {
        return new Pipeline(passes, verifyEach);
    }

    public List<Pass> passes() {
        return passes;
    }

    /** Runs every pass; {@code afterEach} sees each pass and the graph it returned. */
    public Graph run(Graph g, BiConsumer<Pass, Graph> afterEach) {
        return run(g, (p, in) -> { }, afterEach);
    }

    /** Runs every pass; {@code beforeEach} sees each pass and its input, {@code afterEach} its result. */
    public Graph run(Graph g, BiConsumer<Pass, Graph> beforeEach, BiConsumer<Pass, Graph> afterEach) {
        for (Pass p : passes) {
            beforeEach.accept(p, g);
            try (Span s = Tracing.span(p.name(), "pass")) {
                g = p.run(g);
                if (verifyEach) {
                    Verifier.verify(g, "after " + p.name());
                }
            }
            afterEach.accept(p, g);
        }
        return g;
    }

    public Graph run(Graph g) {
        return run(g, (p, r) -> { });
    }

    /** The IR after each pass, as {@code --dump-after-each} prints it. */
    public static String dumpHeader(Pass p) {
        return "# ----- after " + p.name() + ": " + p.summary() + "\n";
    }

    static String print(Graph g) {
        return IrPrinter.print(g);
    }
}
