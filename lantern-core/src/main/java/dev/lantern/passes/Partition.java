package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Verifier;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelDump;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.kernel.SavedLse;
import dev.lantern.kernel.Target;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * partition: one kernel per fused group. After fusion every group is one node, so the algorithm is
 * a walk in graph order (which is a valid schedule): each node that is neither a source nor a free
 * view becomes a {@link Kernel} described by {@link KernelLowering}, except an attention_lse that its
 * forward attention's kernel writes on the side ({@link SavedLse}, targets that do). The graph is returned
 * unchanged; a node that no kernel computes, or a kernel on a non-floating dtype, fails here with
 * the node, before anything runs.
 */
public final class Partition implements Pass {
    private final Target target;

    public Partition(Target target) {
        this.target = target;
    }

    @Override
    public String name() {
        return "partition";
    }

    @Override
    public String summary() {
        return "one kernel per fused group, in graph order, with loop nest, tiles, operands and cache key";
    }

    @Override
    public Graph run(Graph g) {
        kernels(g);
        return g;
    }

    public List<Kernel> kernels(Graph g) {
        Verifier.verify(g, name());
        List<Kernel> out = new ArrayList<>();
        // a training step's attention_lse is written by its forward's kernel where the target's kernels can
        Map<String, Node> savedLse = target.savesAttentionLse() ? SavedLse.of(g) : Map.of();
        Set<String> served = new HashSet<>();
        savedLse.values().forEach(l -> served.add(l.name()));
        for (Node n : g.nodes()) {
            if (KernelLowering.isFree(n, g) || served.contains(n.name())) {
                continue;
            }
            if (!KernelLowering.supports(n.op())) {
                throw new PassException(name(), n, "no kernel computes " + n.op().text());
            }
            if (!n.type().dtype().isFloating() || floatInputBreaks(n, g)) {
                throw new PassException(name(), n, "kernels compute floating dtypes (f32, f16, bf16) only");
            }
            out.add(KernelLowering.lower(n, g, out.size(), target, savedLse.get(n.name())));
        }
        return out;
    }

    /** Whether an input that a kernel reads as numbers is not floating (gather's ids are integers by design). */
    private static boolean floatInputBreaks(Node n, Graph g) {
        for (int i = 0; i < n.inputs().size(); i++) {
            if (!g.type(n.input(i)).dtype().isFloating() && !KernelLowering.readsIntegerIds(n.op(), i)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String dump(Graph result) {
        return KernelDump.print(kernels(result));
    }
}
