package dev.lantern.cuda.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.lantern.cuda.codegen.MultiTensorKernels;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The device optimizer's tables: every element of every tensor in exactly one chunk, chunks never
 * crossing a tensor, the moments laid out tensor after tensor, and the tensor table uploaded
 * again only when an address moved. Sizes are seeded random (odd, prime, one element, several
 * chunks), not only the blocks' round ones.
 */
class MultiTensorTableTest {
    @Test
    void chunksCoverEveryElementOnce() {
        Random r = new Random(16);
        for (int trial = 0; trial < 50; trial++) {
            long[] sizes = new long[1 + r.nextInt(12)];
            for (int i = 0; i < sizes.length; i++) {
                sizes[i] = switch (r.nextInt(4)) {
                    case 0 -> 1;
                    case 1 -> 1 + r.nextInt(100);
                    case 2 -> MultiTensorKernels.CHUNK * (1 + r.nextInt(3)) + (r.nextBoolean() ? 0 : r.nextInt(97) - 48);
                    default -> 7919;
                };
            }
            MultiTensorTable t = new MultiTensorTable(sizes);
            long[] chunks = t.chunks();
            long[] covered = new long[sizes.length];
            long expectedStart = 0;
            int last = -1;
            for (int c = 0; c < t.chunkCount(); c++) {
                int tensor = (int) chunks[c * MultiTensorKernels.CHUNK_WORDS];
                long start = chunks[c * MultiTensorKernels.CHUNK_WORDS + 1];
                assertEquals(tensor, t.chunkTensor(c));
                if (tensor != last) {
                    assertEquals(last + 1, tensor, "chunks in tensor order");
                    expectedStart = 0;
                    last = tensor;
                }
                assertEquals(expectedStart, start, "chunk " + c + " starts where the last ended");
                long end = Math.min(start + MultiTensorKernels.CHUNK, sizes[tensor]);
                covered[tensor] += end - start;
                expectedStart = start + MultiTensorKernels.CHUNK;
            }
            assertArrayEquals(sizes, covered, "every element in one chunk");
            long offset = 0;
            for (int i = 0; i < sizes.length; i++) {
                assertEquals(offset, t.offset(i));
                assertEquals(0, t.offset(i) % MultiTensorKernels.ALIGN, "each tensor's state starts 16-byte aligned (the kernels' float4 path)");
                offset += i + 1 < sizes.length ? (sizes[i] + MultiTensorKernels.ALIGN - 1) / MultiTensorKernels.ALIGN * MultiTensorKernels.ALIGN : sizes[i];
            }
            assertEquals(offset, t.totalElements());
        }
    }

    @Test
    void tensorTableIsUploadedOnlyWhenAnAddressMoves() {
        MultiTensorTable t = new MultiTensorTable(new long[] {3, 20000});
        long[] first = t.tensors(new long[] {0x1000, 0x2000}, new long[] {0x3000, 0x4000}, 0x10000, 0x20000);
        assertNotNull(first);
        assertArrayEquals(new long[] {0x1000, 0x3000, 0x10000, 0x20000, 3, 0x2000, 0x4000, 0x10000 + 16, 0x20000 + 16, 20000}, first);
        assertNull(t.tensors(new long[] {0x1000, 0x2000}, new long[] {0x3000, 0x4000}, 0x10000, 0x20000), "same addresses");
        assertNotNull(t.tensors(new long[] {0x1000, 0x2000}, new long[] {0x3000, 0x5000}, 0x10000, 0x20000), "a gradient moved");
    }

    @Test
    void stateTheOptimizerDoesNotKeepIsZero() {
        MultiTensorTable t = new MultiTensorTable(new long[] {3, 20000});
        // SGD with momentum: one buffer (the m words), no second moment
        assertArrayEquals(new long[] {0x1000, 0x3000, 0x10000, 0, 3, 0x2000, 0x4000, 0x10000 + 16, 0, 20000},
                t.tensors(new long[] {0x1000, 0x2000}, new long[] {0x3000, 0x4000}, 0x10000, 0));
        // plain SGD: no state at all
        assertArrayEquals(new long[] {0x1000, 0x3000, 0, 0, 3, 0x2000, 0x4000, 0, 0, 20000},
                t.tensors(new long[] {0x1000, 0x2000}, new long[] {0x3000, 0x4000}, 0, 0));
    }

    @Test
    void emptyTensorsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new MultiTensorTable(new long[] {5, 0}));
    }
}
