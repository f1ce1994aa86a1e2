package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.plan.MemoryPlan;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The launch contract's lowering-time and binding-time checks, without a GPU. */
class LaunchContractTest {
    private static final BlockConfig ODD = new BlockConfig("odd", 3, 1000, 1536, 12, 6000, true);

    private static CompiledModel compile(BlockConfig c, boolean fuse) {
        return Compiler.compile(TransformerBlock.build(c, DType.BF16).graph(),
                CompileOptions.defaults().withTarget("cuda").withFuse(fuse));
    }

    @Test
    void extentOfAStridedViewIsTheLastElementReachedPlusOne() {
        // q inside a (b, s, h, d) buffer read as (b, h, s, d): 3x12x1000x128 over strides of the QKV layout
        long[] dims = {3, 12, 1000, 128};
        long[] strides = {1536000, 128, 1536, 1};
        assertEquals(3L * 1000 * 1536 * 2, LaunchContract.extentBytes(dims, strides, 2));
        assertEquals(0, LaunchContract.extentBytes(new long[]{4, 0, 8}, new long[]{0, 8, 1}, 4), "an empty view touches nothing");
        assertEquals(4, LaunchContract.extentBytes(new long[]{5}, new long[]{0}, 4), "a broadcast scalar");
    }

    @Test
    void everyBlockStepFitsItsBuffersAndTheOddPlanIsGemmAligned() {
        for (boolean fuse : new boolean[]{true, false}) {
            CompiledModel m = compile(ODD, fuse);
            CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200); // runs LaunchContract.check
            assertTrue(l.steps().size() > 5);
            for (MemoryPlan.Placement p : m.plan().placements()) {
                assertEquals(0, p.offset() % LaunchContract.GEMM_ALIGNMENT, p.buffer().value() + " at " + p.offset());
            }
        }
    }

    @Test
    void aGemmWhoseOutputBufferIsTooSmallIsRefusedNamingTheStepAndOperand() {
        CompiledModel m = compile(ODD, true);
        List<Step> steps = new ArrayList<>(CudaLowering.lower(m, CudaTarget.H200).steps());
        int i = indexOfFirstGemm(steps);
        Step.Gemm g = (Step.Gemm) steps.get(i);
        Buf small = new Buf(g.d().kind(), g.d().name(), LaunchContract.gemmBytes(g.spec(), 'D') - 2, g.d().offset());
        steps.set(i, new Step.Gemm(g.kernel(), g.spec(), g.a(), g.b(), g.c(), small, g.bias(), g.beta()));
        LaunchContractException e = assertThrows(LaunchContractException.class, () -> LaunchContract.check(m, steps));
        assertTrue(e.getMessage().contains("step " + i + " (gemm 3000x1536x1536)"), e.getMessage());
        assertTrue(e.getMessage().contains("operand D"), e.getMessage());
        assertTrue(e.getMessage().contains(m.kernels().get(g.kernel()).name()), e.getMessage());
    }

    @Test
    void aBiasEpilogueWithoutABiasIsRefused() {
        CompiledModel m = compile(ODD, true);
        List<Step> steps = new ArrayList<>(CudaLowering.lower(m, CudaTarget.H200).steps());
        int i = indexOfFirstGemm(steps);
        Step.Gemm g = (Step.Gemm) steps.get(i);
        GemmSpec s = g.spec();
        GemmSpec withBias = new GemmSpec(s.m(), s.n(), s.k(), s.batch(), s.transA(), s.transB(), s.abType(), s.cdType(),
                GemmSpec.Epilogue.BIAS, GemmSpec.DataType.BF16);
        steps.set(i, new Step.Gemm(g.kernel(), withBias, g.a(), g.b(), g.c(), g.d(), null, g.beta()));
        LaunchContractException e = assertThrows(LaunchContractException.class, () -> LaunchContract.check(m, steps));
        assertTrue(e.getMessage().contains("operand bias"), e.getMessage());
    }

    @Test
    void aKernelPointerReachingPastItsBufferIsRefusedNamingTheParameter() {
        CompiledModel m = compile(ODD, false);
        List<Step> steps = new ArrayList<>(CudaLowering.lower(m, CudaTarget.H200).steps());
        int i = 0;
        while (!(steps.get(i) instanceof Step.Launch)) {
            i++;
        }
        Step.Launch l = (Step.Launch) steps.get(i);
        List<Step.Arg> args = new ArrayList<>(l.args());
        Step.Ptr p = (Step.Ptr) args.get(0);
        args.set(0, new Step.Ptr(p.buf(), p.buf().bytes() + 1));
        steps.set(i, new Step.Launch(l.kernel(), l.spec(), l.source(), args));
        LaunchContractException e = assertThrows(LaunchContractException.class, () -> LaunchContract.check(m, steps));
        assertTrue(e.getMessage().contains("operand " + l.source().params().get(0).name()), e.getMessage());
        assertTrue(e.getMessage().contains("step " + i + " (" + l.source().entry() + ")"), e.getMessage());
    }

    @Test
    void bindingRefusesMisalignedShortAndNullPointers() {
        CompiledModel m = compile(ODD, true);
        List<Step> steps = CudaLowering.lower(m, CudaTarget.H200).steps();
        Step g = steps.get(indexOfFirstGemm(steps));
        LaunchContract.checkBound(m, 1, g, "A", 0x7f0000000000L, 1 << 20, 1 << 20, 256); // fits exactly
        assertTrue(assertThrows(LaunchContractException.class,
                () -> LaunchContract.checkBound(m, 1, g, "A", 0x7f0000000040L, 1 << 20, 1000, 256))
                .getMessage().contains("not 256-byte aligned"));
        assertTrue(assertThrows(LaunchContractException.class,
                () -> LaunchContract.checkBound(m, 1, g, "B", 0x7f0000000000L, 1000, 1001, 256))
                .getMessage().contains("its allocation holds 1000"));
        assertTrue(assertThrows(LaunchContractException.class,
                () -> LaunchContract.checkBound(m, 1, g, "workspace", 0, 0, 4096, 256))
                .getMessage().contains("null pointer"));
    }

    private static int indexOfFirstGemm(List<Step> steps) {
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i) instanceof Step.Gemm) {
                return i;
            }
        }
        throw new AssertionError("no GEMM step");
    }
}
