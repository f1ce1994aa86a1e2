package dev.lantern.plan;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.kernel.Operand;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * plan-memory: lifetimes from the kernel order, offsets by interval packing.
 * <ol>
 * <li>Every kernel output (side outputs too) and scratch tensor is a buffer; a free view is its base value's buffer,
 *     so a read through a view extends the base's lifetime. Graph inputs, parameters and constants
 *     live outside the arena. A graph output lives to the end.
 * <li>Buffers are placed largest first (ties: earlier first, then by name: deterministic). Each
 *     goes into the smallest gap between the already placed buffers whose lifetimes overlap its
 *     own (best fit; ties to the lowest offset), or on top of them when no gap fits.
 * <li>An elementwise kernel writes in place over an input that dies at it ({@link InPlace}: same
 *     shape, dense, as many bytes as the output): the two share one slot, handed over at that
 *     kernel, as XLA's buffer assignment and Inductor's in-place buffers do. Every backend's
 *     elementwise kernel reads an element before it writes the element at the same index, and no
 *     other element, so the write cannot clobber a read still to come.
 * <li>The planned peak is the arena's size; the lower bound is the largest sum of live buffer
 *     sizes at any kernel (an in-place pair counted once); naive is the sum of all buffer sizes.
 * </ol>
 */
public final class MemoryPlanner {
    /**
     * Every buffer starts on a 256-byte boundary: a cache line for the CPU's vector loads, and the
     * pointer alignment cuBLASLt's plans assume by default (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES
     * = 256): at 64, a value after an odd-sized one handed a GEMM a pointer its algorithm was not
     * chosen for (the CUDA launch contract checks it).
     */
    public static final long ALIGN = 256;

    private MemoryPlanner() {}

    public static MemoryPlan plan(Graph g, List<Kernel> kernels) {
        List<Buffer> buffers = lifetimes(g, kernels);
        Map<String, String> inPlace = InPlace.of(g, kernels, buffers);
        // each chain of hand-overs is packed as one slot, then split back into its values' buffers
        Map<String, String> root = new LinkedHashMap<>();
        Map<String, Buffer> slots = new LinkedHashMap<>();
        for (Buffer b : buffers) {
            String over = inPlace.get(b.value());
            String r = over == null ? b.value() : root.get(over);
            root.put(b.value(), r);
            Buffer slot = slots.get(r);
            slots.put(r, slot == null ? b : new Buffer(r, slot.bytes(), slot.first(), Math.max(slot.last(), b.last())));
        }
        MemoryPlan packed = pack(List.copyOf(slots.values()), kernels.size());
        Map<String, Long> offset = new LinkedHashMap<>();
        packed.placements().forEach(p -> offset.put(p.buffer().value(), p.offset()));
        List<MemoryPlan.Placement> placed = new ArrayList<>();
        for (Buffer b : buffers) {
            placed.add(new MemoryPlan.Placement(b, offset.get(root.get(b.value()))));
        }
        placed.sort(Comparator.comparingLong(MemoryPlan.Placement::offset).thenComparing(p -> p.buffer().value()));
        return new MemoryPlan(placed, packed.arenaBytes(), packed.lowerBound(), buffers.stream().mapToLong(Buffer::bytes).sum(),
                kernels.size(), inPlace);
    }

    /**
     * Places any buffers with lifetimes over {@code steps} steps (rules 2 and 3 above): what a
     * backend uses for memory of its own (the CUDA lowering's transient copies, by step), so that
     * one planner places every byte.
     */
    public static MemoryPlan pack(List<Buffer> buffers, int steps) {
        List<MemoryPlan.Placement> placed = new ArrayList<>();
        List<Buffer> order = new ArrayList<>(buffers);
        order.sort(Comparator.comparingLong(Buffer::bytes).reversed().thenComparingInt(Buffer::first).thenComparing(Buffer::value));
        long arena = 0;
        for (Buffer b : order) {
            List<MemoryPlan.Placement> live = placed.stream().filter(p -> p.buffer().overlaps(b))
                    .sorted(Comparator.comparingLong(MemoryPlan.Placement::offset)).toList();
            long best = -1;
            long bestGap = Long.MAX_VALUE;
            long cursor = 0;
            for (MemoryPlan.Placement p : live) {
                long gap = p.offset() - cursor;
                if (gap >= b.bytes() && gap < bestGap) {
                    best = cursor;
                    bestGap = gap;
                }
                cursor = Math.max(cursor, p.end());
            }
            long offset = best >= 0 ? best : cursor;
            placed.add(new MemoryPlan.Placement(b, offset));
            arena = Math.max(arena, offset + b.bytes());
        }
        placed.sort(Comparator.comparingLong(MemoryPlan.Placement::offset).thenComparing(p -> p.buffer().value()));
        return new MemoryPlan(placed, arena, lowerBound(buffers, steps), buffers.stream().mapToLong(Buffer::bytes).sum(), steps, Map.of());
    }

