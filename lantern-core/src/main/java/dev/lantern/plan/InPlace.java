package dev.lantern.plan;

import dev.lantern.ir.Graph;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelKind;
import dev.lantern.kernel.Operand;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which elementwise kernels write over an input that dies at them. Kernel {@code k} (kind
 * {@link KernelKind#ELEMENTWISE}) takes input {@code x} when:
 * <ul>
 * <li>x is a kernel's output in the arena (not a graph input, parameter or constant), read
 *     by k as itself: dense, not through a view, with k's output shape (no broadcast), and it is
 *     not a graph output;</li>
 * <li>k is x's last reader, and x's slot has the bytes of k's output (the same element size).</li>
 * </ul>
 * The first such input in k's input order is taken, unless another is the output of the kernel just
 * before k: that one is, so that a backend may compute k in that kernel's epilogue with no write
 * moved onto live bytes (CUDA's DGELU: {@code gelu_grad(h, g)} right after the GEMM that made g
 * is written over g, and the GEMM writes it there). The handover is safe on every backend because
 * an elementwise kernel loads element i of each input before it stores element i of its output, and
 * loads no other element of a same-shape input: the CPU's {@code ElementwiseProgram} and
 * {@code Elementwise} loops per chunk, CUDA's {@code ElementwiseSpec} per thread and vector.
 * Row kernels take nothing: a norm gradient's residual r (fuse-norm) gets an output of its own, as
 * the kernel reads x and dy over several passes and is not checked for the hand-over.
 */
final class InPlace {
    private InPlace() {}

    /** Output value -> the input value it is written over, for {@code buffers} as planned from {@code kernels}. */
    static Map<String, String> of(Graph g, List<Kernel> kernels, List<Buffer> buffers) {
        Map<String, Buffer> life = new HashMap<>();
        buffers.forEach(b -> life.put(b.value(), b));
        Set<String> outputs = new HashSet<>();
        g.outputs().forEach(o -> outputs.add(MemoryPlanner.base(g, o)));
        Map<String, String> taken = new LinkedHashMap<>();
        for (Kernel k : kernels) {
            if (k.kind() != KernelKind.ELEMENTWISE) {
                continue;
            }
            Buffer out = life.get(k.output().value());
            Buffer over = null; // the first eligible input, unless a later one was made by the kernel just before k
            for (Operand in : k.inputs()) {
                Buffer x = life.get(in.storage());
                if (x == null || !eligible(k, in, x, out) || outputs.contains(x.value())) {
                    continue;
                }
                if (over == null || madeJustBefore(x, k) && !madeJustBefore(over, k)) {
                    over = x;
                }
            }
            if (over != null) {
                taken.put(out.value(), over.value());
            }
        }
        return taken;
    }

    private static boolean madeJustBefore(Buffer x, Kernel k) {
        return x.first() == k.index() - 1;
    }

    private static boolean eligible(Kernel k, Operand in, Buffer x, Buffer out) {
        return in.origin() == Operand.Origin.INTERMEDIATE && in.storage().equals(in.value())
                && in.shape().equals(k.output().shape()) && dense(in) && in.dtype().bytes() == k.output().dtype().bytes()
                && x.last() == k.index() && x.first() < k.index() && x.bytes() == out.bytes();
    }

    private static boolean dense(Operand o) {
        long expected = 1;
        long[] strides = o.strides();
        for (int d = strides.length - 1; d >= 0; d--) {
            long dim = o.shape().dim(d);
            if (dim != 1 && strides[d] != expected) {
                return false;
            }
            expected *= dim;
        }
        return true;
    }
}
