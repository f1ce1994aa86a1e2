package dev.lantern.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * Every op of the IR, with its spec: text name, kind, arity, attributes, type rule and a one-line
 * example in the text syntax. Passes ask the spec; they do not switch on ops for these facts.
 */
public enum Op {
    // --- sources
    INPUT("input", OpKind.SOURCE, 0, 0, null,
            "%x = input {name=\"x\"} : f32[2,128,256]", "name:s!"),
    PARAM("param", OpKind.SOURCE, 0, 0, null,
            "%w = param {name=\"attn.wq\"} : f32[256,256]", "name:s!"),
    CONSTANT("constant", OpKind.SOURCE, 0, 0, null,
            "%c = constant {value=0.5} : f32[]", "value:f!"),

    // --- elementwise (NumPy broadcasting for binary ops)
    ADD("add", OpKind.ELEMENTWISE, 2, 2, TypeRules::broadcast,
            "%2 = add(%0, %1) : f32[2,128,256]"),
    SUB("sub", OpKind.ELEMENTWISE, 2, 2, TypeRules::broadcast,
            "%2 = sub(%0, %1) : f32[2,128,256]"),
    MUL("mul", OpKind.ELEMENTWISE, 2, 2, TypeRules::broadcast,
            "%2 = mul(%0, %1) : f32[2,128,256]"),
    DIV("div", OpKind.ELEMENTWISE, 2, 2, TypeRules::broadcast,
            "%2 = div(%0, %1) : f32[2,128,256]"),
    GELU("gelu", OpKind.ELEMENTWISE, 1, 1, TypeRules::floating,
            "%1 = gelu(%0) {approximate=\"tanh\"} : f32[2,128,1024]", "approximate:s(none|tanh)=tanh"),
    RELU("relu", OpKind.ELEMENTWISE, 1, 1, TypeRules::floating,
            "%1 = relu(%0) : f32[2,128,1024]"),
    SILU("silu", OpKind.ELEMENTWISE, 1, 1, TypeRules::floating,
            "%1 = silu(%0) : f32[2,128,1024]"),
    NEG("neg", OpKind.ELEMENTWISE, 1, 1, TypeRules::floating,
            "%1 = neg(%0) : f32[2,128,256]"),
    EXP("exp", OpKind.ELEMENTWISE, 1, 1, TypeRules::floating,
            "%1 = exp(%0) : f32[2,128,256]"),
    TANH("tanh", OpKind.ELEMENTWISE, 1, 1, TypeRules::floating,
            "%1 = tanh(%0) : f32[2,128,256]"),
    CAST("cast", OpKind.ELEMENTWISE, 1, 1, TypeRules::cast,
            "%1 = cast(%0) {to=\"bf16\"} : bf16[2,128,256]", "to:s!"),

    // --- gradient helpers (made by autodiff.Gradients): inputs (x, dy), result dx = f'(x)·dy
    /** dy · d/dx gelu(x), in the form {@code approximate} names (the forward's). */
    GELU_GRAD("gelu_grad", OpKind.ELEMENTWISE, 2, 2, GradTypeRules::elementwiseGrad,
            "%2 = gelu_grad(%0, %1) {approximate=\"tanh\"} : f32[2,128,1024]", "approximate:s(none|tanh)=tanh"),
    /** dy · σ(x)·(1 + x·(1 − σ(x))). */
    SILU_GRAD("silu_grad", OpKind.ELEMENTWISE, 2, 2, GradTypeRules::elementwiseGrad,
            "%2 = silu_grad(%0, %1) : f32[2,128,1024]"),
    /** dy where x &gt; 0, else 0 (PyTorch's choice at x = 0). */
    RELU_GRAD("relu_grad", OpKind.ELEMENTWISE, 2, 2, GradTypeRules::elementwiseGrad,
            "%2 = relu_grad(%0, %1) : f32[2,128,1024]"),

