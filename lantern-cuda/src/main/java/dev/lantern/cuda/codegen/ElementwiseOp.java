package dev.lantern.cuda.codegen;

/**
 * The elementwise operations a fused chain may contain, as a table from op to the f32 C
 * expression it renders to ({@code %1$s}, {@code %2$s}: the operands; {@code %3$s}: the
 * step's constant). The IR op of the same name has the same meaning.
 */
public enum ElementwiseOp {
    ADD(2, "%1$s + %2$s"),
    SUB(2, "%1$s - %2$s"),
    MUL(2, "%1$s * %2$s"),
    DIV(2, "%1$s / %2$s"),
    MAX(2, "fmaxf(%1$s, %2$s)"),
    NEG(1, "-%1$s"),
    EXP(1, "expf(%1$s)"),
    TANH(1, "tanhf(%1$s)"),
    RELU(1, "fmaxf(%1$s, 0.f)"),
    SILU(1, "%1$s / (1.f + expf(-%1$s))"),
    /** GELU, tanh approximation (PyTorch approximate="tanh"). */
    GELU_TANH(1, "0.5f * %1$s * (1.f + tanhf(0.7978845608028654f * (%1$s + 0.044715f * %1$s * %1$s * %1$s)))"),
    /** GELU, exact erf form. */
    GELU_ERF(1, "0.5f * %1$s * (1.f + erff(%1$s * 0.7071067811865476f))"),
    /** x * constant. */
    SCALE(1, "%1$s * %3$s"),
    /** x + constant. */
    ADD_CONST(1, "%1$s + %3$s"),
    /** Round to the step's dtype and back: a cast inside a chain. */
    ROUND(1, "lt_round<%4$s>(%1$s)");

    private final int arity;
    private final String template;

    ElementwiseOp(int arity, String template) {
        this.arity = arity;
        this.template = template;
    }

    public int arity() {
        return arity;
    }

    /** The C expression for this op over operand expressions, a constant and a C type (ROUND). */
    String render(String a, String b, String constant, String cType) {
        return String.format(java.util.Locale.ROOT, template, a, b, constant, cType);
    }
}