    /** Buffers in kernel order with their [first, last] kernel indices. */
    static List<Buffer> lifetimes(Graph g, List<Kernel> kernels) {
        Map<String, int[]> life = new LinkedHashMap<>();
        Map<String, Long> size = new LinkedHashMap<>();
        for (Kernel k : kernels) {
            for (Operand in : k.inputs()) {
                int[] l = life.get(in.storage());
                if (l != null) {
                    l[1] = Math.max(l[1], k.index());
                }
            }
            for (Operand o : outputs(k)) {
                life.put(o.value(), new int[] {k.index(), k.index()});
                size.put(o.value(), aligned(o.bytes()));
            }
            for (Operand w : k.workspace()) {
                life.put(w.value(), new int[] {k.index(), k.index()});
                size.put(w.value(), aligned(w.bytes()));
            }
        }
        for (String out : g.outputs()) {
            int[] l = life.get(base(g, out));
            if (l != null) {
                l[1] = Math.max(kernels.size() - 1, l[1]);
            }
        }
        keepSlicedSources(kernels, life);
        List<Buffer> r = new ArrayList<>();
        life.forEach((v, l) -> r.add(new Buffer(v, size.get(v), l[0], l[1])));
        return r;
    }

    /**
     * A slice read only by attention kernels may be read in place from its source (the CUDA
     * backend does: GPT-2's q|k|v columns), so the source lives as long as the slice is read; so
     * may a slice that is one contiguous block of its source read only by attention, rope and
     * permute kernels (the flash backward's dk and dv halves).
     */
    private static void keepSlicedSources(List<Kernel> kernels, Map<String, int[]> life) {
        for (Kernel k : kernels) {
            if (k.node().op() != dev.lantern.ir.Op.SLICE || k.inputs().isEmpty()) {
                continue;
            }
            String out = k.output().value();
            java.util.Set<dev.lantern.ir.Op> readers = block(k)
                    ? java.util.EnumSet.of(dev.lantern.ir.Op.ATTENTION, dev.lantern.ir.Op.ROPE, dev.lantern.ir.Op.PERMUTE)
                    : java.util.EnumSet.of(dev.lantern.ir.Op.ATTENTION);
            boolean onlyAttention = kernels.stream().allMatch(r -> readers.contains(r.node().op())
                    || r.inputs().stream().noneMatch(o -> o.storage().equals(out)));
            int[] sliced = life.get(out);
            int[] source = life.get(k.inputs().getFirst().storage());
            if (onlyAttention && sliced != null && source != null) {
                source[1] = Math.max(source[1], sliced[1]);
            }
        }
    }

    /** Whether slice {@code k} is one contiguous block of its dense input (every axis before the sliced one is 1). */
    private static boolean block(Kernel k) {
        Operand in = k.inputs().getFirst();
        int rank = in.shape().rank();
        int axis = k.node().attrs().getInt("axis", 0);
        axis = axis < 0 ? axis + rank : axis;
        if (axis == rank - 1 || !java.util.Arrays.equals(in.strides(), in.shape().contiguousStrides())) {
            return false;
        }
        for (int a = 0; a < axis; a++) {
            if (in.shape().dim(a) != 1) {
                return false;
            }
        }
        return true;
    }

    /** What {@code k} writes: its output, then its side outputs (each live from {@code k} to its last reader). */
    private static List<Operand> outputs(Kernel k) {
        List<Operand> all = new ArrayList<>(k.sideOutputs().size() + 1);
        all.add(k.output());
        all.addAll(k.sideOutputs());
        return all;
    }

    /** The value whose storage {@code value} reads: itself, or the base of the free view chain it is. */
    public static String base(Graph g, String value) {
        return KernelLowering.storage(g, value);
    }

    private static long lowerBound(List<Buffer> buffers, int steps) {
        long best = 0;
        for (int t = 0; t < steps; t++) {
            long live = 0;
            for (Buffer b : buffers) {
                if (b.first() <= t && t <= b.last()) {
                    live += b.bytes();
                }
            }
            best = Math.max(best, live);
        }
        return best;
    }

    /** {@code bytes} rounded up to {@link #ALIGN} (at least one unit). */
    public static long aligned(long bytes) {
        return (Math.max(bytes, 1) + ALIGN - 1) / ALIGN * ALIGN;
    }
}
