package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.NormSpec;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import java.util.ArrayList;
import java.util.List;

/**
 * rms_norm, layer_norm, fused_norm: one row kernel. A residual norm also writes x + r, which a
 * later GEMM with the same two residuals reads as its C: over r itself when nothing else reads r
 * ({@link #sumMayOverwriteResidual}), else into a session-long scratch buffer.
 */
final class NormLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        Node n = k.node();
        boolean res = n.op() == Op.FUSED_NORM && n.attrs().getBool("residual", false);
        NormSpec.Kind kind = switch (n.op()) {
            case RMS_NORM -> NormSpec.Kind.RMS;
            case LAYER_NORM -> NormSpec.Kind.LAYER;
            default -> n.attrs().getString("kind", "rms").equals("rms") ? NormSpec.Kind.RMS : NormSpec.Kind.LAYER;
        };
        int i = 0;
        View x = cx.contiguous(cx.in(k, i++));
        View r = res ? cx.contiguous(cx.in(k, i++)) : null;
        View w = cx.contiguous(cx.in(k, i++));
        View b = i < k.inputs().size() ? cx.contiguous(cx.in(k, i)) : null;
        View o = cx.out(k);
        Shape s = x.shape();
        long rows = s.numel() / s.last();
        double eps = n.attrs().getDouble("eps", kind == NormSpec.Kind.RMS ? 1e-6 : 1e-5);
        if (res && r.dtype() != x.dtype()) {
            throw new CodegenException("residual norm over " + x.dtype() + " + " + r.dtype());
        }
        if (b != null && b.dtype() != w.dtype()) {
            throw new CodegenException("norm weight " + w.dtype() + " and bias " + b.dtype() + " differ");
        }
        NormSpec spec = new NormSpec("lt_norm", kind, rows, s.last(), eps, x.dtype(), w.dtype(), o.dtype(), res, b != null);
        List<Step.Arg> a = new ArrayList<>();
        a.add(ptr(x));
        if (res) {
            a.add(ptr(r));
        }
        a.add(ptr(w));
        if (b != null) {
            a.add(ptr(b));
        }
        a.add(ptr(o));
        if (res) {
            // the kernel writes x + r anyway; a later GEMM with the same two residuals reads it as C
            String key = x.buf().name() + "+" + r.buf().name();
            Buf sum = cx.sums.get(key);
            if (sum == null) {
                if (sumMayOverwriteResidual(cx, k, x, r) && KernelNames.render(spec, cx.tuned(spec)).variant().equals("registers")) {
                    // every later reader of r reads x + r (the pair-residual GEMM takes it as C), and the
                    // registers kernel reads each element of r once before writing the sum at the same place
                    sum = r.buf();
                } else {
                    sum = new Buf(Buf.Kind.SCRATCH, "sum_" + cx.scratch.size() + "_" + n.name(), s.numel() * x.dtype().bytes(), 0);
                    cx.scratch.put(sum.name(), sum);
                }
                cx.sums.put(key, sum);
            }
            a.add(new Step.Ptr(sum, s.numel() * x.dtype().bytes()));
        }
        a.add(new Step.I64(rows));
        cx.launch(spec, a);
    }

    /**
     * Whether residual norm {@code k} may write x + r over r: r is an intermediate (not a source,
     * not an output) read directly, and every other kernel that reads r's storage is a later gemm
     * that reads r directly, with no activation, whose residuals are exactly x and r (it takes the
     * sum as C).
     */
    private static boolean sumMayOverwriteResidual(LoweringContext cx, Kernel k, View x, View r) {
        String rv = r.buf().name();
        Operand ro = k.inputs().get(1);
        if (r.buf().kind() != Buf.Kind.VALUE || ro.origin() != Operand.Origin.INTERMEDIATE || !ro.value().equals(rv)
                || cx.outputStorage.contains(rv) || !k.inputs().get(0).value().equals(x.buf().name())) {
            return false;
        }
        for (Kernel u : cx.model.kernels()) {
            if (u.index() == k.index() || u.inputs().stream().noneMatch(o -> o.storage().equals(rv))) {
                continue;
            }
            Node un = u.node();
            boolean bias = un.attrs().getBool("bias", false);
            List<String> resid = un.op() == Op.GEMM ? un.inputs().subList(bias ? 3 : 2, un.inputs().size()) : List.of();
            boolean direct = u.inputs().stream().filter(o -> o.storage().equals(rv)).allMatch(o -> o.value().equals(rv));
            if (un.op() != Op.GEMM || !direct || u.index() < k.index() || !un.attrs().getString("act", "none").equals("none")
                    || resid.size() != 2 || !resid.contains(rv) || !resid.contains(x.buf().name())) {
                return false;
            }
        }
        return true;
    }
}
