package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Verifier;
import dev.lantern.kernel.Target;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.plan.MemoryPlanner;

/**
 * plan-memory: buffer lifetimes from the kernel order of {@link Partition}, offsets in one arena by
 * interval packing ({@link MemoryPlanner} states the algorithm). The graph is returned unchanged;
 * the plan is what {@link #dump} shows.
 */
public final class PlanMemory implements Pass {
    private final Partition partition;

    public PlanMemory(Target target) {
        this.partition = new Partition(target);
    }

    @Override
    public String name() {
        return "plan-memory";
    }

    @Override
    public String summary() {
        return "lifetimes from the kernel order; one arena by best-fit interval packing; peak, lower bound, naive";
    }

    @Override
    public Graph run(Graph g) {
        plan(g);
        return g;
    }

    public MemoryPlan plan(Graph g) {
        Verifier.verify(g, name());
        return MemoryPlanner.plan(g, partition.kernels(g));
    }

    @Override
    public String dump(Graph result) {
        return plan(result).dump();
    }
}
