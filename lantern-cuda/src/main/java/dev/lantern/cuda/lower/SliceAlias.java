package dev.lantern.cuda.lower;

import dev.lantern.ir.Op;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import dev.lantern.plan.MemoryPlan;
import java.util.ArrayList;
import java.util.List;

/**
 * A slice along the last axis of a dense tensor, read in place instead of copied: GPT-2's q, k
 * and v are column blocks of one q|k|v projection, and the attention kernel reads any strides, so
 * the three copies (1 ms of a GPT-2-medium prefill on the H200) are not needed. A reader's strides
 * over the dense slice (rows {@code width} apart) become strides over the source (rows
 * {@code sourceWidth} apart): a stride that is a multiple of the row moves by source rows, one
 * below the row stays within it. Taken only when every reader is an attention kernel (which reads
 * through {@link LoweringContext#ptr(View)}, offset included), every reader stride maps, and no
 * buffer the memory plan places after the source dies overlaps the source's bytes before the last
 * reader: the source must still hold its values when the attention reads them (the core memory
 * planner keeps such a source alive, {@code MemoryPlanner.keepSlicedSources}). The block must
 * start, and source rows be, 16-byte aligned, as the attention kernels' vector and TMA loads are.
 *
 * <p>A slice that is one contiguous block of its dense source (along the first axis that is not 1:
 * the flash backward's stacked dk;dv cut into dk and dv) is read in place too, by attention, rope
 * and permute kernels ({@link #BLOCK_READERS}, each reading through {@link LoweringContext#ptr(View)},
 * offset included): the readers' strides stay as they are, the view starts at the block. Its start
 * must be 16-byte aligned (the rope and transpose kernels' vector loads).
 *
 * @param source      the dense source as the slice kernel reads it
 * @param width       the slice's last dimension (a block: the source's element count, strides unmapped)
 * @param sourceWidth the source's last dimension (a block: the same as width)
 * @param start       the slice's first column (a block: its first element in the source)
 */
record SliceAlias(View source, long width, long sourceWidth, long start) {
    /** The kernels that read a block slice in place. */
    static final java.util.Set<Op> BLOCK_READERS = java.util.EnumSet.of(Op.ATTENTION, Op.ROPE, Op.PERMUTE);

    /** {@code o} (stored in the slice's output) as a view into the source. */
    View view(Operand o) {
        if (width == sourceWidth) {
            return new View(source.buf(), o.dtype(), o.shape(), o.strides(), source.offset() + start);
        }
        long[] st = o.strides();
        long[] mapped = new long[st.length];
        for (int i = 0; i < st.length; i++) {
            mapped[i] = map(st[i], o.shape().dim(i));
        }
        return new View(source.buf(), o.dtype(), o.shape(), mapped, source.offset() + start);
    }

    private long map(long stride, int dim) {
        if (dim == 1 || stride % width == 0) {
            return dim == 1 ? stride : stride / width * sourceWidth;
        }
        if (stride < width) {
            return stride;
        }
        throw new IllegalStateException("stride " + stride + " does not map onto rows of " + width);
    }

    /** The alias for slice kernel {@code k}, or null when it must stay a copy. */
    static SliceAlias of(Kernel k, int index, View source, LoweringContext cx) {
        if (k.node().op() != Op.SLICE || !source.contiguous() || cx.outputStorage.contains(k.output().value())) {
            return null;
        }
        int rank = source.shape().rank();
        int axis = k.node().attrs().getInt("axis", 0);
        if ((axis < 0 ? axis + rank : axis) != rank - 1) {
            return block(k, index, source, axis < 0 ? axis + rank : axis, cx);
        }
        long width = k.output().shape().dim(rank - 1);
        long bytes = source.dtype().bytes();
        long start = k.node().attrs().getInt("start", 0);
        if (start * bytes % 16 != 0 || source.shape().dim(rank - 1) * bytes % 16 != 0) {
            return null; // the attention kernels load 16-byte vectors (and TMA tiles) from 16-byte aligned rows
        }
        SliceAlias alias = new SliceAlias(source, width, source.shape().dim(rank - 1), k.node().attrs().getInt("start", 0));
        List<Kernel> kernels = cx.model.kernels();
        int lastReader = -1;
        List<Operand> reads = new ArrayList<>();
        for (int j = 0; j < kernels.size(); j++) {
            for (Operand o : kernels.get(j).inputs()) {
                if (o.storage().equals(k.output().value())) {
                    if (kernels.get(j).node().op() != Op.ATTENTION || j <= index) {
                        return null;
                    }
                    reads.add(o);
                    lastReader = j;
                }
            }
        }
        if (reads.isEmpty() || !alias.mapsAll(reads) || !sourceSurvives(cx.model.plan(), source.buf().name(), lastReader)) {
            return null;
        }
        return alias;
    }

    /** The alias of a slice that is one contiguous block of {@code source}, or null. */
    private static SliceAlias block(Kernel k, int index, View source, int axis, LoweringContext cx) {
        for (int a = 0; a < axis; a++) {
            if (source.shape().dim(a) != 1) {
                return null;
            }
        }
        long first = k.node().attrs().getInt("start", 0) * source.strides()[axis];
        if (first * source.dtype().bytes() % 16 != 0 || source.offset() * source.dtype().bytes() % 16 != 0) {
            return null;
        }
        int lastReader = lastReader(k, index, cx, BLOCK_READERS);
        if (lastReader < 0 || !sourceSurvives(cx.model.plan(), source.buf().name(), lastReader)) {
            return null;
        }
        long n = source.shape().numel();
        return new SliceAlias(source, n, n, first);
    }

    /** The last kernel reading {@code k}'s output, or -1 when none does or one is not of {@code readers} or runs first. */
    private static int lastReader(Kernel k, int index, LoweringContext cx, java.util.Set<Op> readers) {
        List<Kernel> kernels = cx.model.kernels();
        int last = -1;
        for (int j = 0; j < kernels.size(); j++) {
            for (Operand o : kernels.get(j).inputs()) {
                if (o.storage().equals(k.output().value())) {
                    if (!readers.contains(kernels.get(j).node().op()) || j <= index) {
                        return -1;
                    }
                    last = j;
                }
            }
        }
        return last;
    }

    private boolean mapsAll(List<Operand> reads) {
        for (Operand o : reads) {
            for (int i = 0; i < o.strides().length; i++) {
                long s = o.strides()[i];
                if (o.shape().dim(i) != 1 && s % width != 0 && s >= width) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether no buffer born after {@code value} dies, up to kernel {@code until}, shares its bytes. */
    private static boolean sourceSurvives(MemoryPlan plan, String value, int until) {
        MemoryPlan.Placement src = plan.byValue().get(value);
        if (src == null) {
            return false; // not in the arena (an input or parameter would survive, but keep to what is known)
        }
        for (MemoryPlan.Placement p : plan.placements()) {
            boolean later = p.buffer().first() > src.buffer().last() && p.buffer().first() <= until;
            if (later && p.offset() < src.end() && src.offset() < p.end()) {
                return false;
            }
        }
        return true;
    }
}
