package dev.lantern.passes;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.Rule.Rewrite;

import java.util.ArrayList;
import java.util.List;

/**
 * fuse-gemm: fold a matmul's elementwise consumers into its epilogue, computed on the f32
 * accumulator before the single store: {@code gemm(a, b[, bias][, r0[, r1]]) {act, out}} computes
 * {@code act(a·b + bias) + r0 + r1} and writes dtype {@code out}. Algorithm (rules to a fixed point):
 * <pre>
 *   matmul(a, b)                      -> gemm(a, b)
 *   cast(gemm) {to=d}                 -> gemm {out=d}            (autocast's f32 boundary)
 *   add(gemm, bias[N])                -> gemm(.., bias) {bias=true}
 *   gelu / relu / silu(gemm)          -> gemm {act=...}   (on CUDA not silu / erf GELU read by an
 *                                                        elementwise op: cuBLASLt has no epilogue for
 *                                                        them, so they join the reader's kernel, as
 *                                                        LLaMA's silu(gate)·up does)
 *   add(gemm, add(x, y))              -> gemm(.., x, y)           when add(x, y) dies (see below)
 *   add(gemm, r)                      -> gemm(.., r)    unless the sum is a residual stream that a norm reads
 * </pre>
 * The first four rules run to a fixed point before the residual rules join them. The gemm must have no other reader (it is not stored any more) and epilogue order must hold
 * (bias, then act, then residuals). Cost (bytes saved): each rule saves writing and re-reading
 * the gemm's result, 2·|C| bytes. The sum rule reads x and y instead of x+y: it pays one extra read
 * of |C| but saves the write of x+y and its kernel, a net gain only when every reader of x+y
 * absorbs it too (the next norm's prologue does) — {@link #sumDies} decides that.
 * <p>The pre-norm residual stream {@code x1 = x + attn} could also go into the attention output
 * GEMM's epilogue (x1 written once, read by the norm and the next residual). That form reads x1
 * once less (|x1| bytes) but leaves the norm a lone kernel; with single-output nodes the two forms
 * have the same kernel count. We give the sum to the norm's prologue (and recompute it in the
 * down-projection's epilogue), the fused add+norm that GPU stacks use, at the price of that one
 * extra read. See docs/adr/0003-fusion-and-kernel-ir.md.
 * <p>With {@code residualStreamInGemm} (the CUDA pipeline) the other form is taken: the attention
 * output GEMM adds x through its C input and writes x1, the norm reads x1 alone and the
 * down-projection adds x1 through C. cuBLASLt reads C inside its epilogue, overlapped with the
 * next tile's main loop, so the GEMM pays little for it, while the norm kernel moves two tensors
 * instead of four (docs/adr/0007-residual-stream-and-query-rope-on-cuda.md).
 */
public final class FuseGemmEpilogue implements Pass {
    static final List<Rule> RULES = rules(false);
    static final List<Rule> RULES_STREAM_IN_GEMM = rules(true);

    private final boolean residualStreamInGemm;

    /** The default form: the residual stream goes to the next norm's prologue. */
    public FuseGemmEpilogue() {
        this(false);
    }

    /** {@code residualStreamInGemm}: a sum that a norm reads is written by the GEMM epilogue instead. */
    public FuseGemmEpilogue(boolean residualStreamInGemm) {
        this.residualStreamInGemm = residualStreamInGemm;
    }

    private List<Rule> rules() {
        return residualStreamInGemm ? RULES_STREAM_IN_GEMM : RULES;
    }

    private static List<Rule> rules(boolean streamInGemm) {
        return List.of(
            Rule.of("matmul-to-gemm", (n, cx) -> n.op() == Op.MATMUL ? Rewrite.to(new Node(n.name(), Op.GEMM, n.inputs(), n.attrs(), n.type())) : null),
            Rule.of("cast-into-gemm", (n, cx) -> {
                // only to a float: the epilogue rounds the f32 accumulator, it does not convert to integers
                Node g = n.op() == Op.CAST && n.type().dtype().isFloating() ? single(n, 0, cx) : null;
                return g == null ? null : Rewrite.to(Build.named(cx, n.name(), Op.GEMM, g.attrs().with("out", n.type().dtype().text()), g.inputs()));
            }),
            Rule.of("bias-into-gemm", (n, cx) -> {
                for (int side = 0; side < 2 && n.op() == Op.ADD; side++) {
                    Node g = single(n, side, cx);
                    Node b = cx.in(n, 1 - side);
                    if (g != null && plain(g) && b.type().shape().rank() == 1 && b.type().shape().dim(0) == g.type().shape().last()
                            && n.type().shape().equals(g.type().shape())) {
                        return Rewrite.to(Build.named(cx, n.name(), Op.GEMM, g.attrs().with("bias", true), List.of(g.input(0), g.input(1), b.name())));
                    }
                }
                return null;
            }),
            Rule.of("act-into-gemm", (n, cx) -> {
                String act = switch (n.op()) {
                    case GELU -> n.attrs().getString("approximate", "tanh").equals("tanh") ? "gelu_tanh" : "gelu_erf";
                    case RELU -> "relu";
                    case SILU -> "silu";
                    default -> null;
                };
                Node g = act == null ? null : single(n, 0, cx);
                if (g == null || !g.attrs().getString("act", "none").equals("none") || residuals(g) > 0) {
                    return null;
                }
                if (streamInGemm && (act.equals("silu") || act.equals("gelu_erf")) && readByElementwise(n, cx)) {
                    return null; // cuBLASLt has no such epilogue: a kernel after the GEMM would apply it, so it joins its reader's instead
                }
                return Rewrite.to(Build.named(cx, n.name(), Op.GEMM, g.attrs().with("act", act), g.inputs()));
            }),
            Rule.of("residual-sum-into-gemm", (n, cx) -> {
                for (int side = 0; side < 2 && n.op() == Op.ADD; side++) {
                    Node g = single(n, side, cx);
                    Node s = cx.in(n, 1 - side, Op.ADD);
                    if (g != null && residuals(g) == 0 && s != null && !(streamInGemm && feedsNorm(s, cx)) && keepsShape(g, n)
                            && sumDies(s, n, cx) && sameType(cx, n, s.input(0), s.input(1))) {
                        return Rewrite.to(withResiduals(cx, n, g, s.input(0), s.input(1)));
                    }
                }
                return null;
            }),
            Rule.of("residual-into-gemm", (n, cx) -> {
                if (!streamInGemm && n.op() == Op.ADD && feedsNorm(n, cx) && sumDies(n, n, cx)) {
                    return null; // the residual stream: the next norm's prologue takes it (fuse-norm)
                }
                for (int side = 0; side < 2 && n.op() == Op.ADD; side++) {
                    Node g = single(n, side, cx);
                    String r = n.input(1 - side);
                    if (g != null && residuals(g) < 2 && keepsShape(g, n) && sameType(cx, n, r)) {
                        return Rewrite.to(withResiduals(cx, n, g, r));
                    }
                }
                return null;
            }));
    }

