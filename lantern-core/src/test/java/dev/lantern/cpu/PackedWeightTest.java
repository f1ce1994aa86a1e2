package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.reference.RefMath;
import dev.lantern.reference.RefTensor;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.Arena;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * GEMM against a weight packed once ({@link PackedWeight}): the float64 reference on seeded
 * inputs, shapes whose M, N and K no tile divides (primes, M = 1..16 as in decode), B stored
 * plain or transposed and in bf16, K deeper than one block, the next short or ragged (the tile touches the next B panel
 * ahead: {@link GemmTile}); and bit-identical to the unpacked GEMM (same panels, same K order).
 */
class PackedWeightTest {

    @ParameterizedTest(name = "{0} m={1} k={2} n={3} transB={4} seed={5}")
    @CsvSource({
            "f32, 1, 768, 97, false, 1", "f32, 2, 257, 33, true, 2", "f32, 3, 31, 61, false, 3", "f32, 5, 513, 7, true, 4",
            "f32, 7, 300, 131, false, 5", "f32, 11, 64, 1, false, 6", "f32, 13, 1, 67, true, 7", "f32, 16, 259, 95, false, 8",
            "f32, 127, 263, 509, true, 9", "f32, 241, 97, 37, false, 10", "bf16, 9, 129, 71, true, 11", "f16, 17, 67, 45, false, 12",
            "f32, 128, 264, 96, false, 13", "f32, 136, 1100, 80, false, 14", "f32, 257, 520, 65, true, 15", "f32, 8, 300, 33, false, 16"})
    void matchesTheFloat64Reference(String dtype, int m, int k, int n, boolean transB, long seed) {
        check(dtype, m, k, n, transB, seed);
    }

    /**
     * K deeper than one block ({@link Gemm#KC}, 3072 with 512-bit vectors, 256 on AVX2), where the
     * sums go back to the tile buffer between blocks and GemmTile touches the next block's first
     * panel ahead: two blocks (one deeper by 8, one ragged), three, a last block of 1..7 rows past
     * an even split; M = 8 (one toucher a panel) to 257 (past one A block).
     */
    static Stream<Arguments> deepK() {
        int kc = Gemm.KC;
        return Stream.of(
                Arguments.of(128, kc + 8, 96, false, 17L),
                Arguments.of(136, 2 * kc + 3, 80, false, 18L),
                Arguments.of(257, kc + 1, 65, true, 19L),
                Arguments.of(8, 2 * kc - 5, 33, false, 20L),
                Arguments.of(9, 3 * kc + 7, 17, true, 21L));
    }

    @ParameterizedTest(name = "m={0} k={1} n={2} transB={3} seed={4}")
    @MethodSource("deepK")
    void kDeeperThanOneBlockMatchesTheFloat64Reference(int m, int k, int n, boolean transB, long seed) {
        check("f32", m, k, n, transB, seed);
    }

    @Test
    void kBlocksAreTheFewestAndEven() {
        assertEquals(0, (0 + Gemm.kBlock(0) - 1) / Gemm.kBlock(0), "K = 0 is no block");
        for (int k = 1; k <= 4 * Gemm.KC + 100; k++) {
            int kb = Gemm.kBlock(k);
            int blocks = (k + kb - 1) / kb;
            int last = k - (blocks - 1) * kb;
            String at = "k=" + k + " block=" + kb;
            assertTrue(kb <= Gemm.KC && kb % 8 == 0, at);
            assertEquals((k + Gemm.KC - 1) / Gemm.KC, blocks, "the fewest blocks, " + at);
            assertTrue(last > 0 && last <= kb && (blocks == 1 || last >= kb - 8 * blocks), "an even split, last " + last + ", " + at);
        }
    }

    private static void check(String dtype, int m, int k, int n, boolean transB, long seed) {
        DType t = DType.parse(dtype);
        Tensor a = KernelTest.randn(DType.F32, seed, m, k);
        Tensor b = transB ? KernelTest.randn(t, seed + 1, n, k) : KernelTest.randn(t, seed + 1, k, n);
        Tensor bias = KernelTest.randn(DType.F32, seed + 2, n);
        Tensor res = KernelTest.randn(DType.F32, seed + 3, m, n);
        View bv = transB ? View.of(b).permute(1, 0) : View.of(b);
        Tensor c = Tensor.allocate(DType.F32, Shape.of(m, n)).poison();
        GemmEpilogue ep = GemmEpilogue.biasGelu(View.of(bias), true).withResidual(View.of(res));
        try (Arena arena = Arena.ofShared()) {
            PackedWeight w = PackedWeight.pack(bv, arena);
            Gemm.matmul(View.of(a), w, View.of(c), false, ep);
            double[] want = new double[m * n];
            for (int i = 0; i < m; i++) {
                for (int j = 0; j < n; j++) {
                    double acc = 0;
                    for (int p = 0; p < k; p++) {
                        float bpj = transB ? b.get((long) j * k + p) : b.get((long) p * n + j);
                        acc += (double) a.get((long) i * k + p) * bpj;
                    }
                    want[i * n + j] = RefMath.geluTanh(acc + bias.get(j)) + res.get((long) i * n + j);
                }
            }
            Diff.assertClose(c, new RefTensor(Shape.of(m, n), want), 1e-5, "packed gemm " + dtype + " seed=" + seed);

            Tensor plain = Tensor.allocate(DType.F32, Shape.of(m, n)).poison();
            Gemm.matmul(View.of(a), transB ? View.of(b) : bv, View.of(plain), false, transB, ep);
            assertArrayEquals(plain.toFloats(), c.toFloats(), "packed and per-call packing must agree bit for bit, seed=" + seed);
        }
    }

