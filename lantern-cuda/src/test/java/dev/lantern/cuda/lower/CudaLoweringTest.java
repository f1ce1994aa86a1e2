package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.AttentionSpec;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.NormSpec;
import dev.lantern.cuda.codegen.RopeSpec;
import dev.lantern.engine.BackendChoices;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the lowering decides for the benchmark blocks, without a GPU. */
public class CudaLoweringTest {
    public static CudaLowering.Lowered lower(BlockConfig c, boolean fuse) {
        var m = TransformerBlock.build(c, DType.BF16);
        return CudaLowering.lower(Compiler.compile(m.graph(), CompileOptions.defaults().withTarget("cuda").withFuse(fuse)),
                CudaTarget.H200);
    }

    public static List<Step.Gemm> gemms(CudaLowering.Lowered l) {
        return l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).toList();
    }

    @Test
    void decoderGemmsTakeTheirEpiloguesAndResidualsThroughC() {
        CudaLowering.Lowered l = lower(BlockConfig.named("decoder"), true);
        List<Step.Gemm> g = gemms(l);
        assertEquals(6, g.size());
        assertTrue(g.stream().allMatch(x -> x.spec().m() == 16 * 1024 && x.spec().batch() == 1), "batch folded into M");
        assertEquals(GemmSpec.Epilogue.GELU, g.get(4).spec().epilogue());
        // the residual stream through C: the o projection adds x and writes x1, the down projection adds x1
        Step.Gemm o = g.get(3);
        assertEquals(Buf.value("x", 0).name(), o.c().name(), "x + attn through the o projection's C");
        assertEquals(1f, o.beta());
        Step.Gemm down = g.get(5);
        assertNotNull(down.c(), "x1 + mlp through C");
        assertEquals(o.d(), down.c(), "the down projection reads the x1 that the o projection wrote");
        assertEquals(1f, down.beta());
        Step.Launch norm2 = (Step.Launch) l.steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof NormSpec).toList().get(1);
        assertFalse(((NormSpec) norm2.spec()).residual(), "the second norm reads x1 alone, no residual prologue");
        assertEquals(o.d(), ((Step.Ptr) norm2.args().get(0)).buf());
        long ropes = l.steps().stream().filter(s -> s instanceof Step.Launch x && x.spec() instanceof RopeSpec).count();
        assertEquals(1, ropes, "k roped before the attention kernel");
        Step.Launch att = (Step.Launch) l.steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionSpec).findFirst().orElseThrow();
        assertEquals("wgmma", att.source().variant());
        AttentionSpec as = (AttentionSpec) att.spec();
        assertEquals(10000.0, as.ropeBase(), "the default tile rotates q itself");
        assertFalse(as.ropeKeys());
        assertEquals(g.get(0).d(), ((Step.Ptr) att.args().get(0)).buf(), "q read unrotated, in place");
        assertEquals(List.of(new Step.I64(1024L * 4096), new Step.I64(128), new Step.I64(4096)), att.args().subList(7, 10));
        // o written through out_perm: (b, h, s) strides of a (b, s, h, d) buffer
        assertEquals(List.of(new Step.I64(1024L * 4096), new Step.I64(128), new Step.I64(4096)), att.args().subList(16, 19));
        assertEquals(9, l.model().kernels().size());
    }

    @Test
    void aTileThatRotatesTakesTheRopeIntoTheAttentionKernel() {
        var m = TransformerBlock.build(BlockConfig.named("decoder"), DType.BF16);
        CudaTarget rotating = CudaTarget.H200.withWgmmaAttention(new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true));
        CudaLowering.Lowered l = CudaLowering.lower(Compiler.compile(m.graph(), CompileOptions.defaults().withTarget("cuda")), rotating);
        assertEquals(0, l.steps().stream().filter(s -> s instanceof Step.Launch x && x.spec() instanceof RopeSpec).count(),
                "no rope kernels");
        Step.Launch att = (Step.Launch) l.steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionSpec).findFirst().orElseThrow();
        assertEquals(10000.0, ((AttentionSpec) att.spec()).ropeBase());
        // q and k read unrotated, in place: the q and k projections' outputs, (b, s, h, d) viewed as (b, h, s, d)
        List<Step.Gemm> g = gemms(l);
        assertEquals(g.get(0).d(), ((Step.Ptr) att.args().get(0)).buf());
        assertEquals(g.get(1).d(), ((Step.Ptr) att.args().get(1)).buf());
        assertEquals(List.of(new Step.I64(1024L * 4096), new Step.I64(128), new Step.I64(4096)), att.args().subList(7, 10));
        // the default tile rotates q alone: k's rope kernel stays (decoderGemmsTake... above)
        assertEquals(1, lower(BlockConfig.named("decoder"), true).steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof RopeSpec).count());
    }

    @Test
    void theQueryRopeSwitchKeepsBothRopeKernels() {
        BlockConfig c = BlockConfig.named("decoder");
        CompiledModel m = Compiler.compile(TransformerBlock.build(c, DType.BF16).graph(), CompileOptions.defaults().withTarget("cuda")
                .withChoices(BackendChoices.defaults().withQueryRopeInAttention(false)));
        CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
        assertEquals(2, l.steps().stream().filter(s -> s instanceof Step.Launch x && x.spec() instanceof RopeSpec).count());
        Step.Launch att = (Step.Launch) l.steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionSpec).findFirst().orElseThrow();
        assertEquals(0.0, ((AttentionSpec) att.spec()).ropeBase());
        assertNotEquals(m.cacheKey(), Compiler.compile(TransformerBlock.build(c, DType.BF16).graph(),
                CompileOptions.defaults().withTarget("cuda")).cacheKey(), "a backend choice is part of the cache key");
    }

    @Test
    void decoderNeedsNoTransientOrScratchMemory() {
        CudaLowering.Lowered l = lower(BlockConfig.named("decoder"), true);
        assertEquals(0, l.transientBytes(), "roped q/k live in the kernel's planned (bf16) scratch");
        assertEquals(List.of(), l.scratch(), "the o projection writes the residual stream x1 itself");
    }

    @Test
    void aTunedSplitGeluIsAPlainGemmThenGeluInPlace() {
        var m = TransformerBlock.build(BlockConfig.named("decoder"), DType.BF16);
        var compiled = Compiler.compile(m.graph(), CompileOptions.defaults().withTarget("cuda"));
        CudaLowering.Lowered l = CudaLowering.lower(compiled, CudaTarget.H200, s -> CudaTarget.H200,
                g -> g.epilogue() == GemmSpec.Epilogue.GELU);
        Step.Gemm up = gemms(l).get(4);
        assertEquals(GemmSpec.Epilogue.NONE, up.spec().epilogue());
        int i = l.steps().indexOf(up);
        Step.Launch gelu = (Step.Launch) l.steps().get(i + 1);
        assertEquals(List.of(new Step.Ptr(up.d()), new Step.Ptr(up.d())), gelu.args().subList(0, 2), "in place on D");
    }

    @Test
    void encoderGemmsUseBiasAndGeluBiasEpilogues() {
        List<Step.Gemm> g = gemms(lower(BlockConfig.named("encoder"), true));
        assertTrue(g.subList(0, 4).stream().allMatch(x -> x.spec().epilogue() == GemmSpec.Epilogue.BIAS));
        assertEquals(GemmSpec.Epilogue.GELU_BIAS, g.get(4).spec().epilogue());
        assertEquals(GemmSpec.Epilogue.BIAS, g.get(5).spec().epilogue());
        assertNotNull(g.get(5).c());
    }

    @Test
    void eagerAttentionIsTwoBatchedGemmsAndASoftmax() {
        CudaLowering.Lowered l = lower(BlockConfig.named("cpu-small"), false);
        List<Step.Gemm> g = gemms(l);
        assertEquals(8, g.size());
        Step.Gemm qk = g.get(3);
        assertEquals(8, qk.spec().batch());
        assertTrue(qk.spec().transB());
        assertEquals(17, l.model().kernels().size());
    }

    /**
     * Eager ropes read the strided q and k (free permutes of the projections' outputs) in place,
     * through the strided-input rope: no lt_copy before them (there were two, q's and k's). The one
     * copy left on decoder-small is v's, before the batched P·V GEMM (cuBLASLt takes one batch stride).
     */
    @Test
    void eagerRopesReadStridedQueriesAndKeysInPlace() {
        CudaLowering.Lowered l = lower(BlockConfig.named("decoder-small"), false);
        List<Step.Launch> ropes = l.steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof RopeSpec).map(s -> (Step.Launch) s).toList();
        assertEquals(2, ropes.size());
        List<Step.Gemm> g = gemms(l);
        for (int i = 0; i < 2; i++) {
            RopeSpec spec = (RopeSpec) ropes.get(i).spec();
            assertNotNull(spec.input(), "strided input layout");
            assertEquals(new RopeSpec.InputLayout(16, 128L * 1024, 64, 1024), spec.input(), "(b, h, s, d) view of (b, s, h, d)");
            assertEquals(g.get(i).d(), ((Step.Ptr) ropes.get(i).args().get(0)).buf(), "reads the projection's output");
        }
        long copies = l.steps().stream().filter(s -> s instanceof Step.Launch x && x.source().entry().startsWith("lt_copy")).count();
        assertEquals(1, copies, "only v's copy before the P.V GEMM");
    }

    @Test
    void oddShapesLowerToGeneralPaths() {
        BlockConfig odd = new BlockConfig("odd", 1, 77, 96, 3, 200, true);
        CudaLowering.Lowered l = lower(odd, true);
        Step.Launch att = (Step.Launch) l.steps().stream()
                .filter(s -> s instanceof Step.Launch x && x.spec() instanceof AttentionSpec).findFirst().orElseThrow();
        assertEquals("general", att.source().variant(), "head_dim 32 takes the general attention kernel");
        lower(new BlockConfig("odd-enc", 2, 33, 120, 4, 250, false), true);
        lower(odd, false);
    }

    /** gather (an embedding) lowers to the gather kernel (it was refused by name before the model issue). */
    @Test
    void gatherLowersToTheGatherKernel() {
        var b = new dev.lantern.frontend.GraphBuilder("embed");
        var table = b.param("wte", dev.lantern.ir.TensorType.of(DType.BF16, 50, 64), dev.lantern.frontend.ParamInit.normal(1f));
        var ids = b.input("ids", dev.lantern.ir.TensorType.of(DType.I64, 2, 8));
        var h = b.op(dev.lantern.ir.Op.GATHER, dev.lantern.ir.Attrs.of("axis", 0), table, ids);
        var g = b.build(b.matmul(h, b.param("w", dev.lantern.ir.TensorType.of(DType.BF16, 64, 32), dev.lantern.frontend.ParamInit.normal(1f))));
        var model = Compiler.compile(g, CompileOptions.defaults().withTarget("cuda"));
        assertTrue(CudaLowering.lower(model, CudaTarget.H200).steps().stream()
                .anyMatch(s -> s instanceof Step.Launch x && x.spec() instanceof dev.lantern.cuda.codegen.GatherSpec));

    }

    @Test
    void anF32BiasOnABf16OutputIsAddedAfterTheGemm() {
        // cuBLASLt's bias epilogue refuses an f32 bias on a bf16 D (CUBLAS_STATUS_INVALID_VALUE on the H200)
        dev.lantern.ir.Graph g = dev.lantern.ir.IrParser.parse("""
                graph @b {
                  %x = input {name="x"} : bf16[7,50]
                  %w = param {name="w"} : bf16[50,96]
                  %b = param {name="b"} : f32[96]
                  %y = gemm(%x, %w, %b) {bias=true} : bf16[7,96]
                  return %y
                }
                """);
        CompiledModel m = Compiler.compile(g, CompileOptions.defaults().withTarget("cuda"));
        CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
        Step.Gemm gemm = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).findFirst().orElseThrow();
        assertEquals(GemmSpec.Epilogue.NONE, gemm.spec().epilogue(), "no bias epilogue of another dtype than D: " + gemm.spec());
        assertTrue(l.steps().stream().anyMatch(s -> s instanceof Step.Launch x && x.args().stream()
                .anyMatch(a -> a instanceof Step.Ptr p && p.buf().name().equals("b"))), "the bias is added by a kernel");
    }

    @Test
    void autocastGivesAHiddenLayersBiasTheGemmsDtypeSoItStaysInTheEpilogue() {
        dev.lantern.ir.Graph g = dev.lantern.ir.IrParser.parse("""
                graph @b {
                  %x = input {name="x"} : f32[7,50]
                  %w = param {name="w"} : f32[50,96]
                  %b = param {name="b"} : f32[96]
                  %h = matmul(%x, %w) : f32[7,96]
                  %y = add(%h, %b) : f32[7,96]
                  %z = relu(%y) : f32[7,96]
                  %w2 = param {name="w2"} : f32[96,10]
                  %o = matmul(%z, %w2) : f32[7,10]
                  return %o
                }
                """);
        CompiledModel m = Compiler.compile(g, CompileOptions.defaults().withTarget("cuda").withAmp(CompileOptions.Amp.BF16));
        CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
        List<Step.Gemm> gemms = l.steps().stream().filter(s -> s instanceof Step.Gemm).map(s -> (Step.Gemm) s).toList();
        assertEquals(2, gemms.size());
        GemmSpec hidden = gemms.getFirst().spec();
        assertEquals(GemmSpec.DataType.BF16, hidden.cdType(), "the hidden layer stays bf16: " + gemms);
        assertEquals(GemmSpec.Epilogue.RELU_BIAS, hidden.epilogue(), "bias and ReLU in cuBLASLt's epilogue: " + hidden);
        assertEquals(GemmSpec.DataType.BF16, hidden.biasType());
        assertEquals(1, l.steps().stream().filter(s -> s instanceof Step.Launch).count(), "the input's cast to bf16 and the two GEMMs: " + l.steps());
    }
}
