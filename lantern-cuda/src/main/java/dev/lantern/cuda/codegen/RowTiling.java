package dev.lantern.cuda.codegen;

import java.util.Optional;

/**
 * How a row-in-registers kernel (norms, softmax) splits one row of {@code cols} elements
 * over one CTA: {@code threads} threads, each holding {@code vectors} vectors of
 * {@code width} elements, thread t owning vectors t, t + threads, ... (coalesced at each step).
 * Exists only when cols = threads * vectors * width with threads a multiple of 32 and at most
 * 1024; otherwise the renderer takes its general path.
 */
record RowTiling(int threads, int vectors, int width) {
    /** The tiling closest to {@code target.rowVectorsPerThread()} vectors per thread, if any. */
    static Optional<RowTiling> choose(long cols, int width, CudaTarget target) {
        if (cols % ((long) width * target.warpSize()) != 0) {
            return Optional.empty();
        }
        long vecs = cols / width;
        int preferred = target.rowVectorsPerThread();
        // Try the preferred count, then fewer (more threads), then more (fewer threads), up to 16.
        int[] order = new int[32];
        int n = 0;
        for (int k = preferred; k >= 1; k--) {
            order[n++] = k;
        }
        for (int k = preferred + 1; k <= 16; k++) {
            order[n++] = k;
        }
        for (int i = 0; i < n; i++) {
            int k = order[i];
            if (vecs % k != 0) {
                continue;
            }
            long threads = vecs / k;
            if (threads % target.warpSize() == 0 && threads <= target.maxThreadsPerBlock()) {
                if (threads < 64 && k > 1 && vecs >= 64) {
                    continue;  // prefer two warps or more when the row allows it
                }
                return Optional.of(new RowTiling((int) threads, k, width));
            }
        }
        return Optional.empty();
    }

    int warps() {
        return threads / 32;
    }
}