    // --- row-wise over the last axis
    SOFTMAX("softmax", OpKind.ROWWISE, 1, 1, TypeRules::softmax,
            "%1 = softmax(%0) {causal=true, scale=0.125} : f32[2,4,128,128]", "causal:b=false", "scale:f=1.0"),
    LAYER_NORM("layer_norm", OpKind.ROWWISE, 2, 3, TypeRules::norm,
            "%3 = layer_norm(%0, %1, %2) {eps=1.0E-5} : f32[2,128,256]", "eps:f=1e-5"),
    RMS_NORM("rms_norm", OpKind.ROWWISE, 2, 2, TypeRules::norm,
            "%2 = rms_norm(%0, %1) {eps=1.0E-6} : f32[2,128,256]", "eps:f=1e-6"),
    ROPE("rope", OpKind.ROWWISE, 1, 1, TypeRules::rope,
            "%1 = rope(%0) {base=10000.0} : f32[2,4,128,64]", "base:f=10000.0", "offset:i=0", "inverse:b=false"),

    /**
     * The input gradient of {@code softmax {scale}} from its result y and the result's gradient dy:
     * {@code scale · y · (dy − Σ_row y·dy)}. A causal forward needs no attribute: y is 0 where it masked.
     */
    SOFTMAX_GRAD("softmax_grad", OpKind.ROWWISE, 2, 2, GradTypeRules::rowGrad,
            "%2 = softmax_grad(%0, %1) {scale=0.125} : f32[2,4,128,128]", "scale:f=1.0"),
    /**
     * dx of {@code rms_norm(x, w) {eps}} from (x, w, dy): the row statistics are recomputed in f32.
     * With {@code residual=true} a 4th input r (x's type) is added to dx in f32 before the one
     * rounding to the output: fuse-norm's form of {@code add(rms_norm_grad(x, w, dy), r)}.
     */
    RMS_NORM_GRAD("rms_norm_grad", OpKind.ROWWISE, 3, 4, GradTypeRules::normGrad,
            "%4 = rms_norm_grad(%0, %1, %2, %3) {eps=1.0E-6, residual=true} : f32[2,128,256]", "eps:f=1e-6", "residual:b=false"),
    /** dx of {@code layer_norm(x, w, b) {eps}} from (x, w, dy) (the bias does not change dx); {@code residual} as rms_norm_grad's. */
    LAYER_NORM_GRAD("layer_norm_grad", OpKind.ROWWISE, 3, 4, GradTypeRules::normGrad,
            "%3 = layer_norm_grad(%0, %1, %2) {eps=1.0E-5} : f32[2,128,256]", "eps:f=1e-5", "residual:b=false"),

    // --- attention's backward (autodiff's rule for attention): the (s, t) scores are never kept;
    // each op recomputes them block by block from q and k, as the flash forward does. Inputs as
    // attention's (q (b,h,s,d), k (b,hk,t,d), v (b,hk,t,e), grouped-query heads, causal top-left,
    // an optional additive mask broadcastable to (b,h,s,t) last); o and dy are (b,h,s,e), lse f32.
    /**
     * The row log-sum-exp of attention's scores: {@code lse[b,h,i] = log Σ_j e^(scale·q_i·k_j + mask_ij)}
     * over the keys row i sees (−inf where it sees none). One q·kᵀ pass; f32[b,h,s] whatever q's dtype.
     */
    ATTENTION_LSE("attention_lse", OpKind.COMPOSITE, 2, 3, GradTypeRules::attentionLse,
            "%2 = attention_lse(%0, %1) {causal=true, scale=0.125} : f32[2,4,128]", "causal:b=false", "scale:f=1.0"),
    /**
     * dq of attention from (q, k, v, o, dy, lse [, mask]): with P = e^(S − lse), dP = dy·vᵀ,
     * D_i = Σ dy_i∘o_i and dS = P∘(dP − D), {@code dq = scale·dS·k}; q's shape, contiguous, q's dtype.
     */
    ATTENTION_GRAD_Q("attention_grad_q", OpKind.COMPOSITE, 6, 7, GradTypeRules::attentionGradQ,
            "%6 = attention_grad_q(%0, %1, %2, %3, %4, %5) {causal=true, scale=0.125} : f32[2,4,128,64]",
            "causal:b=false", "scale:f=1.0"),
    /**
     * dk and dv of attention from (q, k, v, o, dy, lse [, mask]), packed as {@code [2, b, hk, t, d]}
     * (dk = [0], dv = [1]; needs e == d): {@code dk = scale·dSᵀ·q}, {@code dv = Pᵀ·dy}, each summed over
     * the query heads of a grouped-query group in head order (a fixed order: deterministic).
     */
    ATTENTION_GRAD_KV("attention_grad_kv", OpKind.COMPOSITE, 6, 7, GradTypeRules::attentionGradKv,
            "%6 = attention_grad_kv(%0, %1, %2, %3, %4, %5) {causal=true, scale=0.125} : f32[2,2,4,128,64]",
            "causal:b=false", "scale:f=1.0"),

