package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * A contiguous dtype conversion of {@code numel} elements: {@code out[i] = (to) in[i]},
 * through f32, round-to-nearest-even. Rendered as an elementwise chain with no steps.
 */
public record CastSpec(String name, long numel, DType from, DType to) implements KernelSpec {
    public CastSpec {
        KernelSpec.checkName(name);
        KernelSpec.checkPositive(numel, name + ": numel");
    }

    /** The equivalent elementwise spec (one input, no steps, another output dtype). */
    public ElementwiseSpec asElementwise() {
        List<Long> shape = List.of(numel);
        return new ElementwiseSpec(name, shape, List.of(ElementwiseSpec.Operand.contiguous(from, shape)), List.of(), to);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        return asElementwise().render(target);
    }
}
