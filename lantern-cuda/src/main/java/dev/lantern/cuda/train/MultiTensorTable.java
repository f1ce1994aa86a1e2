package dev.lantern.cuda.train;

import dev.lantern.cuda.codegen.MultiTensorKernels;

import java.util.Arrays;

/**
 * The host side of {@link MultiTensorKernels}' tables: the chunk table (fixed by the tensors'
 * sizes) and the tensor table (five words per tensor: master, gradient, the optimizer's two state
 * slots, size; a slot the optimizer does not keep is 0), rebuilt from the addresses of the state, and whether it changed since the last upload (an eager step's
 * gradients move from step to step; a compiled step's stay where the arena put them).
 */
final class MultiTensorTable {
    private final long[] sizes;
    private final long[] offsets; // each tensor's first element in the flat moments, a multiple of ALIGN
    private final long[] chunks;
    private long[] tensors;

    MultiTensorTable(long[] sizes) {
        this.sizes = sizes.clone();
        this.offsets = new long[sizes.length];
        long total = 0;
        long count = 0;
        for (int i = 0; i < sizes.length; i++) {
            if (sizes[i] <= 0) {
                throw new IllegalArgumentException("tensor " + i + " of a multi-tensor step has " + sizes[i] + " elements");
            }
            offsets[i] = total;
            total += (sizes[i] + MultiTensorKernels.ALIGN - 1) / MultiTensorKernels.ALIGN * MultiTensorKernels.ALIGN;
            count += (sizes[i] + MultiTensorKernels.CHUNK - 1) / MultiTensorKernels.CHUNK;
        }
        if (count > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(count + " chunks do not fit one grid");
        }
        this.chunks = new long[Math.toIntExact(count) * MultiTensorKernels.CHUNK_WORDS];
        int c = 0;
        for (int i = 0; i < sizes.length; i++) {
            for (long start = 0; start < sizes[i]; start += MultiTensorKernels.CHUNK) {
                chunks[c++] = i;
                chunks[c++] = start;
            }
        }
    }

    int tensorCount() {
        return sizes.length;
    }

    long size(int tensor) {
        return sizes[tensor];
    }

    /** Tensor {@code tensor}'s first element in the flat moment buffers. */
    long offset(int tensor) {
        return offsets[tensor];
    }

    /** Elements of all tensors together. */
    long totalElements() {
        return sizes.length == 0 ? 0 : offsets[sizes.length - 1] + sizes[sizes.length - 1];
    }

    int chunkCount() {
        return chunks.length / MultiTensorKernels.CHUNK_WORDS;
    }

    /** The tensor chunk {@code c} belongs to. */
    int chunkTensor(int c) {
        return (int) chunks[c * MultiTensorKernels.CHUNK_WORDS];
    }

    long[] chunks() {
        return chunks.clone();
    }

    /**
     * The tensor table for these addresses (masters, gradients; the state at their offsets
     * from {@code m} and {@code v}, or 0 where that base is 0), or {@code null} when it is the one
     * last returned.
     */
    long[] tensors(long[] masters, long[] grads, long m, long v) {
        long[] t = new long[sizes.length * MultiTensorKernels.TENSOR_WORDS];
        for (int i = 0; i < sizes.length; i++) {
            int w = i * MultiTensorKernels.TENSOR_WORDS;
            t[w] = masters[i];
            t[w + 1] = grads[i];
            t[w + 2] = m == 0 ? 0 : m + offsets[i] * 4; // 0: the optimizer keeps no such state (SGD's v, plain SGD's m)
            t[w + 3] = v == 0 ? 0 : v + offsets[i] * 4;
            t[w + 4] = sizes[i];
        }
        if (Arrays.equals(t, tensors)) {
            return null;
        }
        tensors = t;
        return t.clone();
    }
}
