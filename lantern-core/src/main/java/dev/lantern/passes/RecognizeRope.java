package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.List;

/**
 * recognize-rope: rotary position embedding as exporters write it (Hugging Face's
 * {@code apply_rotary_pos_emb}) becomes the {@code rope} op, which fuse-attention can then take into
 * attention. Rule:
 * <pre>
 *   add(mul(x, C), mul(concat(neg(slice(x, h..d)), slice(x, 0..h)) {axis=-1}, S))  ->  rope(x) {base}
 * </pre>
 * for x (batch, heads, seq, d), h = d/2, either operand order of the add and the muls, and C, S
 * constant tables whose values are read and checked: the rope op's layout is rotate-half over the
 * last axis with positions along axis −2 from 0, so C[.., p, j] must be cos(p·θ_i) and S[.., p, j]
 * sin(p·θ_i), with i = j mod h and θ_i = base^(−2i/d) (see {@link RopeTable}). The base is
 * inferred from the table, then every entry of both tables is checked against it; a table that
 * fails (a wrong entry, scaled frequencies, another layout, positions not from 0) is left as it is
 * and runs op by op. Intermediate values must be read inside the pattern alone.
 */
public final class RecognizeRope implements Pass {
    private final ConstantValues values;

    public RecognizeRope(ConstantValues values) {
        this.values = values;
    }

    /** With only {@code constant} nodes known: no table is, so nothing matches (for {@code lantern opt}). */
    public RecognizeRope() {
        this(ConstantValues.NONE);
    }

    @Override
    public String name() {
        return "recognize-rope";
    }

    @Override
    public String summary() {
        return "x·cos + rotate_half(x)·sin with checked constant cos/sin tables into rope {base}";
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        return RewriteEngine.run(name(), g, List.of(Rule.of("rotate-half-into-rope", this::rope)));
    }

    private Rewrite rope(Node n, RewriteContext cx) {
        if (n.op() != Op.ADD) {
            return null;
        }
        for (int side = 0; side < 2; side++) {
            Node cosMul = cx.in(n, side, Op.MUL);
            Node sinMul = cx.in(n, 1 - side, Op.MUL);
            if (cosMul == null || sinMul == null || !cx.onlyUsedBy(cosMul.name(), n) || !cx.onlyUsedBy(sinMul.name(), n)) {
                continue;
            }
            for (int rs = 0; rs < 2; rs++) {
                Node rot = cx.in(sinMul, rs, Op.CONCAT);
                String x = rot == null || !cx.onlyUsedBy(rot.name(), sinMul) ? null : rotatedHalf(rot, cx);
                if (x == null) {
                    continue;
                }
                Node sin = cx.in(sinMul, 1 - rs);
                int xs = cosMul.input(0).equals(x) ? 0 : cosMul.input(1).equals(x) ? 1 : -1;
                if (xs < 0) {
                    continue;
                }
                Node cos = cx.in(cosMul, 1 - xs);
                Shape shape = cx.type(x).shape();
                if (!cx.type(x).equals(n.type()) || !cosMul.type().equals(n.type()) || !sinMul.type().equals(n.type())) {
                    continue;
                }
                Double base = RopeTable.base(values.of(cos), cos.type().shape(), values.of(sin), sin.type().shape(), shape);
                if (base != null) {
                    return Rewrite.to(Build.named(cx, n.name(), Op.ROPE, Attrs.of("base", base), List.of(x)));
                }
            }
        }
        return null;
    }

    /** For concat(neg(slice(x, h..d)), slice(x, 0..h)) over the last axis of a rank-4 x with even d: x. */
    private static String rotatedHalf(Node rot, RewriteContext cx) {
        if (rot.inputs().size() != 2 || rot.type().shape().rank() != 4 || !isLastAxis(rot.attrs().getInt("axis", 0), 4)) {
            return null;
        }
        Node neg = cx.in(rot, 0, Op.NEG);
        Node lo = cx.in(rot, 1, Op.SLICE);
        Node hi = neg == null ? null : cx.in(neg, 0, Op.SLICE);
        if (hi == null || lo == null || !cx.onlyUsedBy(neg.name(), rot) || !cx.onlyUsedBy(hi.name(), neg)
                || !hi.input(0).equals(lo.input(0))) {
            return null;
        }
        String x = lo.input(0);
        int d = cx.type(x).shape().last();
        int h = d / 2;
        if (d % 2 != 0 || cx.type(x).shape().rank() != 4 || !isSlice(lo, 0, h) || !isSlice(hi, h, d)
                || cx.users(lo.name()).size() != 1 || cx.isOutput(lo.name())) {
            return null;
        }
        return x;
    }

    private static boolean isSlice(Node s, int start, int end) {
        int d = s.type().shape().rank();
        return isLastAxis(s.attrs().getInt("axis", 0), d) && s.attrs().getInt("start", -1) == start && s.attrs().getInt("end", -1) == end;
    }

    private static boolean isLastAxis(int axis, int rank) {
        return axis == rank - 1 || axis == -1;
    }
}