    // --- reductions and the loss
    /** The sum over {@code axes} (each in [-rank, rank), no repeats); {@code keepdims} leaves them as size 1. */
    REDUCE_SUM("reduce_sum", OpKind.REDUCTION, 1, 1, GradTypeRules::reduceSum,
            "%1 = reduce_sum(%0) {axes=[0,1], keepdims=false} : f32[256]", "axes:ints!", "keepdims:b=false"),
    /**
     * Mean over tokens of −log softmax(logits)[target]: logits (..., V) floating, targets (...) i32/i64.
     * A token whose target is {@code ignore_index} counts for nothing, neither in the sum nor in the
     * count (PyTorch's rule: all ignored gives 0/0 = NaN); any other target outside [0, V) is an error.
     */
    CROSS_ENTROPY("cross_entropy", OpKind.REDUCTION, 2, 2, GradTypeRules::crossEntropy,
            "%2 = cross_entropy(%0, %1) {ignore_index=-100} : f32[]", "ignore_index:i=-100"),
    /** d cross_entropy / d logits from (logits, targets, dloss): (softmax(logits) − onehot(target)) · dloss / count. */
    CROSS_ENTROPY_GRAD("cross_entropy_grad", OpKind.ROWWISE, 3, 3, GradTypeRules::crossEntropyGrad,
            "%3 = cross_entropy_grad(%0, %1, %2) {ignore_index=-100} : f32[2,128,1000]", "ignore_index:i=-100"),

    // --- GEMM
    MATMUL("matmul", OpKind.GEMM, 2, 2, TypeRules::matmul,
            "%2 = matmul(%0, %1) {transpose_b=true} : f32[2,128,768]", "transpose_a:b=false", "transpose_b:b=false"),

    // --- views and movement
    RESHAPE("reshape", OpKind.VIEW, 1, 1, TypeRules::reshape,
            "%1 = reshape(%0) {shape=[2,128,4,64]} : f32[2,128,4,64]", "shape:ints!"),
    PERMUTE("permute", OpKind.VIEW, 1, 1, TypeRules::permute,
            "%1 = permute(%0) {perm=[0,2,1,3]} : f32[2,4,128,64]", "perm:ints!"),
    TRANSPOSE("transpose", OpKind.VIEW, 1, 1, TypeRules::transpose,
            "%1 = transpose(%0) {dim0=-2, dim1=-1} : f32[2,4,64,128]", "dim0:i!", "dim1:i!"),
    SLICE("slice", OpKind.VIEW, 1, 1, TypeRules::slice,
            "%1 = slice(%0) {axis=2, end=256, start=0} : f32[2,128,256]", "axis:i!", "start:i!", "end:i!"),
    CONCAT("concat", OpKind.MOVEMENT, 1, Integer.MAX_VALUE, TypeRules::concat,
            "%2 = concat(%0, %1) {axis=-1} : f32[2,128,512]", "axis:i!"),
    /**
     * Rows of a table picked by integer ids (an embedding lookup): {@code numpy.take(table, ids, axis)},
     * result shape {@code table[:axis] ++ ids ++ table[axis+1:]}. Ids are i32 or i64; a negative id counts
     * from the end once (ONNX: {@code -n..n-1}); anything outside is a run-time error, never a read.
     */
    GATHER("gather", OpKind.MOVEMENT, 2, 2, TypeRules::gather,
            "%2 = gather(%0, %1) {axis=0} : f32[2,128,768]", "axis:i=0"),

