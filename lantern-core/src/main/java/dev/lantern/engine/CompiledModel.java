package dev.lantern.engine;

import dev.lantern.ir.Graph;
import dev.lantern.ir.GraphHash;
import dev.lantern.ir.IrPrinter;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelDump;
import dev.lantern.passes.FusionCoverage;
import dev.lantern.plan.MemoryPlan;

import java.util.List;

/**
 * The result of compiling a graph: the optimised graph, its kernels in schedule order, the arena
 * plan, the fusion figures and (with {@code dumpAfterEach}) the IR after every pass.
 * {@link #cacheKey()} = SHA-256 of the source graph's hash and the options' hash.
 *
 * @param unfused             the graph an eager run executes: canonicalized (and autocast), not fused;
 *                            fusion coverage counts its ops
 * @param estimatedBytesSaved memory traffic (Σ bytes read + written by every kernel) of the graph
 *                            run op by op minus that of the fused kernels: fusion's own estimate
 */
public record CompiledModel(Graph source, Graph unfused, Graph graph, List<Kernel> kernels, MemoryPlan plan,
                           FusionCoverage coverage, long estimatedBytesSaved, CompileOptions options,
                           List<String> dumps) {
    public CompiledModel {
        kernels = List.copyOf(kernels);
        dumps = List.copyOf(dumps);
    }

    /** The storage (free views resolved to their base) of every graph output: values that outlive the forward. */
    public java.util.Set<String> outputStorage() {
        java.util.Set<String> s = new java.util.LinkedHashSet<>();
        for (String o : graph.outputs()) {
            s.add(dev.lantern.kernel.KernelLowering.storage(graph, o));
        }
        return s;
    }

    public double fusionCoverage() {
        return coverage.value();
    }

    public String cacheKey() {
        return GraphHash.sha256(GraphHash.of(source) + ";" + options.hash());
    }

    /** The optimised IR, the kernels and the plan, as text. */
    public String dump() {
        return IrPrinter.print(graph)
                + "# cache key " + cacheKey() + "  options " + options + "\n"
                + "# fusion coverage " + coverage + "; estimated traffic saved " + estimatedBytesSaved + " B\n"
                + KernelDump.print(kernels)
                + plan.dump();
    }
}