    @Override
    public String name() {
        return residualStreamInGemm ? "fuse-gemm-cuda" : "fuse-gemm";
    }

    @Override
    public String summary() {
        return "matmul -> gemm, with output cast, bias, activation and residual adds folded into its epilogue"
                + (residualStreamInGemm ? "; the residual stream a norm reads too (the CUDA pipeline's form)" : "");
    }

    @Override
    public Graph run(Graph g) {
        Verifier.verify(g, name());
        // Two rounds: output casts, biases and activations settle first, so that the residual
        // rules see finished gemms on both sides of a residual stream.
        Graph settled = RewriteEngine.run(name(), g, rules().subList(0, 4));
        return RewriteEngine.run(name(), settled, rules());
    }

    /** Input i of n when it is a gemm that only n reads. */
    private static Node single(Node n, int i, RewriteContext cx) {
        Node g = cx.in(n, i, Op.GEMM);
        return g != null && cx.onlyUsedBy(g.name(), n) ? g : null;
    }

    /** No epilogue yet: bias may still go first. */
    /** Whether every reader of n is an elementwise op (not a cast) that fuse-elementwise can take n into. */
    private static boolean readByElementwise(Node n, RewriteContext cx) {
        List<Node> users = cx.users(n.name());
        return !users.isEmpty() && !cx.isOutput(n.name())
                && users.stream().allMatch(u -> u.op().kind() == dev.lantern.ir.OpKind.ELEMENTWISE && u.op() != Op.CAST);
    }

    private static boolean plain(Node g) {
        return !g.attrs().getBool("bias", false) && g.attrs().getString("act", "none").equals("none") && residuals(g) == 0;
    }

    static int residuals(Node g) {
        return g.inputs().size() - 2 - (g.attrs().getBool("bias", false) ? 1 : 0);
    }

    /**
     * Whether the add {@code n} has the gemm's own shape: an add that broadcasts the product up
     * (f32[4,8] + f32[2,4,8]) writes more than the gemm does, so its residual cannot go in the epilogue.
     */
    private static boolean keepsShape(Node g, Node n) {
        return g.type().shape().equals(n.type().shape()) && g.type().dtype() == n.type().dtype();
    }

    private static boolean sameType(RewriteContext cx, Node n, String... values) {
        for (String v : values) {
            if (!cx.type(v).shape().equals(n.type().shape()) || cx.type(v).dtype() != n.type().dtype()) {
                return false;
            }
        }
        return true;
    }

    private static Node withResiduals(RewriteContext cx, Node n, Node g, String... rs) {
        List<String> ins = new ArrayList<>(g.inputs());
        ins.addAll(List.of(rs));
        Attrs a = g.attrs();
        return Build.named(cx, n.name(), Op.GEMM, a, ins);
    }

    private static boolean feedsNorm(Node n, RewriteContext cx) {
        return cx.users(n.name()).stream().anyMatch(u -> (u.op() == Op.RMS_NORM || u.op() == Op.LAYER_NORM) && u.input(0).equals(n.name()));
    }

    /**
     * Whether every reader of the sum {@code s} (other than {@code self}) can recompute it from its two
     * inputs: a norm (its residual prologue) or another single-reader gemm's residual add. Then s is
     * never written.
     */
    static boolean sumDies(Node s, Node self, RewriteContext cx) {
        if (cx.isOutput(s.name())) {
            return false;
        }
        for (Node u : cx.users(s.name())) {
            boolean norm = (u.op() == Op.RMS_NORM || u.op() == Op.LAYER_NORM) && u.input(0).equals(s.name())
                    && !u.inputs().subList(1, u.inputs().size()).contains(s.name());
            boolean gemmAdd = u.op() == Op.ADD && (Build.isGemm(cx.producer(u.input(0))) || Build.isGemm(cx.producer(u.input(1))));
            if (!u.name().equals(self.name()) && !norm && !gemmAdd) {
                return false;
            }
        }
        return true;
    }
}
