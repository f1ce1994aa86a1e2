package dev.lantern.cuda.lower;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.codegen.NormBackwardSpec;
import dev.lantern.cuda.codegen.NormWeightGradSpec;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.NvccOnPath;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kernel of the backward ops ({@link BackwardGraphs#BODIES}, in f32, bf16 and f16) and of a language model's whole
 * training step (f32, bf16 and f16 autocast; fused and unfused), and the multi-tensor optimizer's
 * kernels (sum of squares, AdamW, SGD), and norm_weight_grad's wide and mixed-dtype forms, compile for sm_90 with nvcc.
 * Skips without nvcc.
 */
@Tag("nvcc")
class BackwardNvccTest {
    @TempDir
    Path tmp;

    @Test
    void everyBackwardKernelCompilesForSm90() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        Map<String, CudaKernelSource> unique = new TreeMap<>();
        List<Graph> graphs = new ArrayList<>();
        for (String t : new String[] {"f32[", "bf16[", "f16["}) { // each op in every dtype the gpu tier runs it in
            BackwardGraphs.BODIES.forEach(b -> graphs.add(dev.lantern.ir.IrParser.parse(BackwardGraphs.graph(b).toString().replace("f32[", t))));
        }
        Graph step = BackwardGraphs.backward(BackwardGraphs.model(BackwardGraphs.ODD, 29)).graph();
        for (CompileOptions.Amp amp : CompileOptions.Amp.values()) {
            for (boolean fuse : new boolean[] {true, false}) {
                List<Graph> gs = amp == CompileOptions.Amp.NONE ? new ArrayList<>(graphs) : new ArrayList<>();
                gs.add(step);
                for (Graph g : gs) {
                    for (Step s : CudaLowering.lower(BackwardGraphs.compile(g, fuse, amp), CudaTarget.H200).steps()) {
                        if (s instanceof Step.Launch l) {
                            unique.putIfAbsent(l.source().entry(), l.source());
                        }
                    }
                }
            }
        }
        assertTrue(unique.size() >= 20, "kernels: " + unique.keySet());
        StringBuilder failures = new StringBuilder();
        for (CudaKernelSource src : unique.values()) {
            failures.append(compile(src));
        }
        assertEquals("", failures.toString());
        System.out.println("[nvcc] " + unique.size() + " distinct backward kernels compile for " + CudaTarget.H200.arch());
    }

    /** norm_weight_grad's paths that the step's small widths do not reach: past 4096 columns, mixed dtypes, the 16x1024x4096 step's. */
    @Test
    void normWeightGradKernelsCompileForSm90() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        StringBuilder failures = new StringBuilder();
        DType[][] types = {{DType.BF16, DType.F32, DType.F32}, {DType.F16, DType.F16, DType.F16}, {DType.F32, DType.BF16, DType.BF16}};
        for (NormWeightGradSpec.Kind kind : NormWeightGradSpec.Kind.values()) {
            for (NormWeightGradSpec.Stage stage : NormWeightGradSpec.Stage.values()) {
                for (long[] shape : new long[][] {{16384, 4096}, {7, 5003}, {5, 1}}) {
                    DType[] t = types[(int) (shape[1] % 3)];
                    CudaKernelSource src = KernelNames.render(new NormWeightGradSpec("lt_norm_dw", stage, kind, shape[0], shape[1], 1e-5,
                            t[0], t[1], t[2]), CudaTarget.H200);
                    StrictKernels.check(src);
                    failures.append(compile(src));
                }
            }
        }
        assertEquals("", failures.toString());
    }

    /**
     * A norm's dx and dw partials in one kernel: both kinds, with and without the residual, at the
     * 16x1024x4096 step's width (16 columns a thread) and odd ones, mixed dtypes; no spills (the
     * launch bounds ask for 2 CTAs of 256 an SM), no atomics.
     */
    @Test
    void fusedNormBackwardKernelsCompileForSm90WithoutSpills() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        StringBuilder failures = new StringBuilder();
        DType[][] types = {{DType.F32, DType.F32, DType.F32, DType.F32}, {DType.BF16, DType.BF16, DType.F32, DType.BF16},
            {DType.F16, DType.F16, DType.F16, DType.F16}};
        int n = 0;
        for (NormWeightGradSpec.Kind kind : NormWeightGradSpec.Kind.values()) {
            for (boolean residual : new boolean[] {false, true}) {
                for (long[] shape : new long[][] {{16384, 4096}, {7, 3001}, {5, 1}}) {
                    DType[] t = types[(int) (shape[1] % 3)];
                    CudaKernelSource src = KernelNames.render(new NormBackwardSpec("lt_norm_bwd", kind, shape[0], shape[1], 1e-5,
                            t[0], t[1], t[2], t[3], residual), CudaTarget.H200);
                    StrictKernels.check(src);
                    NvccOnPath.Ptxas px = NvccOnPath.ptxas(src, CudaTarget.H200, tmp, 120);
                    if (!px.failure().isEmpty()) {
                        failures.append(px.failure());
                    } else if (px.spillStores() != 0) {
                        failures.append(kind).append(residual ? " residual " : " ").append(shape[1]).append(" spills:\n").append(px.log());
                    }
                    n++;
                }
            }
        }
        assertEquals("", failures.toString());
        assertThrows(CodegenException.class, () -> new NormBackwardSpec("lt_norm_bwd", NormWeightGradSpec.Kind.RMS, 3, 4097, 1e-6,
                DType.F32, DType.F32, DType.F32, DType.F32, false), "a row past 4096 does not fit the registers");
        System.out.println("[nvcc] " + n + " fused norm backward kernels compile for sm_90 without spills");
    }

    @Test
    void multiTensorKernelsCompileForSm90() throws Exception {
        Assumptions.assumeTrue(NvccOnPath.found(), "nvcc is not on the PATH");
        StringBuilder failures = new StringBuilder();
        for (CudaKernelSource src : List.of(dev.lantern.cuda.codegen.MultiTensorKernels.sumSquares(),
                dev.lantern.cuda.codegen.MultiTensorKernels.adamw(), dev.lantern.cuda.codegen.MultiTensorKernels.sgd(),
                dev.lantern.cuda.codegen.MultiTensorKernels.decide())) {
            StrictKernels.check(src);
            failures.append(compile(src));
        }
        assertEquals("", failures.toString());
    }

    private String compile(CudaKernelSource src) throws Exception {
        return NvccOnPath.compileCubin(src, CudaTarget.H200, tmp, 120);
    }
}
