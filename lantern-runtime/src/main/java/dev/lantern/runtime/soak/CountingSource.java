package dev.lantern.runtime.soak;

import dev.lantern.runtime.alloc.SegmentSource;
import dev.lantern.runtime.alloc.VirtualMemory;

/**
 * Wraps any source to count the bytes it has outstanding, so the soak measures leaks at the
 * source boundary on every device, not only in the simulator.
 */
final class CountingSource implements SegmentSource {
    private final SegmentSource inner;
    private long live, peak;

    CountingSource(SegmentSource inner) {
        this.inner = inner;
    }

    @Override
    public synchronized long reserve(long bytes) {
        long a = inner.reserve(bytes);
        if (a >= 0) {
            live += bytes;
            peak = Math.max(peak, live);
        }
        return a;
    }

    @Override
    public synchronized void release(long address, long bytes) {
        inner.release(address, bytes);
        live -= bytes;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public VirtualMemory virtualMemory() {
        VirtualMemory vm = inner.virtualMemory();
        return vm == null ? null : new VirtualMemory() {
            @Override
            public long pageSize() {
                return vm.pageSize();
            }

            @Override
            public long rangeSize() {
                return vm.rangeSize();
            }

            @Override
            public long reserveRange(long bytes) {
                return vm.reserveRange(bytes);
            }

            @Override
            public boolean map(long address, long bytes) {
                boolean ok = vm.map(address, bytes);
                if (ok) {
                    synchronized (CountingSource.this) {
                        live += bytes;
                        peak = Math.max(peak, live);
                    }
                }
                return ok;
            }

            @Override
            public void unmap(long address, long bytes) {
                vm.unmap(address, bytes);
                synchronized (CountingSource.this) {
                    live -= bytes;
                }
            }

            @Override
            public void releaseRange(long address, long bytes) {
                vm.releaseRange(address, bytes);
            }
        };
    }

    synchronized long liveBytes() {
        return live;
    }

    synchronized long peakBytes() {
        return peak;
    }
}