    @Test
    void batchedAFoldsIntoRowsAndAStridedOneRunsPerBatch() {
        long seed = 21;
        int k = 37;
        int n = 19;
        Tensor a = KernelTest.randn(DType.F32, seed, 3, 5, k);
        Tensor b = KernelTest.randn(DType.F32, seed + 1, k, n);
        try (Arena arena = Arena.ofShared()) {
            PackedWeight w = PackedWeight.pack(View.of(b), arena);
            // (3, 5, k) as is folds into 15 rows; its (5, 3, k) permutation does not fold
            for (View av : new View[] {View.of(a), View.of(a).permute(1, 0, 2)}) {
                int b0 = av.shape().dim(0);
                int b1 = av.shape().dim(1);
                Tensor c = Tensor.allocate(DType.F32, Shape.of(b0, b1, n)).poison();
                Gemm.matmul(av, w, View.of(c), false, GemmEpilogue.NONE);
                Tensor want = Tensor.allocate(DType.F32, Shape.of(b0, b1, n)).poison();
                Gemm.matmul(av, View.of(b), View.of(want), false, false, GemmEpilogue.NONE);
                assertArrayEquals(want.toFloats(), c.toFloats(), "batched A " + av.shape());
                double[] ref = new double[b0 * b1 * n];
                for (int x = 0; x < b0; x++) {
                    for (int y = 0; y < b1; y++) {
                        for (int j = 0; j < n; j++) {
                            double acc = 0;
                            for (int p = 0; p < k; p++) {
                                acc += (double) Convert.get(av.segment(), av.dtype(), av.offset() + x * av.strides()[0] + y * av.strides()[1] + p * av.strides()[2])
                                        * b.get((long) p * n + j);
                            }
                            ref[(x * b1 + y) * n + j] = acc;
                        }
                    }
                }
                Diff.assertClose(c, new RefTensor(Shape.of(b0, b1, n), ref), 1e-5, "batched A " + av.shape());
            }
        }
    }

    /**
     * A row's bits do not depend on which micro-kernel computed it (the narrow 1..3-row one or the
     * 6-row one) nor on how M was split: every prefix M = 1..16 of one A gives the full product's rows.
     */
    @Test
    void rowsAreBitIdenticalWhateverM() {
        long seed = 33;
        int k = 517;
        int n = 131;
        Tensor a = KernelTest.randn(DType.F32, seed, 16, k);
        Tensor b = KernelTest.randn(DType.F32, seed + 1, k, n);
        Tensor full = Tensor.allocate(DType.F32, Shape.of(16, n)).poison();
        Gemm.matmul(View.of(a), View.of(b), View.of(full), false, false, GemmEpilogue.NONE);
        float[] want = full.toFloats();
        try (Arena arena = Arena.ofShared()) {
            PackedWeight w = PackedWeight.pack(View.of(b), arena);
            for (int m = 1; m <= 16; m++) {
                View rows = View.of(a).slice(0, 0, m);
                Tensor c = Tensor.allocate(DType.F32, Shape.of(m, n)).poison();
                Gemm.matmul(rows, w, View.of(c), false, GemmEpilogue.NONE);
                assertArrayEquals(java.util.Arrays.copyOf(want, m * n), c.toFloats(), "M=" + m);
            }
        }
    }

    @Test
    void refusesAMismatchedK() {
        try (Arena arena = Arena.ofShared()) {
            PackedWeight w = PackedWeight.pack(View.of(KernelTest.randn(DType.F32, 1, 8, 4)), arena);
            Tensor a = KernelTest.randn(DType.F32, 2, 3, 9);
            assertThrows(IllegalArgumentException.class,
                    () -> Gemm.matmul(View.of(a), w, View.of(Tensor.allocate(DType.F32, Shape.of(3, 4))), false, GemmEpilogue.NONE));
        }
    }
}
