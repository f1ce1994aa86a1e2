package dev.lantern.cuda.lower;

import static dev.lantern.cuda.lower.LoweringContext.dims;
import static dev.lantern.cuda.lower.LoweringContext.ptr;

import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.cuda.codegen.PermuteSpec;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Data movement: a permute that must be materialised (the tiled transpose kernel for a contiguous
 * input, else a strided copy) and a reshape of a strided value (a copy to dense).
 */
final class CopyLowerer implements KernelLowerer {
    @Override
    public void lower(Kernel k, LoweringContext cx) {
        View x = cx.in(k, 0);
        View o = cx.out(k);
        if (k.node().op() == Op.RESHAPE) {
            cx.materialiseInto(x, o);
            return;
        }
        int[] perm = k.node().attrs().getInts("perm");
        if (x.denseStrides() && x.dtype() == o.dtype()) { // (a slice read in place starts past its buffer's start)
            PermuteSpec spec = new PermuteSpec("lt_permute", dims(x.shape()), Arrays.stream(perm).boxed().toList(), x.dtype());
            cx.launch(spec, List.of(ptr(x), ptr(o), new Step.I64(x.shape().numel())));
            return;
        }
        List<Long> strides = new ArrayList<>();
        for (int p : perm) {
            strides.add(x.strides()[p]);
        }
        ElementwiseSpec spec = new ElementwiseSpec("lt_copy", dims(o.shape()),
                List.of(new ElementwiseSpec.Operand(x.dtype(), strides)), List.of(), o.dtype());
        cx.launch(spec, List.of(ptr(x), ptr(o), new Step.I64(o.shape().numel())));
    }
}
