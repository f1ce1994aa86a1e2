package dev.lantern.cuda.codegen;

/**
 * The elementwise operations a fused chain may contain, as a table from op to the f32 C
 * expression it renders to ({@code %1$s}, {@code %2$s}: the operands; {@code %3$s}: the
 * step's constant). {@link #irName} is the function name of the IR's fused
 * {@code elementwise} expression ({@code ElementwiseExpr.Call.fn}), so an adapter maps a
 * post-order walk of that expression onto steps: {@code In} -&gt; an input index,
 * {@code Const} -&gt; a CONST step, {@code Call} -&gt; the op named here; {@code cast_bf16} and
 * {@code cast_f16} inside an expression map to ROUND, {@code cast_f32} to nothing.
 */
public enum ElementwiseOp {
    ADD("add", 2, "%1$s + %2$s"),
    SUB("sub", 2, "%1$s - %2$s"),
    MUL("mul", 2, "%1$s * %2$s"),
    DIV("div", 2, "%1$s / %2$s"),
    MAX("max", 2, "fmaxf(%1$s, %2$s)"),
    NEG("neg", 1, "-%1$s"),
    EXP("exp", 1, "expf(%1$s)"),
    TANH("tanh", 1, "tanhf(%1$s)"),
    RELU("relu", 1, "fmaxf(%1$s, 0.f)"),
    SILU("silu", 1, "%1$s / (1.f + expf(-%1$s))"),
    /** GELU, tanh approximation (PyTorch approximate="tanh"). */
    GELU_TANH("gelu_tanh", 1,
            "0.5f * %1$s * (1.f + tanhf(0.7978845608028654f * (%1$s + 0.044715f * %1$s * %1$s * %1$s)))"),
    /** GELU, exact erf form. */
    GELU_ERF("gelu_erf", 1, "0.5f * %1$s * (1.f + erff(%1$s * 0.7071067811865476f))"),
    // Gradient helpers ($0 = x, $1 = dy: dy * f'(x)), the CPU's formulas (BinaryFn) in the same order.
    // Each is an immediately invoked lambda: a template is one expression, and these need locals.
    /** dy * d/dx gelu_tanh(x): 0.5(1 + t) + (1 - t^2) 0.5 x c (3k x^2 + 1), t = tanh(c (k x^3 + x)). */
    GELU_TANH_GRAD("gelu_tanh_grad", 2, "([](float x, float dy) { const float x2 = x * x; "
            + "const float t = tanhf((x2 * x * 0.044715f + x) * 0.7978845608028654f); "
            + "return dy * ((t + 1.f) * 0.5f + (1.f - t * t) * (x * 0.5f) * 0.7978845608028654f * (x2 * (3.f * 0.044715f) + 1.f)); }(%1$s, %2$s))"),
    /** dy * d/dx gelu_erf(x): Phi(x) + x phi(x). */
    GELU_ERF_GRAD("gelu_erf_grad", 2, "([](float x, float dy) { const float cdf = (erff(x * 0.7071067811865476f) + 1.f) * 0.5f; "
            + "return dy * (cdf + x * (expf(x * x * -0.5f) * 0.3989422804014327f)); }(%1$s, %2$s))"),
    /** dy * d/dx silu(x): s ((1 - s) x + 1), s = 1 / (e^-x + 1). */
    SILU_GRAD("silu_grad", 2, "([](float x, float dy) { const float s = 1.f / (expf(-x) + 1.f); "
            + "return dy * (s * ((1.f - s) * x + 1.f)); }(%1$s, %2$s))"),
    /** dy where x &gt; 0, else 0 (PyTorch's choice at 0). */
    RELU_GRAD("relu_grad", 2, "(%1$s > 0.f ? %2$s : 0.f)"),
    /** The step's constant (a scalar leaf of the expression). */
    CONST("const", 0, "%3$s"),
    /** x * constant. */
    SCALE("scale", 1, "%1$s * %3$s"),
    /** x + constant. */
    ADD_CONST("add_const", 1, "%1$s + %3$s"),
    /** Round to the step's dtype and back: a cast inside a chain. */
    ROUND("round", 1, "lt_round<%4$s>(%1$s)");

    private final String irName;
    private final int arity;
    private final String template;

    ElementwiseOp(String irName, int arity, String template) {
        this.irName = irName;
        this.arity = arity;
        this.template = template;
    }

    public String irName() {
        return irName;
    }

    /** The op whose {@link #irName} is {@code name}, if any. */
    public static java.util.Optional<ElementwiseOp> forIrName(String name) {
        for (ElementwiseOp op : values()) {
            if (op.irName.equals(name)) {
                return java.util.Optional.of(op);
            }
        }
        return java.util.Optional.empty();
    }

    public int arity() {
        return arity;
    }

    /** The C expression for this op over operand expressions, a constant and a C type (ROUND). */
    String render(String a, String b, String constant, String cType) {
        return String.format(java.util.Locale.ROOT, template, a, b, constant, cType);
    }
}
