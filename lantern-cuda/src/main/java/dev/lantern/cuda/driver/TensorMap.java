package dev.lantern.cuda.driver;

import dev.lantern.cuda.ffi.CudaDriver;
import dev.lantern.cuda.ffi.CudaModuleApi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A CUDA tensor map ({@code CUtensorMap}, 128 bytes): how the tensor memory accelerator reads
 * boxes of a strided tensor. Passed to a kernel by value ({@code __grid_constant__}); as a
 * kernel argument it is one of the values {@link KernelArgs} accepts. Immutable once encoded.
 */
public final class TensorMap {
    public static final int BYTES = 128;
    private final MemorySegment bytes;

    private TensorMap(MemorySegment bytes) {
        this.bytes = bytes;
    }

    /**
     * A map of a 4-D (b, h, s, d) view of 16-bit elements at {@code address}, element strides
     * {@code sb, sh, ss} (d contiguous), read in boxes of 64 columns x {@code rows} rows with
     * the 128-byte swizzle: the layout the wgmma attention keeps K, V and Q tiles in.
     */
    public static TensorMap rows(CudaDriver driver, boolean bf16, long address, long batch, long heads, long seq,
                                 long dim, long sb, long sh, long ss, int rows) {
        MemorySegment m = Arena.ofAuto().allocate(BYTES, 64);
        driver.modules().tensorMapEncodeTiled(m, bf16 ? CudaModuleApi.TMAP_BF16 : CudaModuleApi.TMAP_F16, address,
                new long[]{dim, seq, heads, batch}, new long[]{ss * 2, sh * 2, sb * 2}, new int[]{64, rows, 1, 1},
                CudaModuleApi.TMAP_SWIZZLE_128B, CudaModuleApi.TMAP_L2_128B);
        return new TensorMap(m);
    }

    /** A map over 128 already-encoded bytes (tests: argument passing without a driver). */
    static TensorMap ofBytes(byte[] encoded) {
        if (encoded.length != BYTES) {
            throw new IllegalArgumentException("a tensor map is " + BYTES + " bytes, got " + encoded.length);
        }
        MemorySegment m = Arena.ofAuto().allocate(BYTES, 64);
        m.copyFrom(MemorySegment.ofArray(encoded));
        return new TensorMap(m);
    }

    /** The address of the 128 bytes (what cuLaunchKernel's parameter array points at). */
    long address() {
        return bytes.address();
    }
}
