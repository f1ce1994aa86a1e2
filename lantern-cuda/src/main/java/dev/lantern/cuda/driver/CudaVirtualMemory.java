package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CudaContextLostException;
import dev.lantern.cuda.ffi.CudaDeviceApi;
import dev.lantern.cuda.ffi.CudaOutOfMemoryException;
import dev.lantern.cuda.ffi.CudaVmm;
import dev.lantern.runtime.alloc.VirtualMemory;

/**
 * Expandable segments over CUDA's VMM API. Each page (the device's minimum granularity,
 * 2 MiB on Hopper) is its own physical allocation: cuMemUnmap can only take away whole
 * mappings, and the allocator gives back arbitrary page-aligned suffixes of a range, so
 * one mapping per page is what makes every such suffix unmappable. Each handle is released
 * right after it is mapped; the driver frees the physical page when its mapping goes.
 *
 * <p>Growth: cuMemCreate + cuMemMap per page, then one cuMemSetAccess over the new pages.
 * If the device runs out part-way, the pages mapped by this call are unmapped again and
 * {@link #map} answers false, as the contract asks.
 *
 * <p>Once the context generation it was made in is lost or reset, reserving and mapping refuse
 * ({@link dev.lantern.cuda.ffi.CudaContextLostException}); unmapping and freeing do nothing.
 */
public final class CudaVirtualMemory implements VirtualMemory {
    private final CudaDevice device;
    private final CudaVmm vmm;
    private final ContextHealth generation;
    private final int ordinal;
    private final long page;
    private final long rangeSize;

    private CudaVirtualMemory(CudaDevice device, ContextHealth generation) {
        this.device = device;
        this.vmm = device.driver().vmm();
        this.generation = generation;
        this.ordinal = device.target().ordinal();
        device.makeCurrent(generation);
        this.page = vmm.memGetAllocationGranularity(ordinal, false);
        this.rangeSize = (device.totalMemory() + page - 1) / page * page;
    }

    /** The VMM of {@code device}, or null when the device or driver does not support it. */
    public static CudaVirtualMemory of(CudaDevice device) {
        return of(device, device.generation());
    }

    static CudaVirtualMemory of(CudaDevice device, ContextHealth generation) {
        try {
            device.makeCurrent(generation);
            int dev = device.target().ordinal();
            if (device.driver().devices().deviceAttribute(CudaDeviceApi.ATTR_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                    device.driver().devices().deviceGet(dev)) == 0) {
                return null;
            }
            return new CudaVirtualMemory(device, generation);
        } catch (CudaContextLostException e) {
            throw e; // not a missing feature: the context is gone
        } catch (RuntimeException e) {
            return null; // an old driver without the symbols: fixed segments only
        }
    }

    @Override
    public long pageSize() {
        return page;
    }

    @Override
    public long rangeSize() {
        return rangeSize;
    }

    @Override
    public long reserveRange(long bytes) {
        device.makeCurrent(generation);
        try {
            return vmm.memAddressReserve(bytes, page);
        } catch (CudaOutOfMemoryException e) {
            return -1;
        }
    }

    @Override
    public boolean map(long address, long bytes) {
        checkPages("map", address, bytes);
        device.makeCurrent(generation);
        long done = 0;
        try {
            for (; done < bytes; done += page) {
                long handle = vmm.memCreate(page, ordinal);
                try {
                    vmm.memMap(address + done, page, 0, handle);
                } finally {
                    vmm.memRelease(handle); // the mapping keeps the page alive
                }
            }
            vmm.memSetAccessReadWrite(address, bytes, ordinal);
            return true;
        } catch (CudaOutOfMemoryException e) {
            unmapPages(address, done);
            return false;
        }
    }

    @Override
    public void unmap(long address, long bytes) {
        checkPages("unmap", address, bytes);
        device.release(generation, () -> unmapPages(address, bytes));
    }

    private void unmapPages(long address, long bytes) {
        for (long off = 0; off < bytes; off += page) {
            vmm.memUnmap(address + off, page);
        }
    }

    @Override
    public void releaseRange(long address, long bytes) {
        device.release(generation, () -> vmm.memAddressFree(address, bytes));
    }

    private void checkPages(String what, long address, long bytes) {
        if (bytes <= 0 || bytes % page != 0 || address % page != 0) {
            throw new IllegalArgumentException(what + " of " + bytes + " bytes at 0x" + Long.toHexString(address)
                    + " is not whole pages of " + page + " bytes");
        }
    }
}
