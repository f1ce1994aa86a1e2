package dev.lantern.cuda.gpu;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.GatherSpec;
import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * {@link GatherSpec}'s kernel launched on raw device buffers, so that what a session never lets
 * through can be checked: ids out of range (the session refuses them from the caller; computed ids
 * can be anything), whose rows must come out NaN, and table and output pointers off 16-byte
 * alignment (a view at an odd offset), which must take the element loop and give the same bytes.
 * Everything else must be the table's bits exactly: a gather copies.
 */
final class GatherKernelRuns {
    private GatherKernelRuns() {}

    /**
     * Runs {@code spec} on seeded random table bits and {@code ids}, with both pointers
     * {@code offsetElements} elements past a 256-byte boundary; the first difference from the
     * host's gather, or the empty string.
     */
    static String check(GatherSpec spec, long[] ids, int offsetElements, long seed) {
        CudaDevice gpu = Gpu.device();
        int bytes = spec.dtype().bytes();
        long tableElems = spec.outer() * spec.rows() * spec.inner();
        Tensor table = Tensor.allocate(spec.dtype(), Shape.of(Math.toIntExact(tableElems)));
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < tableElems; i++) {
            table.set(i, (float) (r.nextGaussian() * 3));
        }
        Tensor idt = Tensor.allocate(spec.idsType(), Shape.of(ids.length));
        for (int i = 0; i < ids.length; i++) {
            idt.set(i, ids[i]);
        }
        long off = (long) offsetElements * bytes;
        long outBytes = spec.numel() * bytes;
        CudaStream s = gpu.newStream(false);
        CudaKernelSource src = spec.render(CudaTarget.H200);
        try (CudaModule m = Gpu.cache().load(gpu, new KernelSource(src.entry(), src.source()));
             CudaStorage dTable = gpu.allocate(tableElems * bytes + off + 16);
             CudaStorage dIds = gpu.allocate((long) ids.length * spec.idsType().bytes());
             CudaStorage dOut = gpu.allocate(outBytes + off + 16)) {
            upload(gpu, s, table.segment(), dTable, off);
            upload(gpu, s, idt.segment(), dIds, 0);
            s.memset(dOut, 0, (byte) 0x55, outBytes + off + 16); // a finite poison: an element left unwritten shows
            launch(s, m, src, spec, dTable.address() + off, dIds.address(), dOut.address() + off);
            Tensor out = Tensor.allocate(spec.dtype(), Shape.of(Math.toIntExact(spec.numel())));
            download(gpu, s, dOut, off, out.segment());
            for (long b = 0; b < spec.outer(); b++) {
                for (int k = 0; k < spec.count(); k++) {
                    long id = ids[k] < 0 ? ids[k] + spec.rows() : ids[k];
                    boolean ok = id >= 0 && id < spec.rows();
                    for (long j = 0; j < spec.inner(); j++) {
                        long o = (b * spec.count() + k) * spec.inner() + j;
                        if (ok) {
                            long from = (b * spec.rows() + id) * spec.inner() + j;
                            if (bits(out, o, bytes) != bits(table, from, bytes)) {
                                return spec + " offset " + offsetElements + ": out[" + o + "] = " + out.get(o) + ", table[" + from + "] = "
                                        + table.get(from) + " (id " + ids[k] + ")";
                            }
                        } else if (!Float.isNaN(out.get(o))) {
                            return spec + " offset " + offsetElements + ": out[" + o + "] = " + out.get(o) + " for id " + ids[k] + " out of "
                                    + spec.rows() + " rows: expected NaN";
                        }
                    }
                }
            }
            return "";
        } finally {
            s.synchronize();
            s.close();
        }
    }

    /** Median milliseconds of {@code reps} launches of {@code spec} over in-range ids (the tables uninitialised: only the time counts). */
    static double medianMillis(GatherSpec spec, int reps) {
        CudaDevice gpu = Gpu.device();
        int bytes = spec.dtype().bytes();
        SplittableRandom r = new SplittableRandom(7);
        Tensor idt = Tensor.allocate(spec.idsType(), Shape.of(Math.toIntExact(spec.count())));
        for (long i = 0; i < spec.count(); i++) {
            idt.set(i, r.nextLong(spec.rows()));
        }
        CudaStream s = gpu.newStream(false);
        CudaKernelSource src = spec.render(CudaTarget.H200);
        try (CudaModule m = Gpu.cache().load(gpu, new KernelSource(src.entry(), src.source()));
             CudaStorage dTable = gpu.allocate(spec.outer() * spec.rows() * spec.inner() * bytes);
             CudaStorage dIds = gpu.allocate(spec.count() * spec.idsType().bytes());
             CudaStorage dOut = gpu.allocate(spec.numel() * bytes);
             CudaEvent a = gpu.newEvent(true);
             CudaEvent b = gpu.newEvent(true)) {
            upload(gpu, s, idt.segment(), dIds, 0);
            double[] t = new double[reps];
            for (int i = -3; i < reps; i++) { // three warm-ups
                s.record(a);
                launch(s, m, src, spec, dTable.address(), dIds.address(), dOut.address());
                s.record(b);
                b.synchronize();
                if (i >= 0) {
                    t[i] = b.elapsedMillisSince(a);
                }
            }
            Arrays.sort(t);
            return t[reps / 2];
        } finally {
            s.synchronize();
            s.close();
        }
    }

    private static void launch(CudaStream s, CudaModule m, CudaKernelSource src, GatherSpec spec, long table, long ids, long out) {
        LaunchConfig c = src.launch();
        m.kernel(src.entry()).launch(s, new int[] {(int) c.gridX(), 1, 1}, new int[] {c.blockX(), 1, 1}, 0, table, ids, out, spec.numel());
    }

    private static long bits(Tensor t, long i, int bytes) {
        return bytes == 4 ? t.segment().getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i) & 0xFFFFFFFFL
                : t.segment().getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i) & 0xFFFFL;
    }

    private static void upload(CudaDevice gpu, CudaStream s, MemorySegment host, CudaStorage dst, long offset) {
        try (CudaStorage pinned = gpu.allocatePinned(host.byteSize())) {
            MemorySegment.copy(host, 0, pinned.hostSegment(), 0, host.byteSize());
            s.copy(pinned, 0, dst, offset, host.byteSize());
            s.synchronize();
        }
    }

    private static void download(CudaDevice gpu, CudaStream s, CudaStorage src, long offset, MemorySegment host) {
        try (CudaStorage pinned = gpu.allocatePinned(host.byteSize())) {
            s.copy(src, offset, pinned, 0, host.byteSize());
            s.synchronize();
            MemorySegment.copy(pinned.hostSegment(), 0, host, 0, host.byteSize());
        }
    }
}
