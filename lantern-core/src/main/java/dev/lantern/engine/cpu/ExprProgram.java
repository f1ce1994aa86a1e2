package dev.lantern.engine.cpu;

import dev.lantern.cpu.BinaryFn;
import dev.lantern.cpu.ElementwiseProgram;
import dev.lantern.cpu.UnaryFn;
import dev.lantern.ir.ElementwiseExpr;

import java.util.Map;

/**
 * Compiles an {@link ElementwiseExpr} (the {@code expr} of a fused elementwise op) into the CPU
 * backend's straight-line {@link ElementwiseProgram}: a post-order walk, one register per call.
 * Every register is f32; a cast to f32 is the identity there, and a cast to bf16/f16 rounds the
 * register to that format and back, as the float64 reference does (fuse-elementwise keeps such
 * casts at the root, but a hand-written expression may have one anywhere).
 */
public final class ExprProgram {
    private ExprProgram() {}

    private static final Map<String, UnaryFn> UNARY = Map.of(
            "neg", UnaryFn.NEG, "exp", UnaryFn.EXP, "tanh", UnaryFn.TANH, "relu", UnaryFn.RELU, "silu", UnaryFn.SILU,
            "gelu_tanh", UnaryFn.GELU_TANH, "gelu_erf", UnaryFn.GELU_ERF,
            "cast_f32", UnaryFn.IDENTITY, "cast_bf16", UnaryFn.ROUND_BF16, "cast_f16", UnaryFn.ROUND_F16);
    private static final Map<String, BinaryFn> BINARY = Map.of(
            "add", BinaryFn.ADD, "sub", BinaryFn.SUB, "mul", BinaryFn.MUL, "div", BinaryFn.DIV,
            "gelu_tanh_grad", BinaryFn.GELU_TANH_GRAD, "gelu_erf_grad", BinaryFn.GELU_ERF_GRAD,
            "silu_grad", BinaryFn.SILU_GRAD, "relu_grad", BinaryFn.RELU_GRAD);

    /** A program over {@code inputs} inputs (the op's, whether the expression reads each or not) and one store to output 0. */
    public static ElementwiseProgram compile(ElementwiseExpr e, int inputs) {
        ElementwiseProgram.Builder b = ElementwiseProgram.builder().inputs(inputs);
        b.store(emit(e, b), 0);
        return b.build();
    }

    private static int emit(ElementwiseExpr e, ElementwiseProgram.Builder b) {
        return switch (e) {
            case ElementwiseExpr.In i -> b.load(i.index());
            case ElementwiseExpr.Const c -> b.constant((float) c.value());
            case ElementwiseExpr.Call c when BINARY.containsKey(c.fn()) ->
                    b.binary(BINARY.get(c.fn()), emit(c.args().get(0), b), emit(c.args().get(1), b));
            case ElementwiseExpr.Call c -> {
                UnaryFn f = UNARY.get(c.fn());
                if (f == null) {
                    throw new IllegalArgumentException("no CPU function for " + c.fn());
                }
                yield b.unary(f, emit(c.args().getFirst(), b));
            }
        };
    }
}
