package dev.lantern.cuda.train;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.MultiTensorKernels;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.trace.RuntimeCounters;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.AdamWScalars;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * AdamW over tensors that live anywhere on one GPU ({@link MultiTensorKernels}): it owns the two
 * flat moment buffers, the tables and the per-chunk results; the caller says where the masters
 * and gradients are ({@link #bind}) and when to measure and step. Everything is enqueued on the
 * caller's stream. {@link #measure} reads back only the chunks' sums and flags; the step itself
 * is one launch.
 */
public final class MultiTensorOptimizer implements AutoCloseable {
    /** Bytes of pinned memory that host reads and writes go through. */
    static final long STAGING = 16L << 20;

    /** The gradients' sum of squares (after {@code invScale}) and the tensors holding an inf or NaN, in order. */
    public record Measure(double sumSquares, List<Integer> nonFinite) {}

    private final CudaDevice gpu;
    private final CudaStream stream;
    private final MultiTensorTable table;
    private final List<CudaStorage> owned = new ArrayList<>();
    private final CudaStorage m;
    private final CudaStorage v;
    private final CudaStorage tensors;
    private final CudaStorage chunkTable;
    private final CudaStorage partial;
    private final CudaStorage bad;
    private final CudaStorage pinned;
    private final CudaKernelSource sumSource = MultiTensorKernels.sumSquares();
    private final CudaKernelSource adamSource = MultiTensorKernels.adamw();
    private final CudaModule sumModule;
    private final CudaModule adamModule;

    /** Moments (zero) and tables for tensors of {@code sizes} elements, on {@code stream} of {@code gpu}. */
    public MultiTensorOptimizer(CudaDevice gpu, CudaStream stream, long[] sizes) {
        this.gpu = gpu;
        this.stream = stream;
        this.table = new MultiTensorTable(sizes);
        CudaModule sum = null;
        try {
            long moments = Math.max(table.totalElements() * 4, 256);
            this.m = own(gpu.allocate(moments));
            this.v = own(gpu.allocate(moments));
            stream.memset(m, 0, (byte) 0, moments);
            stream.memset(v, 0, (byte) 0, moments);
            int chunks = table.chunkCount();
            this.tensors = own(gpu.allocate((long) table.tensorCount() * MultiTensorKernels.TENSOR_WORDS * 8));
            this.chunkTable = own(gpu.allocate((long) chunks * MultiTensorKernels.CHUNK_WORDS * 8));
            this.partial = own(gpu.allocate((long) chunks * 8));
            this.bad = own(gpu.allocate((long) chunks * 4));
            this.pinned = own(gpu.allocatePinned(Math.max(STAGING, (long) chunks * 12)));
            upload(chunkTable, 0, MemorySegment.ofArray(table.chunks()));
            ModuleCache cache = ModuleCache.forDevice(gpu);
            sum = cache.load(gpu, new KernelSource(sumSource.entry(), sumSource.source()));
            this.adamModule = cache.load(gpu, new KernelSource(adamSource.entry(), adamSource.source()));
            this.sumModule = sum;
        } catch (RuntimeException e) {
            if (sum != null) {
                sum.close();
            }
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
        long[] t = table.tensors(masters, grads, m.address(), v.address());
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

    /** What the last {@link #measure} found (call after the stream has drained): chunk sums added in chunk order. */
    public Measure finish() {
        int chunks = table.chunkCount();
        MemorySegment host = pinned.hostSegment();
        double sum = 0;
        TreeSet<Integer> nonFinite = new TreeSet<>();
        for (int c = 0; c < chunks; c++) {
            sum += host.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, c);
            if (host.get(ValueLayout.JAVA_INT_UNALIGNED, (long) chunks * 8 + c * 4L) != 0) {
                nonFinite.add(table.chunkTensor(c));
            }
        }
        return new Measure(sum, List.copyOf(nonFinite));
    }

    /**
     * Enqueues AdamW's step {@code t} at {@code lr} on every tensor, each gradient times
     * {@code invScale} and then, when {@code clip}, times {@code coef}; the scalars are the CPU's
     * ({@link AdamWScalars}).
     */
    public void adamw(AdamWConfig config, double lr, long t, float invScale, boolean clip, float coef) {
        AdamWScalars k = AdamWScalars.of(config, lr, t);
        adamModule.kernel(adamSource.entry()).launch(stream, new int[] {table.chunkCount(), 1, 1},
                new int[] {MultiTensorKernels.THREADS, 1, 1}, 0,
                tensors.address(), chunkTable.address(), invScale, invScale == 1f ? 1 : 0, coef, clip ? 1 : 0,
                k.decay(), k.doDecay() ? 1 : 0, k.w1(), k.small() ? 1 : 0, k.w2(), k.b2(), k.bc2Sqrt(), k.eps(), k.negStepSize());
        RuntimeCounters.launched(1); // kernel_launches_total
    }

    /** Tensor {@code i}'s first moment's address. */
    public long expAvg(int i) {
        return m.address() + table.offset(i) * 4;
    }

    /** Tensor {@code i}'s second moment's address. */
    public long expAvgSq(int i) {
        return v.address() + table.offset(i) * 4;
    }

    /** The device bytes this optimizer holds (moments, tables, per-chunk results). */
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
        owned.forEach(CudaStorage::close);
    }
}
