package dev.lantern.engine;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrPrinter;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelTraffic;
import dev.lantern.kernel.Target;
import dev.lantern.passes.Autocast;
import dev.lantern.passes.FuseAttention;
import dev.lantern.passes.FusionCoverage;
import dev.lantern.passes.Partition;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.plan.MemoryPlanner;
import dev.lantern.trace.RuntimeCounters;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;

import java.util.ArrayList;
import java.util.List;

/**
 * Graph -> {@link CompiledModel}: runs {@link Pipeline#standard}, keeping the graph as it was just
 * before fusion (the op-by-op form that an eager run executes and that fusion coverage counts),
 * then partitions the result into kernels and plans the arena.
 */
public final class Compiler {
    private Compiler() {}

    public static CompiledModel compile(Graph g, CompileOptions options) {
        try (Span s = Tracing.span("compile", "compile")) {
            return compileTraced(g, options);
        }
    }

    private static CompiledModel compileTraced(Graph g, CompileOptions options) {
        Target target = options.kernelTarget();
        List<String> dumps = new ArrayList<>();
        Graph[] unfused = {null};
        Graph cur = Pipeline.standard(options).run(g,
                (p, in) -> {
                    if (p instanceof FuseAttention) {
                        unfused[0] = in; // the last op-by-op form: what eager runs and coverage counts
                    }
                },
                (p, out) -> {
                    if (options.dumpAfterEach()) {
                        dumps.add(Pipeline.dumpHeader(p) + IrPrinter.print(out) + p.dump(out));
                    }
                });
        // Without fusion the final graph is itself the op-by-op form.
        Graph before = !options.fuse() ? cur : unfused[0] == null ? g : unfused[0];
        if (options.fuse() && options.amp() != CompileOptions.Amp.NONE) {
            before = new Autocast(options.amp().dtype(), options.lowOutputs()).run(before);
        }
        Partition partition = new Partition(target);
        List<Kernel> kernels;
        MemoryPlan plan;
        long saved;
        try (Span s = Tracing.span("kernels and memory plan", "compile")) {
            kernels = partition.kernels(cur);
            plan = MemoryPlanner.plan(cur, kernels);
            saved = traffic(partition.kernels(before)) - traffic(kernels);
        }
        if (options.target().equals("cpu")) {
            // a CPU kernel is compiled here (lowered to its prepared Java kernel); CUDA kernels are counted by NVRTC's module cache
            RuntimeCounters.compiled(kernels.size());
        }
        return new CompiledModel(g, before, cur, kernels, plan, FusionCoverage.of(before, cur), saved, options, dumps);
    }

    /** Σ over kernels of the bytes each reads and writes once: a first-order memory-traffic estimate ({@link KernelTraffic}). */
    static long traffic(List<Kernel> kernels) {
        return KernelTraffic.bytes(kernels);
    }
}
