package dev.lantern.autodiff;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.Map;

/**
 * Rules of the elementwise ops. A binary op's operand gradient is summed back to that operand's
 * shape (NumPy broadcasting repeated it); the activations use the gradient helper ops
 * (gelu_grad, silu_grad, relu_grad), which fuse into elementwise chains like any other op and
 * keep their derivative exact where a composition would cancel (erf's has no primitive form).
 */
final class ElementwiseVjp {
    private ElementwiseVjp() {}

    static void register(Map<Op, VjpRule> t) {
        t.put(Op.ADD, (n, dy, need, b) -> new String[] {
                need[0] ? b.sumTo(dy, b.shape(n.input(0))) : null,
                need[1] ? b.sumTo(dy, b.shape(n.input(1))) : null});
        t.put(Op.SUB, (n, dy, need, b) -> new String[] {
                need[0] ? b.sumTo(dy, b.shape(n.input(0))) : null,
                need[1] ? b.sumTo(b.neg(dy), b.shape(n.input(1))) : null});
        t.put(Op.MUL, (n, dy, need, b) -> new String[] {
                need[0] ? b.sumTo(b.mul(dy, n.input(1)), b.shape(n.input(0))) : null,
                need[1] ? b.sumTo(b.mul(dy, n.input(0)), b.shape(n.input(1))) : null});
        // y = a / b: da = dy / b, db = −dy·a/b² = −da·y
        t.put(Op.DIV, (n, dy, need, b) -> {
            String da = b.op(Op.DIV, Attrs.EMPTY, dy, n.input(1));
            return new String[] {
                    need[0] ? b.sumTo(da, b.shape(n.input(0))) : null,
                    need[1] ? b.sumTo(b.neg(b.mul(da, n.name())), b.shape(n.input(1))) : null};
        });
        t.put(Op.NEG, (n, dy, need, b) -> new String[] {b.neg(dy)});
        t.put(Op.EXP, (n, dy, need, b) -> new String[] {b.mul(dy, n.name())});
        // tanh' = 1 − y²
        t.put(Op.TANH, (n, dy, need, b) -> {
            String one = b.scalar(1.0, n.type().dtype());
            return new String[] {b.mul(dy, b.op(Op.SUB, Attrs.EMPTY, one, b.mul(n.name(), n.name())))};
        });
        t.put(Op.GELU, (n, dy, need, b) -> new String[] {b.op(Op.GELU_GRAD,
                Attrs.of("approximate", n.op().withDefaults(n.attrs()).getString("approximate", "tanh")), n.input(0), dy)});
        t.put(Op.SILU, (n, dy, need, b) -> new String[] {b.op(Op.SILU_GRAD, Attrs.EMPTY, n.input(0), dy)});
        t.put(Op.RELU, (n, dy, need, b) -> new String[] {b.op(Op.RELU_GRAD, Attrs.EMPTY, n.input(0), dy)});
        // the gradient flows back in the operand's dtype (an f32 master copy gets an f32 gradient)
        t.put(Op.CAST, (n, dy, need, b) -> new String[] {b.type(n.input(0)).dtype().isFloating()
                ? b.op(Op.CAST, Attrs.of("to", b.type(n.input(0)).dtype().text()), dy) : null});
    }
}
