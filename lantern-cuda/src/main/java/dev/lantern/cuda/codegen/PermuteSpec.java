package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;

/**
 * A materialising permute: {@code out = permute(in, perm)} with in contiguous of shape
 * {@code inShape}; {@code out.shape[i] = inShape[perm[i]]}, out contiguous.
 *
 * <pre>
 * // (batch, seq, heads, head_dim) -&gt; (batch, heads, seq, head_dim)
 * new PermuteSpec("lt_bshd_to_bhsd", List.of(16L, 1024L, 32L, 128L), List.of(0, 2, 1, 3), BF16)
 * </pre>
 *
 * When the last axis stays last, the copy is an elementwise copy with permuted strides
 * (16-byte vectors along the last axis). When it moves, a 32x32 tile goes through shared
 * memory so that both the read and the write are coalesced. Kernel arguments: in, out, n.
 */
public record PermuteSpec(String name, List<Long> inShape, List<Integer> perm, DType dtype) implements KernelSpec {
    public PermuteSpec {
        KernelSpec.checkName(name);
        inShape = List.copyOf(inShape);
        perm = List.copyOf(perm);
        if (inShape.size() != perm.size() || inShape.isEmpty()) {
            throw new CodegenException(name + ": perm " + perm + " does not fit shape " + inShape);
        }
        boolean[] seen = new boolean[perm.size()];
        for (int p : perm) {
            if (p < 0 || p >= perm.size() || seen[p]) {
                throw new CodegenException(name + ": perm " + perm + " is not a permutation of 0.." + (perm.size() - 1));
            }
            seen[p] = true;
        }
        for (long d : inShape) {
            KernelSpec.checkPositive(d, name + ": dim");
        }
    }

    public List<Long> outShape() {
        List<Long> out = new ArrayList<>();
        for (int p : perm) {
            out.add(inShape.get(p));
        }
        return out;
    }

    public long numel() {
        long n = 1;
        for (long d : inShape) {
            n *= d;
        }
        return n;
    }

    /** The input's element strides over the output's dims: stride of in dim perm[i] at i. */
    public List<Long> inStridesOverOut() {
        List<Long> inStrides = ElementwiseSpec.contiguousStrides(inShape);
        List<Long> s = new ArrayList<>();
        for (int p : perm) {
            s.add(inStrides.get(p));
        }
        return s;
    }

    /** Whether the last axis keeps its place after dropping size-1 axes (then a strided vector copy). */
    boolean lastAxisStays() {
        int last = perm.size() - 1;
        int inLast = last;
        while (inLast > 0 && inShape.get(inLast) == 1) {
            inLast--;
        }
        int outLast = last;
        while (outLast > 0 && inShape.get(perm.get(outLast)) == 1) {
            outLast--;
        }
        return perm.get(outLast) == inLast;
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        if (lastAxisStays()) {
            ElementwiseSpec copy = new ElementwiseSpec(name, outShape(),
                    List.of(new ElementwiseSpec.Operand(dtype, inStridesOverOut())), List.of(), dtype);
            return copy.render(target);
        }
        return new TransposeRenderer(this, target).render();
    }
}
