package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;
import java.util.List;

/**
 * A copy of {@code shape} elements between two strided layouts of the same dtype:
 * {@code out[Σ i_d · dstStrides_d] = in[Σ i_d · srcStrides_d]}. What slices (the source read at an
 * offset, through its strides) and concats (each input written at its offset into the output's
 * layout) lower to; the offsets are the pointers' (the step's), not the kernel's. One thread per
 * element, the index decomposed over compile-time sizes. Kernel arguments: in, out, n.
 */
public record StridedCopySpec(String name, List<Long> shape, List<Long> srcStrides, List<Long> dstStrides, DType dtype)
        implements KernelSpec {
    public StridedCopySpec {
        KernelSpec.checkName(name);
        shape = List.copyOf(shape);
        srcStrides = List.copyOf(srcStrides);
        dstStrides = List.copyOf(dstStrides);
        if (shape.isEmpty() || shape.size() != srcStrides.size() || shape.size() != dstStrides.size()) {
            throw new CodegenException(name + ": shape " + shape + " and strides " + srcStrides + " / " + dstStrides + " differ in rank");
        }
        for (long d : shape) {
            KernelSpec.checkPositive(d, name + ": dim");
        }
        for (int i = 0; i < shape.size(); i++) {
            if (srcStrides.get(i) < 0 || dstStrides.get(i) < 0) {
                throw new CodegenException(name + ": negative stride");
            }
        }
    }

    public long numel() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        return new StridedCopyRenderer(this, target).render();
    }
}