    /**
     * The transpose of gather (its gradient): a zero table whose axis {@code axis} has {@code size} rows,
     * and the slices of {@code updates} added at rows {@code ids}: updates is
     * {@code table[:axis] ++ ids ++ table[axis+1:]}. Rows hit by several ids sum in id order (deterministic).
     */
    SCATTER_ADD("scatter_add", OpKind.MOVEMENT, 2, 2, GradTypeRules::scatterAdd,
            "%2 = scatter_add(%0, %1) {axis=0, size=50257} : f32[50257,768]", "axis:i=0", "size:i!"),

    // --- composites made by fusion
    /**
     * softmax(scale · q·kᵀ [+ causal mask]) · v per (batch, head). Fusion also absorbs RoPE on q and k
     * ({@code rope=true}) and the permute after it ({@code out_perm}: the result is written permuted,
     * so {@code out_perm=[0,2,1,3]} gives (b, s, h, e)). q, k, v may be strided views. k and v may
     * have fewer heads hk than q's h, h % hk == 0 (grouped-query attention): query head i reads
     * K/V head i / (h / hk), the order of transformers' repeat_kv. An optional 4th input is an
     * additive mask on the scaled scores, softmax(scale · q·kᵀ + mask), of rank 4 broadcastable to
     * (b, h, s, t): BERT's key-padding mask is (b, 1, 1, t).
     */
    ATTENTION("attention", OpKind.COMPOSITE, 3, 4, TypeRules::attention,
            "%3 = attention(%0, %1, %2) {causal=true, scale=0.125} : f32[2,4,128,64]", "causal:b=false", "scale:f=1.0",
            "rope:b=false", "rope_base:f=10000.0", "out_perm:ints"),
    /**
     * A matmul with its epilogue: {@code act(a·b + bias) + residual…}, inputs a, b, then the bias (when
     * {@code bias=true}, shape [N]), then 0-2 residuals of the result's shape. Accumulates in f32;
     * {@code out} names the result dtype when it differs from a's (autocast: bf16 in, f32 out).
     */
    GEMM("gemm", OpKind.COMPOSITE, 2, 5, TypeRules::gemm,
            "%4 = gemm(%0, %1, %2, %3) {act=\"gelu_tanh\", bias=true} : f32[2,128,1024]",
            "act:s(none|gelu_tanh|gelu_erf|relu|silu)=none", "bias:b=false", "transpose_a:b=false", "transpose_b:b=false", "out:s"),
    /**
     * rms_norm / layer_norm of {@code x (+ residual)} over the last axis, statistics in f32: inputs x,
     * the residual when {@code residual=true}, the weight, then the bias for {@code kind="layer"}.
     * {@code out} names the result dtype when it differs from x's (autocast writes bf16 for a GEMM).
     */
    FUSED_NORM("fused_norm", OpKind.COMPOSITE, 2, 4, TypeRules::fusedNorm,
            "%3 = fused_norm(%0, %1, %2) {eps=1.0E-6, kind=\"rms\", residual=true} : f32[2,128,256]",
            "kind:s(rms|layer)!", "eps:f!", "residual:b=false", "out:s"),
    /**
     * A norm's weight gradient in one pass: {@code dw[j] = Σ_r dy[r, j]·x̂[r, j]} over every leading row r
     * of x and dy (one shape (..., D)), x̂ recomputed per row in f32 as the forward norm computes it
     * ({@code kind="rms"}: x/√(mean(x²) + eps); {@code "layer"}: (x − mean)/√(var + eps)) and never
     * stored. The result is [D] in dy's dtype. Fuse-norm makes it from the norm VJP's composition
     * {@code reduce_sum(mul(dy, norm(x, ones)))}, which writes x̂ and the product (each as large as x).
     */
    NORM_WEIGHT_GRAD("norm_weight_grad", OpKind.COMPOSITE, 2, 2, GradTypeRules::normWeightGrad,
            "%2 = norm_weight_grad(%0, %1) {eps=1.0E-6, kind=\"rms\"} : f32[256]", "kind:s(rms|layer)!", "eps:f!"),
    /** A chain of elementwise ops in one pass over memory; {@code expr} is an {@link ElementwiseExpr} over the inputs. */
    ELEMENTWISE_FUSED("elementwise", OpKind.ELEMENTWISE, 1, Integer.MAX_VALUE, TypeRules::elementwise,
            "%3 = elementwise(%0, %1, %2) {expr=\"gelu_tanh(add($0, mul($1, $2)))\"} : f32[2,128,1024]", "expr:s!");

