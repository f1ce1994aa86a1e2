package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Layout;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.List;

/**
 * layout-normalize: decide, for each permute, whether it is a free strided view or a copy.
 * Algorithm (rules to a fixed point): a permute of a contiguous value whose every reader can read
 * strided inputs ({@link StridedReads}) and which is not a graph output gets the permuted strides
 * as its layout ({@code f32[2,4,128,64]@[32768,64,256,1]}) and costs nothing; a strided permute
 * that has gained a reader that cannot read strides goes back to a contiguous copy. Reshapes stay
 * views only of contiguous values; the verifier rejects anything else, so no wrong view survives.
 * Every other op writes contiguous outputs, which is what the kernels assume.
 */
public final class LayoutNormalize implements Pass {
    static final List<Rule> RULES = List.of(
            Rule.of("permute-to-view", (n, cx) -> {
                if (n.op() != Op.PERMUTE || !n.type().layout().isContiguous() || cx.isOutput(n.name())
                        || !cx.producer(n.input(0)).type().layout().isContiguous() || !readersTakeStrides(n, cx)
                        || Build.movesNothing(cx.producer(n.input(0)).type().shape(), n.attrs().getInts("perm"))) {
                    return null;
                }
                long[] in = cx.producer(n.input(0)).type().shape().contiguousStrides();
                int[] perm = n.attrs().getInts("perm");
                long[] out = new long[perm.length];
                for (int i = 0; i < perm.length; i++) {
                    out[i] = in[perm[i]];
                }
                return Rewrite.to(n.withType(new TensorType(n.type().dtype(), n.type().shape(), Layout.strided(out))));
            }),
            Rule.of("view-to-copy", (n, cx) -> {
                if (n.op() != Op.PERMUTE || n.type().layout().isContiguous() || (readersTakeStrides(n, cx) && !cx.isOutput(n.name()))) {
                    return null;
                }
                return Rewrite.to(n.withType(n.type().contiguous()));
            }));

    @Override
    public String name() {
        return "layout-normalize";
    }

    @Override
    public String summary() {
        return "make permutes free strided views where every reader takes strides, copies elsewhere";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        for (Node n : g.nodes()) {
            if (n.op() == Op.RESHAPE && !g.type(n.input(0)).layout().isContiguous()) {
                throw new PassException(name(), n, "reshape of a strided value " + g.node(n.input(0))
                        + " is not a view; make that permute contiguous first");
            }
        }
        return RewriteEngine.run(name(), g, RULES);
    }

    private static boolean readersTakeStrides(Node n, RewriteContext cx) {
        for (Node u : cx.users(n.name())) {
            if (!StridedReads.allReadsStrided(u, n.name())) {
                return false;
            }
        }
        return true;
    }
}
