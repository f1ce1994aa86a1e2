package dev.lantern.passes;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.passes.Rule.Rewrite;

import java.util.ArrayList;
import java.util.List;

/**
 * fuse-norm's backward rule, residual-into-norm-grad: the residual stream's gradient is summed
 * into the norm's dx kernel instead of by an add of its own.
 * <pre>
 *   add(rms_norm_grad(x, w, dy), r)   -> rms_norm_grad(x, w, dy, r) {residual=true}
 *   add(r, layer_norm_grad(x, w, dy)) -> layer_norm_grad(x, w, dy, r) {residual=true}
 * </pre>
 * Only when the add is dx's one reader and r has dx's shape and dtype (no broadcast). The sum is
 * done in f32 after dx and rounded once, so with an f32 dx the result is bit for bit the add's;
 * the bytes saved are dx's write and re-read (at 16x1024x4096 f32, a 193 us kernel per block norm).
 */
final class NormGradResidual {
    private NormGradResidual() {}

    static final Rule RULE = Rule.of("residual-into-norm-grad", (n, cx) -> {
        if (n.op() != Op.ADD) {
            return null;
        }
        for (int side = 0; side < 2; side++) {
            Node g = cx.in(n, side);
            if (g == null || (g.op() != Op.RMS_NORM_GRAD && g.op() != Op.LAYER_NORM_GRAD)
                    || g.attrs().getBool("residual", false) || !cx.onlyUsedBy(g.name(), n)) {
                continue;
            }
            String r = n.input(1 - side);
            TensorType rt = cx.type(r);
            if (!rt.shape().equals(g.type().shape()) || rt.dtype() != g.type().dtype()) {
                continue;
            }
            List<String> ins = new ArrayList<>(g.inputs());
            ins.add(r);
            Node fused = Build.named(cx, n.name(), g.op(), g.attrs().with("residual", true), ins);
            if (fused.type().equals(n.type())) {
                return Rewrite.to(fused);
            }
        }
        return null;
    });
}