    /** A shape and dtype rule: the result type from the input types and attributes. */
    @FunctionalInterface
    public interface TypeRule {
        TensorType infer(List<TensorType> inputs, Attrs attrs);
    }

    private final String text;
    private final OpKind kind;
    private final int minArity;
    private final int maxArity;
    private final TypeRule rule;
    private final String example;
    private final List<AttrSpec> attrs;

    Op(String text, OpKind kind, int minArity, int maxArity, TypeRule rule, String example, String... attrs) {
        this.text = text;
        this.kind = kind;
        this.minArity = minArity;
        this.maxArity = maxArity;
        this.rule = rule;
        this.example = example;
        List<AttrSpec> specs = new ArrayList<>();
        for (String a : attrs) {
            specs.add(AttrSpec.parse(a));
        }
        this.attrs = List.copyOf(specs);
    }

    public String text() {
        return text;
    }

    public OpKind kind() {
        return kind;
    }

    public int minArity() {
        return minArity;
    }

    public int maxArity() {
        return maxArity;
    }

    public String example() {
        return example;
    }

    public List<AttrSpec> attrs() {
        return attrs;
    }

    public boolean isElementwise() {
        return kind == OpKind.ELEMENTWISE;
    }

    public boolean isSource() {
        return kind == OpKind.SOURCE;
    }

    /**
     * The result type for these inputs, or {@code null} for sources, whose type is declared.
     * Throws {@link TypeException} when the inputs break the op's rule or its arity.
     */
    public TensorType infer(List<TensorType> inputs, Attrs attrs) {
        if (rule != null && (inputs.size() < minArity || inputs.size() > maxArity)) {
            // before the rule, which may read its inputs by position (found by the graph fuzzer)
            throw new TypeException(text + " takes " + minArity + (maxArity == minArity ? "" : maxArity == Integer.MAX_VALUE ? "+"
                    : "-" + maxArity) + " inputs, found " + inputs.size());
        }
        return rule == null ? null : rule.infer(inputs, withDefaults(attrs));
    }

    /** {@code attrs} with this op's defaults filled in for absent optional attributes. */
    public Attrs withDefaults(Attrs given) {
        Attrs a = given;
        for (AttrSpec s : attrs) {
            if (!a.has(s.name()) && s.dflt() != null) {
                a = a.with(s.name(), s.dflt());
            }
        }
        return a;
    }

    /** The op spelled {@code text}, or {@code null}. */
    public static Op parse(String text) {
        for (Op op : values()) {
            if (op.text.equals(text)) {
                return op;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return text;
    }
}
