package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.ArrayList;
import java.util.List;

/**
 * fuse-norm: fold elementwise producers and consumers into the row-wise ops. Algorithm (rules to
 * a fixed point):
 * <pre>
 *   rms_norm(add(x, r), w)            -> fused_norm(x, r, w) {kind="rms", residual=true}
 *   layer_norm(add(x, r), w[, b])     -> fused_norm(x, r, w[, b]) {kind="layer", residual=true}
 *   cast(norm(...)) {to=d}            -> fused_norm(...) {out=d}   (d a float; the norm stores floats)
 *   norm(.., cast(y {bf16}) {to=f32}, ..) -> fused_norm(.., y, ..)  (a widening cast is exact; the
 *                                        norm reads any float storage and computes in f32 anyway)
 *   softmax(mul(x, c)) {scale=s}      -> softmax(x) {scale=s·c}     (c a scalar constant; div too)
 *   add(norm_grad(x, w, dy), r)       -> norm_grad(x, w, dy, r) {residual=true}  ({@link NormGradResidual})
 *   reduce_sum(mul(dy, norm(x, ones))) over the rows -> norm_weight_grad(x, dy)   (the norm VJP's dw:
 *                                        x̂ and the product never written; {@link NormWeightGradRule})
 * </pre>
 * The residual sum is recomputed in the norm's prologue (in f32, one read of each operand), so it is
 * never written when every reader of it absorbs it ({@link FuseGemmEpilogue#sumDies}); the bytes
 * saved are the write and the re-read of the sum. A cast folded into a norm saves a kernel and a
 * round trip of the row through memory.
 */
public final class FuseNorm implements Pass {
    static final List<Rule> RULES = List.of(
            NormWeightGradRule.RULE,
            Rule.of("residual-into-norm", (n, cx) -> {
                if (n.op() != Op.RMS_NORM && n.op() != Op.LAYER_NORM) {
                    return null;
                }
                Node s = cx.in(n, 0, Op.ADD);
                if (s == null || !FuseGemmEpilogue.sumDies(s, n, cx)) {
                    return null;
                }
                String x = s.input(0);
                String r = s.input(1);
                if (!cx.type(x).shape().equals(s.type().shape()) || !cx.type(r).shape().equals(s.type().shape())) {
                    return null;
                }
                List<String> ins = new ArrayList<>(List.of(x, r));
                ins.addAll(n.inputs().subList(1, n.inputs().size()));
                return Rewrite.to(Build.named(cx, n.name(), Op.FUSED_NORM, normAttrs(n).with("residual", true), ins));
            }),
            Rule.of("cast-into-norm", (n, cx) -> {
                Node m = n.op() == Op.CAST && n.type().dtype().isFloating() ? cx.in(n, 0) : null;
                if (m == null || (m.op() != Op.RMS_NORM && m.op() != Op.LAYER_NORM && m.op() != Op.FUSED_NORM) || !cx.onlyUsedBy(m.name(), n)) {
                    return null;
                }
                Attrs a = (m.op() == Op.FUSED_NORM ? m.attrs() : normAttrs(m)).with("out", n.type().dtype().text());
                return Rewrite.to(Build.named(cx, n.name(), Op.FUSED_NORM, a, m.inputs()));
            }),
            Rule.of("widening-cast-into-norm", (n, cx) -> {
                if (n.op() != Op.RMS_NORM && n.op() != Op.LAYER_NORM && n.op() != Op.FUSED_NORM) {
                    return null;
                }
                for (int i = 0; i < n.inputs().size(); i++) {
                    Node c = cx.in(n, i, Op.CAST);
                    if (c != null && cx.onlyUsedBy(c.name(), n) && c.type().dtype() == DType.F32
                            && cx.type(c.input(0)).dtype().isFloating() && cx.type(c.input(0)).dtype().bytes() < 4) {
                        List<String> ins = new ArrayList<>(n.inputs());
                        ins.set(i, c.input(0));
                        Attrs a = (n.op() == Op.FUSED_NORM ? n.attrs() : normAttrs(n)).with("out", n.type().dtype().text());
                        return Rewrite.to(Build.named(cx, n.name(), Op.FUSED_NORM, a, ins));
                    }
                }
                return null;
            }),
            Rule.of("scale-into-softmax", (n, cx) -> {
                Node m = n.op() == Op.SOFTMAX ? cx.in(n, 0) : null;
                if (m == null || (m.op() != Op.MUL && m.op() != Op.DIV) || !cx.onlyUsedBy(m.name(), n)) {
                    return null;
                }
                for (int side = 0; side < (m.op() == Op.MUL ? 2 : 1); side++) {
                    Node c = cx.in(m, 1 - side);
                    if (Build.isScalarConstant(c) && cx.type(m.input(side)).shape().equals(m.type().shape())) {
                        double v = c.attrs().getDouble("value", 1.0);
                        double scale = n.attrs().getDouble("scale", 1.0) * (m.op() == Op.MUL ? v : 1 / v);
                        if (!Double.isFinite(scale)) {
                            return null; // x·inf or x/0 is not a scale a softmax takes: keep the product
                        }
                        return Rewrite.to(Build.named(cx, n.name(), Op.SOFTMAX, n.attrs().with("scale", scale), List.of(m.input(side))));
                    }
                }
                return null;
            }),
            NormGradResidual.RULE);

    @Override
    public String name() {
        return "fuse-norm";
    }

    @Override
    public String summary() {
        return "residual adds into the next norm's prologue, casts into its output, scalar scales into softmax,"
                + " residual gradients into a norm gradient's dx, norm weight gradients into one op";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, RULES);
    }

    /** The fused_norm attributes equivalent to a plain norm node. */
    private static Attrs normAttrs(Node n) {
        boolean rms = n.op() == Op.RMS_NORM;
        return Attrs.of("kind", rms ? "rms" : "layer", "eps", n.attrs().getDouble("eps", rms ? 1e-6 : 1e-5));
    }
}
