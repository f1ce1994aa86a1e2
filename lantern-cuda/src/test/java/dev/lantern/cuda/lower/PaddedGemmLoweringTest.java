package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.StridedCopySpec;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.IrParser;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A GEMM whose D rows are not 16-byte aligned (GPT-2's 50257-wide vocabulary) is written with its
 * rows padded to 16 bytes into scratch and packed into D by one strided copy, within the launch
 * contract; aligned or small GEMMs, and GEMMs that read C, stay one dense GEMM.
 */
class PaddedGemmLoweringTest {
    static CudaLowering.Lowered lower(int m, int n, int k, String dtype) {
        return lower(m, n, k, dtype, "param");
    }

    static CudaLowering.Lowered lower(int m, int n, int k, String dtype, String wSource) {
        String ir = """
                graph @head {
                  %x = input {name="x"} : %T[%M,%K]
                  %w = %S {name="w"} : %T[%N,%K]
                  %y = matmul(%x, %w) {transpose_b=true} : %T[%M,%N]
                  return %y
                }
                """.replace("%S", wSource).replace("%T", dtype).replace("%M", Integer.toString(m)).replace("%N", Integer.toString(n))
                .replace("%K", Integer.toString(k));
        CompiledModel model = Compiler.compile(IrParser.parse(ir), CompileOptions.defaults().withTarget("cuda"));
        return CudaLowering.lower(model, CudaTarget.H200); // runs the launch contract
    }

    static List<Step.Launch> copies(CudaLowering.Lowered l, String name) {
        return l.steps().stream().filter(s -> s instanceof Step.Launch x && x.spec() instanceof StridedCopySpec c && c.name().equals(name))
                .map(s -> (Step.Launch) s).toList();
    }

    /** A weight read as Bᵀ is read in place, its padding rows allocated behind it; an activation is copied. */
    @Test
    void aParameterTableIsReadInPlaceWithItsPaddingRowsAllocated() {
        CudaLowering.Lowered l = lower(37, 50257, 64, "bf16", "param");
        Step.Gemm g = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).findFirst().orElseThrow();
        assertEquals(Buf.Kind.VALUE, g.b().kind());
        assertEquals("w", g.b().name());
        assertEquals(50264L * 64 * 2, g.b().bytes(), "the GEMM reads the 7 padding rows behind the table");
        assertEquals(50264L * 64 * 2, l.valueBytes().get("w"), "the executor allocates them");
        assertTrue(copies(l, "lt_padb").isEmpty(), "no copy of the table");
        assertEquals(37L * 64 * 2, l.valueBytes().get("x"), "other values keep their size");
    }

    @Test
    void oddWideOutputRunsWithNPaddedToEightThenIsPacked() {
        for (String dtype : new String[] {"f32", "bf16"}) {
            int n = 50257;
            CudaLowering.Lowered l = lower(37, n, 64, dtype, "input");
            List<Step.Gemm> gemms = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).toList();
            assertEquals(1, gemms.size());
            GemmSpec spec = gemms.getFirst().spec();
            assertEquals(50264, spec.n(), dtype + ": N padded to a multiple of 8");
            assertEquals(50264, spec.ldd());
            assertEquals(0, (long) spec.ldd() * spec.cdType().bytes % 16);
            List<Step.Launch> padB = copies(l, "lt_padb");
            assertEquals(1, padB.size(), "B copied into the padded rows");
            assertEquals(gemms.getFirst().b(), ((Step.Ptr) padB.getFirst().args().get(1)).buf(), "the GEMM reads the padded B");
            assertTrue(gemms.getFirst().b().bytes() >= 50264L * 64 * spec.abType().bytes);
            List<Step.Launch> packs = copies(l, "lt_unpad");
            assertEquals(1, packs.size(), "one packing copy");
            StridedCopySpec pack = (StridedCopySpec) packs.getFirst().spec();
            assertEquals(List.of(37L, (long) n), pack.shape());
            assertEquals(List.of((long) spec.ldd(), 1L), pack.srcStrides());
            assertEquals(List.of((long) n, 1L), pack.dstStrides());
            Step.Ptr src = (Step.Ptr) packs.getFirst().args().get(0);
            assertEquals(gemms.getFirst().d(), src.buf(), "the copy reads what the GEMM wrote");
            assertTrue(src.buf().bytes() >= 37L * spec.ldd() * spec.cdType().bytes);
        }
    }

    @Test
    void aWeightStoredKByNIsPaddedByColumns() {
        String ir = """
                graph @head {
                  %x = input {name="x"} : bf16[300,64]
                  %w = param {name="w"} : bf16[64,5001]
                  %y = matmul(%x, %w) : bf16[300,5001]
                  return %y
                }
                """;
        CudaLowering.Lowered l = CudaLowering.lower(Compiler.compile(IrParser.parse(ir), CompileOptions.defaults().withTarget("cuda")),
                CudaTarget.H200);
        Step.Gemm g = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).findFirst().orElseThrow();
        assertEquals(5008, g.spec().n());
        StridedCopySpec padB = (StridedCopySpec) copies(l, "lt_padb").getFirst().spec();
        assertEquals(List.of(64L, 5001L), padB.shape());
        assertEquals(List.of(5008L, 1L), padB.dstStrides());
    }

    @Test
    void aBiasKeepsNAndPadsOnlyTheRows() {
        String ir = """
                graph @head {
                  %x = input {name="x"} : f32[300,64]
                  %w = param {name="w"} : f32[64,5001]
                  %b = param {name="b"} : f32[5001]
                  %y = gemm(%x, %w, %b) {bias=true} : f32[300,5001]
                  return %y
                }
                """;
        CudaLowering.Lowered l = CudaLowering.lower(Compiler.compile(IrParser.parse(ir), CompileOptions.defaults().withTarget("cuda")),
                CudaTarget.H200);
        Step.Gemm g = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).findFirst().orElseThrow();
        assertEquals(5001, g.spec().n(), "the bias is n wide: N stays");
        assertEquals(5004, g.spec().ldd());
        assertTrue(copies(l, "lt_padb").isEmpty());
    }

    @Test
    void largePaddedOutputGoesInChunksThroughBoundedScratch() {
        int m = 1000;
        int n = 50257;
        CudaLowering.Lowered l = lower(m, n, 64, "f32");
        List<Step.Gemm> gemms = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).toList();
        assertTrue(gemms.size() > 1, "chunks: " + gemms.size());
        long rows = 0;
        for (Step.Gemm g : gemms) {
            assertEquals(rows * 64 * 4, g.aOffset(), "chunk A starts at its first row");
            assertEquals(0, g.aOffset() % 256);
            assertTrue(g.d().bytes() <= GemmLowerer.PAD_SCRATCH_BYTES);
            rows += g.spec().m();
        }
        assertEquals(m, rows, "the chunks cover every row once");
        long packedAt = 0;
        for (Step s : l.steps()) {
            if (s instanceof Step.Launch x && x.spec() instanceof StridedCopySpec c && c.name().equals("lt_unpad")) {
                Step.Ptr dst = (Step.Ptr) x.args().get(1);
                assertEquals(packedAt, dst.offset());
                packedAt += dst.extent();
            }
        }
        assertEquals((long) m * n * 4, packedAt, "the packing copies fill D exactly");
    }

    @Test
    void alignedOrSmallOutputsStayDense() {
        for (int[] s : new int[][] {{64, 50256, 64}, {7, 1001, 16}}) {
            CudaLowering.Lowered l = lower(s[0], s[1], s[2], "f32");
            Step.Gemm g = l.steps().stream().filter(x -> x instanceof Step.Gemm).map(x -> (Step.Gemm) x).findFirst().orElseThrow();
            assertEquals(s[1], g.spec().ldd());
            assertTrue(l.steps().stream().noneMatch(x -> x instanceof Step.Launch y && y.spec() instanceof StridedCopySpec));
            assertEquals(s[1], g.spec().n());
        }
    }

    @Test
    void leadingDimensionBelowNIsRefused() {
        GemmSpec s = GemmSpec.of(4, 10, 3, GemmSpec.DataType.F32, GemmSpec.DataType.F32);
        assertThrows(IllegalArgumentException.class, () -> s.withLdd(9));
        assertEquals(4L * 12 * 4, LaunchContract.gemmBytes(s.withLdd(12), 'D'));
    }
}
