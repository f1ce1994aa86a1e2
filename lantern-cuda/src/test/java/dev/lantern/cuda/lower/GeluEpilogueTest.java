package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.ElementwiseOp;
import dev.lantern.cuda.codegen.ElementwiseSpec;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.IrParser;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link GeluEpilogue}: the training step's GELU and its gradient go into the GEMMs' cuBLASLt
 * epilogues when fused (GELU_AUX, DGELU) and the elementwise kernels are not launched; the eager
 * step keeps one kernel per op; a GEMM output that something else reads keeps its own write; the
 * specs refuse what cuBLASLt's auxiliary matrix cannot take.
 */
class GeluEpilogueTest {
    private static long epilogues(CudaLowering.Lowered l, GemmSpec.Epilogue e) {
        return l.steps().stream().filter(s -> s instanceof Step.Gemm g && g.spec().epilogue() == e).count();
    }

    private static long geluLaunches(CudaLowering.Lowered l) {
        return l.steps().stream().filter(s -> s instanceof Step.Launch la && la.spec() instanceof ElementwiseSpec e
                && e.steps().stream().anyMatch(st -> st.op() == ElementwiseOp.GELU_TANH || st.op() == ElementwiseOp.GELU_TANH_GRAD)).count();
    }

    @Test
    void theTrainingStepsGeluGoesIntoTheGemmsEpilogues() {
        var bg = BackwardGraphs.backward(BackwardGraphs.model(BackwardGraphs.ODD, 29)); // MLP 40 wide: a multiple of 8
        for (CompileOptions.Amp amp : List.of(CompileOptions.Amp.BF16, CompileOptions.Amp.F16)) {
            CudaLowering.Lowered fused = CudaLowering.lower(BackwardGraphs.compile(bg.graph(), true, amp), CudaTarget.H200);
            assertEquals(1, epilogues(fused, GemmSpec.Epilogue.GELU_AUX), amp + ": the forward's up projection");
            assertEquals(1, epilogues(fused, GemmSpec.Epilogue.DGELU), amp + ": the backward's down projection's dx");
            assertEquals(0, geluLaunches(fused), amp + ": no GELU kernel left");
            CudaLowering.Lowered eager = CudaLowering.lower(BackwardGraphs.compile(bg.graph(), false, amp), CudaTarget.H200);
            assertEquals(0, epilogues(eager, GemmSpec.Epilogue.GELU_AUX) + epilogues(eager, GemmSpec.Epilogue.DGELU), amp + " eager");
            assertEquals(2, geluLaunches(eager), amp + " eager: gelu and gelu_grad kernels");
        }
        // f32 (no autocast): cuBLASLt's auxiliary matrix is 16-bit here, so nothing folds
        CudaLowering.Lowered f32 = CudaLowering.lower(BackwardGraphs.compile(bg.graph(), true, CompileOptions.Amp.NONE), CudaTarget.H200);
        assertEquals(0, epilogues(f32, GemmSpec.Epilogue.GELU_AUX) + epilogues(f32, GemmSpec.Epilogue.DGELU));
    }

    @Test
    void theSwitchKeepsTheTwoLaunches() {
        var bg = BackwardGraphs.backward(BackwardGraphs.model(BackwardGraphs.ODD, 29));
        System.setProperty("lantern.gemm.gelu.epilogue", "false");
        try {
            CudaLowering.Lowered l = CudaLowering.lower(BackwardGraphs.compile(bg.graph(), true, CompileOptions.Amp.BF16), CudaTarget.H200);
            assertEquals(0, epilogues(l, GemmSpec.Epilogue.GELU_AUX) + epilogues(l, GemmSpec.Epilogue.DGELU));
            assertEquals(2, geluLaunches(l));
        } finally {
            System.clearProperty("lantern.gemm.gelu.epilogue");
        }
    }

    private static CompiledModel compile(String body) {
        return Compiler.compile(IrParser.parse("graph @g {\n" + body + "}\n"), CompileOptions.defaults().withTarget("cuda"));
    }

    @Test
    void aProductReadElsewhereOrTheErfFormKeepsItsOwnWrite() {
        String inputs = "  %x = input {name=\"x\"} : bf16[9,16]\n  %w = input {name=\"w\"} : bf16[16,24]\n"
                + "  %h = input {name=\"h\"} : bf16[9,24]\n";
        // g is also an output: DGELU would never write it
        CudaLowering.Lowered shared = CudaLowering.lower(compile(inputs + "  %g = matmul(%x, %w) : bf16[9,24]\n"
                + "  %d = gelu_grad(%h, %g) {approximate=\"tanh\"} : bf16[9,24]\n  return %d, %g\n"), CudaTarget.H200);
        assertEquals(0, epilogues(shared, GemmSpec.Epilogue.DGELU));
        // read once, by the gradient: folded
        CudaLowering.Lowered alone = CudaLowering.lower(compile(inputs + "  %g = matmul(%x, %w) : bf16[9,24]\n"
                + "  %d = gelu_grad(%h, %g) {approximate=\"tanh\"} : bf16[9,24]\n  return %d\n"), CudaTarget.H200);
        assertEquals(1, epilogues(alone, GemmSpec.Epilogue.DGELU));
        // the erf form: cuBLASLt's GELU is tanh's
        CudaLowering.Lowered erf = CudaLowering.lower(compile(inputs + "  %g = matmul(%x, %w) : bf16[9,24]\n"
                + "  %d = gelu_grad(%h, %g) {approximate=\"none\"} : bf16[9,24]\n  return %d\n"), CudaTarget.H200);
        assertEquals(0, epilogues(erf, GemmSpec.Epilogue.DGELU));
    }

    @Test
    void auxEpiloguesRefuseWhatCublasLtCannotTake() {
        for (GemmSpec.Epilogue e : new GemmSpec.Epilogue[] {GemmSpec.Epilogue.GELU_AUX, GemmSpec.Epilogue.DGELU}) {
            List<Runnable> bad = List.of(
                    () -> new GemmSpec(7, 12, 5, 1, false, false, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16, e, null),
                    () -> new GemmSpec(7, 16, 5, 2, false, false, GemmSpec.DataType.BF16, GemmSpec.DataType.BF16, e, null),
                    () -> new GemmSpec(7, 16, 5, 1, false, false, GemmSpec.DataType.F32, GemmSpec.DataType.F32, e, null));
            for (Runnable b : bad) {
                IllegalArgumentException x = assertThrows(IllegalArgumentException.class, b::run);
                assertTrue(x.getMessage().contains("auxiliary matrix"), x.getMessage());
            }
        }
    }
}
