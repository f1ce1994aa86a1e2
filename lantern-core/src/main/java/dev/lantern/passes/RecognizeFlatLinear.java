package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.Arrays;
import java.util.List;

/**
 * recognize-flat-linear: a linear layer written on flattened rows (GPT-2's Conv1D exports as
 * {@code addmm} on (b·s, k) between two reshapes) becomes a matmul on the (b, s, k) activation, so
 * that what follows the matmul (GELU, the residual add) is its direct reader and fuses into its
 * epilogue. Rule:
 * <pre>
 *   reshape(matmul(reshape(x) {[m, k]}, W)) {[d.., n]}  ->  matmul(reshape(x) {[d.., k]}, W)    m = Π d
 * </pre>
 * with W of rank 2 and no transpose of the activation. Each row of the product depends on its row
 * of the activation alone, so grouping the rows as (d..) rather than m changes no value. When
 * {@code [d.., k]} is x's own shape the inner reshape is an identity, which canonicalize drops.
 * The inner reshape and the matmul must have no other reader.
 */
public final class RecognizeFlatLinear implements Pass {
    @Override
    public String name() {
        return "recognize-flat-linear";
    }

    @Override
    public String summary() {
        return "reshape(matmul(reshape(x) to rows, W)) back to x's leading dims into one matmul on x";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, List.of(Rule.of("unflatten-linear", RecognizeFlatLinear::unflatten)));
    }

    private static Rewrite unflatten(Node n, RewriteContext cx) {
        Node mm = n.op() == Op.RESHAPE ? cx.in(n, 0, Op.MATMUL) : null;
        if (mm == null || !cx.onlyUsedBy(mm.name(), n) || mm.attrs().getBool("transpose_a", false)) {
            return null;
        }
        Node rows = cx.in(mm, 0, Op.RESHAPE);
        Shape w = cx.type(mm.input(1)).shape();
        Shape out = n.type().shape();
        if (rows == null || !cx.onlyUsedBy(rows.name(), mm) || w.rank() != 2 || rows.type().shape().rank() != 2
                || out.rank() < 3 || out.last() != mm.type().shape().last()) {
            return null;
        }
        int k = rows.type().shape().dim(1);
        int[] lead = Arrays.copyOf(out.dims(), out.rank() - 1);
        if (Arrays.stream(lead).asLongStream().reduce(1, (a, b) -> a * b) != rows.type().shape().dim(0)) {
            return null;
        }
        int[] inShape = Arrays.copyOf(lead, lead.length + 1);
        inShape[lead.length] = k;
        Node in = Build.fresh(cx, Op.RESHAPE, Attrs.of("shape", inShape), rows.inputs());
        Node m = new Node(n.name(), Op.MATMUL, List.of(in.name(), mm.input(1)), mm.attrs(),
                Op.MATMUL.infer(List.of(in.type(), cx.type(mm.input(1))), mm.attrs()));
        return Rewrite.to(in, m);
    }
}
