package dev.lantern.passes;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;

/**
 * The repeat of K/V heads that front ends emit before grouped-query attention, (b, kv, t, d) ->
 * (b, kv·g, t, d) with head j·g + r a copy of head j (transformers' repeat_kv order), in either of
 * its two forms:
 * <pre>
 *   reshape(concat(y, y, ..., y) {axis=2}) {shape=[b, kv·g, t, d]}          (g copies: the HF builders)
 *   reshape(gather(y, ids) {axis=2}) {shape=[b, kv·g, t, d]}, ids = constant 0 of shape [g]   (ONNX Expand)
 *   with y = reshape(x) {shape=[b, kv, 1, t, d]}
 * </pre>
 * Attention reads K/V head i / g for query head i itself, so the copy is not needed.
 */
final class RepeatedHeads {
    private RepeatedHeads() {}

    /**
     * The unrepeated (b, kv, t, d) value under {@code value} when it is such a repeat whose copies
     * only {@code reader} reads (they would stay materialised otherwise), else {@code null}.
     */
    static String source(RewriteContext cx, String value, Node reader) {
        Node r = cx.producer(value);
        if (r == null || r.op() != Op.RESHAPE || !cx.onlyUsedBy(value, reader)) {
            return null;
        }
        Shape out = r.type().shape();
        Node copies = cx.in(r, 0);
        if (out.rank() != 4 || copies == null || copies.type().shape().rank() != 5 || !cx.onlyUsedBy(copies.name(), r)
                || !copiesAlongAxis2(copies)) {
            return null;
        }
        Node y = cx.in(copies, 0, Op.RESHAPE);
        if (y == null) {
            return null;
        }
        Shape ys = y.type().shape();
        Shape cs = copies.type().shape();
        int g = cs.dim(2);
        if (ys.rank() != 5 || ys.dim(2) != 1 || !sameIgnoringAxis2(ys, cs) || !cx.type(y.input(0)).shape().equals(
                Shape.of(ys.dim(0), ys.dim(1), ys.dim(3), ys.dim(4)))
                || !out.equals(Shape.of(ys.dim(0), ys.dim(1) * g, ys.dim(3), ys.dim(4)))) {
            return null;
        }
        boolean sameSource = switch (copies.op()) {
            case CONCAT -> copies.inputs().stream().allMatch(y.name()::equals);
            case GATHER -> copies.input(0).equals(y.name()) && zeros(cx.producer(copies.input(1)), g);
            default -> false;
        };
        return sameSource ? y.input(0) : null;
    }

    private static boolean copiesAlongAxis2(Node n) {
        int axis = n.attrs().getInt("axis", 0);
        return (n.op() == Op.CONCAT || n.op() == Op.GATHER) && (axis == 2 || axis == -3);
    }

    /** ids that pick entry 0 g times: a constant 0 of shape [g] (a constant is its value filled over its shape). */
    private static boolean zeros(Node ids, int g) {
        return ids != null && ids.op() == Op.CONSTANT && ids.attrs().getDouble("value", Double.NaN) == 0
                && ids.type().shape().equals(Shape.of(g));
    }

    private static boolean sameIgnoringAxis2(Shape a, Shape b) {
        return a.dim(0) == b.dim(0) && a.dim(1) == b.dim(1) && a.dim(3) == b.dim(3) && a.dim(4) == b.dim(4);
    }
}
