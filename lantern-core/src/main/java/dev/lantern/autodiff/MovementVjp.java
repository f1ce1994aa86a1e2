package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The views and data movement: each gradient is the transposed movement of dy. reshape back,
 * permute by the inverse permutation, transpose the same two axes, concat split by slices. A
 * slice's gradient is dy between zero blocks (concat with constants: no pad op, and it runs on
 * every backend that runs concat); gather's is scatter_add (rows summed in id order, no races),
 * and scatter_add's is gather.
 */
final class MovementVjp {
    private MovementVjp() {}

    static void register(Map<Op, VjpRule> t) {
        t.put(Op.RESHAPE, (n, dy, need, b) -> new String[] {b.reshape(dy, b.shape(n.input(0)))});
        t.put(Op.PERMUTE, (n, dy, need, b) -> {
            int[] perm = n.attrs().getInts("perm");
            int[] inv = new int[perm.length];
            for (int i = 0; i < perm.length; i++) {
                inv[perm[i]] = i;
            }
            return new String[] {b.op(Op.PERMUTE, Attrs.of("perm", inv), dy)};
        });
        t.put(Op.TRANSPOSE, (n, dy, need, b) -> new String[] {b.op(Op.TRANSPOSE,
                Attrs.of("dim0", n.attrs().getInt("dim0", 0), "dim1", n.attrs().getInt("dim1", 0)), dy)});
        t.put(Op.SLICE, MovementVjp::slice);
        t.put(Op.CONCAT, MovementVjp::concat);
        t.put(Op.GATHER, (n, dy, need, b) -> {
            Shape table = b.shape(n.input(0));
            int axis = axis(n.attrs().getInt("axis", 0), table.rank());
            return new String[] {need[0] ? b.op(Op.SCATTER_ADD, Attrs.of("axis", axis, "size", table.dim(axis)), dy, n.input(1)) : null, null};
        });
        t.put(Op.SCATTER_ADD, (n, dy, need, b) -> new String[] {
                need[0] ? b.op(Op.GATHER, Attrs.of("axis", axis(n.attrs().getInt("axis", 0), n.type().shape().rank())), dy, n.input(1)) : null,
                null});
    }

    private static String[] slice(Node n, String dy, boolean[] need, GradientBuilder b) {
        TensorType x = b.type(n.input(0));
        int axis = axis(n.attrs().getInt("axis", 0), x.shape().rank());
        int start = n.attrs().getInt("start", 0);
        int end = n.attrs().getInt("end", 0);
        List<String> parts = new ArrayList<>();
        if (start > 0) {
            parts.add(b.constant(0.0, x.withShape(x.shape().withDim(axis, start))));
        }
        parts.add(dy);
        if (end < x.shape().dim(axis)) {
            parts.add(b.constant(0.0, x.withShape(x.shape().withDim(axis, x.shape().dim(axis) - end))));
        }
        return new String[] {parts.size() == 1 ? dy : b.op(Op.CONCAT, Attrs.of("axis", axis), parts.toArray(String[]::new))};
    }

    private static String[] concat(Node n, String dy, boolean[] need, GradientBuilder b) {
        int axis = axis(n.attrs().getInt("axis", 0), n.type().shape().rank());
        String[] out = new String[n.inputs().size()];
        int at = 0;
        for (int i = 0; i < out.length; i++) {
            int size = b.shape(n.input(i)).dim(axis);
            if (need[i]) {
                out[i] = size == n.type().shape().dim(axis) ? dy
                        : size == 0 ? b.constant(0.0, b.type(n.input(i)))
                        : b.op(Op.SLICE, Attrs.of("axis", axis, "start", at, "end", at + size), dy);
            }
            at += size;
        }
        return out;
    }

    static int axis(int axis, int rank) {
        return axis < 0 ? axis + rank : axis;
    }
}
