package dev.lantern.cuda.train;

import dev.lantern.trace.RuntimeCounters;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.MultiTensorKernels;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.AdamWScalars;
import dev.lantern.train.SgdConfig;
import dev.lantern.train.SgdScalars;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * AdamW or SGD with momentum over tensors that live anywhere on one GPU ({@link MultiTensorKernels}):
 * it owns the optimizer's flat state buffers ({@code slots} of them: AdamW's two moments, SGD's
 * momentum buffer, none for plain SGD), the tables and the per-chunk results; the caller says
 * where the masters and gradients are ({@link #bind}) and when to measure and step. Everything is
 * enqueued on the caller's stream. {@link #measure} reads back only the chunks' sums and flags; the
 * step itself is one launch. The step may be decided on the device ({@link #decide}: the global
 * norm, the clip and the skip of {@link MultiTensorKernels#decide}) and then launched without the
 * host waiting for the gradients ({@link #adamw(AdamWConfig, double, long, float)}, {@link #sgd(SgdConfig, double, long, float)}):
 * the host reads the same sums afterwards and finds the same decision ({@link #decision}).
 */
public final class MultiTensorOptimizer implements AutoCloseable {
    /** Bytes of pinned memory that host reads and writes go through. */
    static final long STAGING = 16L << 20;

    /** The gradients' sum of squares (after {@code invScale}) and the tensors holding an inf or NaN, in order. */
    public record Measure(double sumSquares, List<Integer> nonFinite) {}

    /** What {@link #decide} decided on the device: the clip coefficient, whether it clipped, whether the step was skipped. */
    public record Decision(float coef, boolean clip, boolean skip) {}

    private final CudaDevice gpu;
    private final CudaStream stream;
    private final MultiTensorTable table;
    private final List<CudaStorage> owned = new ArrayList<>();
    private final int slots;
    private final CudaStorage m; // AdamW's first moment or SGD's momentum buffer; null without
    private final CudaStorage v; // AdamW's second moment; null without
    private final CudaStorage tensors;
    private final CudaStorage chunkTable;
    private final CudaStorage partial;
    private final CudaStorage bad;
    private final CudaStorage control;
    private final CudaStorage pinned;
    private final CudaKernelSource sumSource = MultiTensorKernels.sumSquares();
    private final CudaKernelSource adamSource = MultiTensorKernels.adamw();
    private final CudaKernelSource sgdSource = MultiTensorKernels.sgd();
    private final CudaKernelSource decideSource = MultiTensorKernels.decide();
    private final CudaModule decideModule;
    private final CudaModule sumModule;
    private final CudaModule adamModule;
    private final CudaModule sgdModule;

    /** AdamW's two moments (zero) and tables for tensors of {@code sizes} elements, on {@code stream} of {@code gpu}. */
    public MultiTensorOptimizer(CudaDevice gpu, CudaStream stream, long[] sizes) {
        this(gpu, stream, sizes, 2);
    }

    /**
     * {@code slots} state buffers of the tensors' sizes (zero; 2 for AdamW, 1 for SGD with
     * momentum, 0 for plain SGD) and tables for tensors of {@code sizes} elements, on
     * {@code stream} of {@code gpu}.
     */
    public MultiTensorOptimizer(CudaDevice gpu, CudaStream stream, long[] sizes, int slots) {
        if (slots < 0 || slots > 2) {
            throw new IllegalArgumentException("a multi-tensor optimizer keeps 0 to 2 state buffers, not " + slots);
        }
        this.gpu = gpu;
        this.stream = stream;
        this.slots = slots;
        this.table = new MultiTensorTable(sizes);
        List<CudaModule> loaded = new ArrayList<>();
        try {
            long moments = Math.max(table.totalElements() * 4, 256);
            this.m = slots >= 1 ? own(gpu.allocate(moments)) : null;
            this.v = slots >= 2 ? own(gpu.allocate(moments)) : null;
            for (CudaStorage s : new CudaStorage[] {m, v}) {
                if (s != null) {
                    stream.memset(s, 0, (byte) 0, moments);
                }
            }
            int chunks = table.chunkCount();
            this.tensors = own(gpu.allocate((long) table.tensorCount() * MultiTensorKernels.TENSOR_WORDS * 8));
            this.chunkTable = own(gpu.allocate((long) chunks * MultiTensorKernels.CHUNK_WORDS * 8));
            this.partial = own(gpu.allocate((long) chunks * 8));
            this.bad = own(gpu.allocate((long) chunks * 4));
            this.control = own(gpu.allocate(MultiTensorKernels.CONTROL_WORDS * 4L));
            this.pinned = own(gpu.allocatePinned(Math.max(STAGING, controlAt() + MultiTensorKernels.CONTROL_WORDS * 4L)));
            upload(chunkTable, 0, MemorySegment.ofArray(table.chunks()));
            ModuleCache cache = ModuleCache.forDevice(gpu);
            for (CudaKernelSource k : List.of(sumSource, adamSource, sgdSource, decideSource)) {
                loaded.add(cache.load(gpu, new KernelSource(k.entry(), k.source())));
            }
            this.sumModule = loaded.get(0);
            this.adamModule = loaded.get(1);
            this.sgdModule = loaded.get(2);
            this.decideModule = loaded.get(3);
        } catch (RuntimeException e) {
            loaded.forEach(CudaModule::close);
            owned.forEach(CudaStorage::close);
            throw e;
        }
    }

    private CudaStorage own(CudaStorage s) {
        owned.add(s);
        return s;
    }

    /** The tensors' element counts, sums and chunks. */
    MultiTensorTable table() {
        return table;
    }

    /** Where the masters and the gradients are now (uploaded only when one moved since the last call). */
    public void bind(long[] masters, long[] grads) {
        long[] t = table.tensors(masters, grads, m == null ? 0 : m.address(), v == null ? 0 : v.address());
        if (t != null) {
            upload(tensors, 0, MemorySegment.ofArray(t));
        }
    }

    /**
     * Enqueues the sum of squares of every gradient times {@code invScale} and the copy of its
     * per-chunk results to the host; {@code finish} then reads them, after the caller has
     * synchronised the stream (as reading the loss does).
     */
    public void measure(float invScale) {
        int chunks = table.chunkCount();
        sumModule.kernel(sumSource.entry()).launch(stream, new int[] {chunks, 1, 1}, new int[] {MultiTensorKernels.THREADS, 1, 1}, 0,
                tensors.address(), chunkTable.address(), invScale, invScale == 1f ? 1 : 0, partial.address(), bad.address());
        RuntimeCounters.launched(1); // kernel_launches_total
        stream.copy(partial, 0, pinned, 0, (long) chunks * 8);
        stream.copy(bad, 0, pinned, (long) chunks * 8, (long) chunks * 4);
    }

    /**
     * What the last {@link #measure} found (call after its copies are done): the chunks' sums added
     * as {@link MultiTensorKernels#lanes} adds them, the same bits as {@link #decide}'s.
     */
    public Measure finish() {
        int chunks = table.chunkCount();
        MemorySegment host = pinned.hostSegment();
        // bulk copies, then plain array loops: a segment read per chunk (12,000 of them for the decoder
        // block) cost the step about 2 ms of host time before the JIT compiled it
        double[] partials = new double[chunks];
        int[] flags = new int[chunks];
        MemorySegment.copy(host, ValueLayout.JAVA_DOUBLE_UNALIGNED, 0, partials, 0, chunks);
        MemorySegment.copy(host, ValueLayout.JAVA_INT_UNALIGNED, (long) chunks * 8, flags, 0, chunks);
        TreeSet<Integer> nonFinite = new TreeSet<>();
        for (int c = 0; c < chunks; c++) {
            if (flags[c] != 0) {
                nonFinite.add(table.chunkTensor(c));
            }
        }
        return new Measure(MultiTensorKernels.lanes(partials), List.copyOf(nonFinite));
    }

    /**
     * Enqueues the step's decision on the device, after {@link #measure}: clip to {@code maxNorm}
     * (none when it is 0 or less), skip the step on a non-finite gradient when
     * {@code skipNonFinite}; and the copy of the decision to the host ({@link #decision}).
     */
    public void decide(float maxNorm, boolean skipNonFinite) {
        decideModule.kernel(decideSource.entry()).launch(stream, new int[] {1, 1, 1}, new int[] {MultiTensorKernels.THREADS, 1, 1}, 0,
                partial.address(), bad.address(), table.chunkCount(), maxNorm, skipNonFinite ? 1 : 0, control.address());
        RuntimeCounters.launched(1); // kernel_launches_total
        stream.copy(control, 0, pinned, controlAt(), MultiTensorKernels.CONTROL_WORDS * 4L);
    }

    /** The last {@link #decide}'s decision (call after its copy is done). */
    public Decision decision() {
        MemorySegment host = pinned.hostSegment();
        long at = controlAt();
        return new Decision(Float.intBitsToFloat(host.get(ValueLayout.JAVA_INT_UNALIGNED, at)),
                host.get(ValueLayout.JAVA_INT_UNALIGNED, at + 4) != 0, host.get(ValueLayout.JAVA_INT_UNALIGNED, at + 8) != 0);
    }

    /** Where the control words land in the pinned buffer: after the chunks' sums and flags. */
    private long controlAt() {
        return (long) table.chunkCount() * 12;
    }

    /**
     * Enqueues AdamW's step {@code t} at {@code lr} on every tensor, each gradient times
     * {@code invScale} and then, when {@code clip}, times {@code coef}; the scalars are the CPU's
     * ({@link AdamWScalars}).
     */
    public void adamw(AdamWConfig config, double lr, long t, float invScale, boolean clip, float coef) {
        adamw(config, lr, t, invScale, clip, coef, 0L);
    }

    /** Enqueues AdamW's step {@code t} as the last {@link #decide} says: clipped, or skipped (then nothing changes). */
    public void adamw(AdamWConfig config, double lr, long t, float invScale) {
        adamw(config, lr, t, invScale, false, 1f, control.address());
    }

    private void adamw(AdamWConfig config, double lr, long t, float invScale, boolean clip, float coef, long controlAddress) {
        if (slots != 2) {
            throw new IllegalStateException("AdamW needs two moment buffers; this optimizer keeps " + slots);
        }
        AdamWScalars k = AdamWScalars.of(config, lr, t);
        adamModule.kernel(adamSource.entry()).launch(stream, new int[] {table.chunkCount(), 1, 1},
                new int[] {MultiTensorKernels.THREADS, 1, 1}, 0,
                tensors.address(), chunkTable.address(), invScale, invScale == 1f ? 1 : 0, coef, clip ? 1 : 0,
                k.decay(), k.doDecay() ? 1 : 0, k.w1(), k.small() ? 1 : 0, k.w2(), k.b2(), k.bc2Sqrt(), k.eps(), k.negStepSize(), controlAddress);
        RuntimeCounters.launched(1); // kernel_launches_total
    }

    /**
     * Enqueues SGD's step after {@code stepsTaken} earlier ones at {@code lr} on every tensor, each
     * gradient times {@code invScale} and then, when {@code clip}, times {@code coef}; the scalars
     * are the CPU's ({@link SgdScalars}).
     */
    public void sgd(SgdConfig config, double lr, long stepsTaken, float invScale, boolean clip, float coef) {
        sgd(config, lr, stepsTaken, invScale, clip, coef, 0L);
    }

    /** Enqueues SGD's step after {@code stepsTaken} as the last {@link #decide} says: clipped, or skipped. */
    public void sgd(SgdConfig config, double lr, long stepsTaken, float invScale) {
        sgd(config, lr, stepsTaken, invScale, false, 1f, control.address());
    }

    private void sgd(SgdConfig config, double lr, long stepsTaken, float invScale, boolean clip, float coef, long controlAddress) {
        SgdScalars k = SgdScalars.of(config, lr, stepsTaken);
        if (k.doMomentum() && slots < 1) {
            throw new IllegalStateException("SGD with momentum " + config.momentum() + " needs a buffer; this optimizer keeps none");
        }
        sgdModule.kernel(sgdSource.entry()).launch(stream, new int[] {table.chunkCount(), 1, 1},
                new int[] {MultiTensorKernels.THREADS, 1, 1}, 0,
                tensors.address(), chunkTable.address(), invScale, invScale == 1f ? 1 : 0, coef, clip ? 1 : 0,
                k.weightDecay(), k.doDecay() ? 1 : 0, k.momentum(), k.doMomentum() ? 1 : 0, k.keep(), k.first() ? 1 : 0,
                k.nesterov() ? 1 : 0, k.negLr(), controlAddress);
        RuntimeCounters.launched(1); // kernel_launches_total
    }

    /** The state buffers per element this optimizer keeps (2: AdamW's moments, 1: SGD's momentum buffer, 0). */
    public int slots() {
        return slots;
    }

    /** Tensor {@code i}'s state in slot {@code slot} (0: AdamW's first moment or SGD's momentum buffer, 1: AdamW's second moment). */
    public long state(int slot, int i) {
        if (slot < 0 || slot >= slots) {
            throw new IllegalArgumentException("slot " + slot + " of an optimizer keeping " + slots);
        }
        return (slot == 0 ? m : v).address() + table.offset(i) * 4;
    }

    /** Tensor {@code i}'s first moment's address. */
    public long expAvg(int i) {
        return state(0, i);
    }

    /** Tensor {@code i}'s second moment's address. */
    public long expAvgSq(int i) {
        return state(1, i);
    }

    /** The device bytes this optimizer holds (state, tables, per-chunk results). */
    public long deviceBytes() {
        long b = 0;
        for (CudaStorage s : owned) {
            b += s.kind() == CudaStorage.Kind.DEVICE ? s.bytes() : 0;
        }
        return b;
    }

    /** {@code bytes} of device memory at {@code address} into {@code dst}, through the pinned staging (synchronises). */
    public void download(long address, MemorySegment dst, long bytes) {
        for (long done = 0; done < bytes; done += STAGING) {
            long n = Math.min(STAGING, bytes - done);
            stream.copy(view(address + done, n), 0, pinned, 0, n);
            stream.synchronize();
            MemorySegment.copy(pinned.hostSegment(), 0, dst, done, n);
        }
    }

    /** {@code src} to device memory at {@code address}, through the pinned staging (synchronises). */
    public void upload(long address, MemorySegment src) {
        upload(view(address, src.byteSize()), 0, src);
    }

    private void upload(CudaStorage dst, long offset, MemorySegment src) {
        long bytes = src.byteSize();
        for (long done = 0; done < bytes; done += STAGING) {
            long n = Math.min(STAGING, bytes - done);
            MemorySegment.copy(src, done, pinned.hostSegment(), 0, n);
            stream.copy(pinned, 0, dst, offset + done, n);
            stream.synchronize();
        }
    }

    private CudaStorage view(long address, long bytes) {
        return CudaStorage.view(gpu, address, bytes, () -> { });
    }

    /** Frees its memory and modules (after the stream has drained). */
    @Override
    public void close() {
        sumModule.close();
        adamModule.close();
        sgdModule.close();
        decideModule.close();
        owned.forEach(CudaStorage::close);
    }
}
