package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.broadcastStrides;
import static dev.lantern.cuda.lower.LoweringContext.dims;
import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.kernel.Kernel;
import java.util.ArrayList;
import java.util.List;

/** An elementwise chain (one op, or a fused expression): one kernel, every input read through its broadcast strides. */
final class ElementwiseLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        if (cx.folded.contains(k.name())) {
            return; // the GEMM before it computed it in its epilogue (GeluEpilogue)
        }
        View o = cx.out(k);
        List<ElementwiseSpec.Operand> ops = new ArrayList<>();
        List<Step.Arg> a = new ArrayList<>();
        for (int i = 0; i < k.inputs().size(); i++) {
            View v = cx.in(k, i);
            ops.add(new ElementwiseSpec.Operand(v.dtype(), broadcastStrides(v, o.shape())));
            a.add(ptr(v));
        }
        List<ElementwiseSpec.Step> chain = ExpressionChain.of(k.node(), ops.size());
        a.add(ptr(o));
        a.add(new Step.I64(o.shape().numel()));
        cx.launch(new ElementwiseSpec("lt_ew", dims(o.shape()), ops, chain, o.dtype()), a);
    }
}
