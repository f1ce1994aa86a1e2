package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

import java.util.Arrays;
import java.util.List;

/** Small helpers that rules use to build replacement nodes and read common facts. */
final class Build {
    private Build() {}

    /** A new node with a fresh name and the type that the op's rule infers. */
    static Node fresh(RewriteContext cx, Op op, Attrs attrs, List<String> inputs) {
        TensorType t = op.infer(inputs.stream().map(cx::type).toList(), attrs);
        return new Node(cx.fresh(), op, inputs, attrs, t);
    }

    /** {@code op(inputs) {attrs}} named {@code name}, with the inferred type. */
    static Node named(RewriteContext cx, String name, Op op, Attrs attrs, List<String> inputs) {
        TensorType t = op.infer(inputs.stream().map(v -> typeOf(cx, v)).toList(), attrs);
        return new Node(name, op, inputs, attrs, t);
    }

    private static TensorType typeOf(RewriteContext cx, String v) {
        return cx.type(v);
    }

    static Node cast(RewriteContext cx, String value, DType to) {
        return fresh(cx, Op.CAST, Attrs.of("to", to.text()), List.of(value));
    }

    /** Whether {@code n} is a scalar (rank 0 or one element) constant equal to {@code v}. */
    static boolean isConstant(Node n, double v) {
        return n != null && n.op() == Op.CONSTANT && n.type().shape().numel() == 1 && n.attrs().getDouble("value", Double.NaN) == v;
    }

    static boolean isScalarConstant(Node n) {
        return n != null && n.op() == Op.CONSTANT && n.type().shape().numel() == 1;
    }

    static boolean isIdentity(int[] perm) {
        for (int i = 0; i < perm.length; i++) {
            if (perm[i] != i) {
                return false;
            }
        }
        return true;
    }

    /** Whether a permute of {@code shape} by {@code perm} moves no element (only size-1 axes move). */
    static boolean movesNothing(Shape shape, int[] perm) {
        int[] kept = Arrays.stream(perm).filter(a -> shape.dim(a) != 1).toArray();
        for (int i = 1; i < kept.length; i++) {
            if (kept[i] < kept[i - 1]) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code op} is a matrix product (plain, or a gemm that fusion has started). */
    static boolean isGemm(Node n) {
        return n != null && (n.op() == Op.MATMUL || n.op() == Op.GEMM);
    }
}
