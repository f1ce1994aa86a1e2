package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;

import static dev.lantern.cuda.codegen.ElementwiseOp.ADD;
import static dev.lantern.cuda.codegen.ElementwiseOp.GELU_TANH;
import static dev.lantern.ir.DType.BF16;
import static dev.lantern.ir.DType.F16;
import static dev.lantern.ir.DType.F32;

/**
 * The fixed set of kernel specs that the benchmark blocks (decoder, encoder: 16x1024x4096,
 * 32 heads) and the micro benchmarks need, plus shapes that take each general path. The
 * snapshot test, the nvcc test and the GPU harness all render this one list.
 */
public final class BenchmarkKernels {
    private BenchmarkKernels() {
    }

    public static List<KernelSpec> all() {
        List<KernelSpec> specs = new ArrayList<>();
        long rows = 16L * 1024;
        long hidden = 4096;
        List<Long> act = List.of(rows, hidden);
        List<Long> mlp = List.of(rows, 16384L);
        // --- norms (decoder: rms, encoder: layer with bias), with and without the residual prologue
        specs.add(NormSpec.rms("lt_rms_norm_4096", rows, hidden, 1e-6, BF16));
        specs.add(NormSpec.rms("lt_rms_norm_res_4096", rows, hidden, 1e-6, BF16).withResidual());
        specs.add(NormSpec.layer("lt_layer_norm_4096", rows, hidden, 1e-5, BF16, true));
        specs.add(NormSpec.layer("lt_layer_norm_res_4096", rows, hidden, 1e-5, BF16, true).withResidual());
        specs.add(NormSpec.rms("lt_rms_norm_1024", 128, 1024, 1e-6, BF16));
        specs.add(NormSpec.layer("lt_layer_norm_f32out_4096", rows, hidden, 1e-5, BF16, true).withOutDtype(F32));
        specs.add(NormSpec.layer("lt_layer_norm_odd_1000", 4096, 1000, 1e-5, BF16, true).withResidual());
        specs.add(NormSpec.rms("lt_rms_norm_f32_256", 256, 256, 1e-6, F32));
        // --- softmax
        specs.add(SoftmaxSpec.plain("lt_softmax_4096", rows, hidden, BF16));
        specs.add(new SoftmaxSpec("lt_softmax_causal_1024", 16L * 32 * 1024, 1024, 0.08838834764831845, true, 1024,
                BF16, BF16));
        specs.add(new SoftmaxSpec("lt_softmax_odd_1000", 4096, 1000, 0.5, true, 1000, BF16, BF16));
        specs.add(new SoftmaxSpec("lt_softmax_f32_in_bf16_out", 4096, 2048, 1.0, false, 1, F32, BF16));
        // --- elementwise chains
        List<Long> bias = List.of(0L, 1L);
        specs.add(new ElementwiseSpec("lt_add_4096", act,
                List.of(ElementwiseSpec.Operand.contiguous(BF16, act), ElementwiseSpec.Operand.contiguous(BF16, act)),
                List.of(new ElementwiseSpec.Step(ADD, List.of(0, 1))), BF16));
        specs.add(new ElementwiseSpec("lt_gelu_4096", act, List.of(ElementwiseSpec.Operand.contiguous(BF16, act)),
                List.of(new ElementwiseSpec.Step(GELU_TANH, List.of(0))), BF16));
        specs.add(new ElementwiseSpec("lt_bias_gelu_16384", mlp,
                List.of(ElementwiseSpec.Operand.contiguous(BF16, mlp), new ElementwiseSpec.Operand(BF16, bias)),
                List.of(new ElementwiseSpec.Step(ADD, List.of(0, 1)), new ElementwiseSpec.Step(GELU_TANH, List.of(2))),
                BF16));
        List<Long> odd = List.of(33L, 1001L);
        specs.add(new ElementwiseSpec("lt_bias_gelu_odd", odd,
                List.of(ElementwiseSpec.Operand.contiguous(BF16, odd), new ElementwiseSpec.Operand(F32, bias)),
                List.of(new ElementwiseSpec.Step(ADD, List.of(0, 1)), new ElementwiseSpec.Step(GELU_TANH, List.of(2)),
                        ElementwiseSpec.Step.constant(ElementwiseOp.SCALE, 3, -0.5)),
                BF16));
        List<Long> flat = List.of(1000003L);
        specs.add(new ElementwiseSpec("lt_mul_tail", flat,
                List.of(ElementwiseSpec.Operand.contiguous(BF16, flat), ElementwiseSpec.Operand.contiguous(BF16, flat)),
                List.of(new ElementwiseSpec.Step(ElementwiseOp.MUL, List.of(0, 1)),
                        ElementwiseSpec.Step.round(2, F16), new ElementwiseSpec.Step(ElementwiseOp.SILU, List.of(3)),
                        ElementwiseSpec.Step.literal(1.5), new ElementwiseSpec.Step(ElementwiseOp.SUB, List.of(5, 4))),
                BF16));
        // --- casts
        specs.add(new CastSpec("lt_cast_f32_bf16", rows * hidden, F32, BF16));
        specs.add(new CastSpec("lt_cast_bf16_f32_odd", 1000003, BF16, F32));
        // --- rope (decoder: q and k, 16x32x1024x128)
        specs.add(RopeSpec.rotateHalf("lt_rope_128", 16L * 32, 1024, 128, 10000.0, BF16));
        specs.add(new RopeSpec("lt_rope_interleaved_128", 16L * 32 * 1024, 1024, 128, 10000.0, 0, true, BF16, BF16));
        specs.add(new RopeSpec("lt_rope_odd_36", 4L * 3 * 77, 77, 36, 10000.0, 5, false, BF16, BF16));
        // --- permutes: (b, s, h, d) -> (b, h, s, d) and a true transpose of the last two axes
        specs.add(new PermuteSpec("lt_permute_bshd_bhsd", List.of(16L, 1024L, 32L, 128L), List.of(0, 2, 1, 3), BF16));
        specs.add(new PermuteSpec("lt_transpose_last2", List.of(16L, 1024L, 4096L), List.of(0, 2, 1), BF16));
        specs.add(new PermuteSpec("lt_transpose_odd", List.of(3L, 37L, 45L), List.of(2, 0, 1), F32));
        // --- attention
        specs.add(AttentionSpec.of("lt_attention_d128", 16, 32, 1024, 1024, 128, false, BF16));
        specs.add(AttentionSpec.of("lt_attention_d128_causal", 16, 32, 1024, 1024, 128, true, BF16));
        specs.add(AttentionSpec.of("lt_attention_d64_causal", 4, 16, 512, 512, 64, true, BF16));
        specs.add(AttentionSpec.of("lt_attention_d64_f16_ragged", 2, 3, 200, 333, 64, false, F16));
        specs.add(AttentionSpec.of("lt_attention_d80_general", 2, 4, 129, 257, 80, true, BF16));
        specs.add(AttentionSpec.of("lt_attention_d128_small", 1, 16, 128, 128, 128, true, BF16));
        specs.add(AttentionSpec.of("lt_attention_d128_f16_ragged", 2, 3, 200, 333, 128, false, F16));
        specs.add(AttentionSpec.of("lt_attention_d128_causal_ragged", 2, 4, 300, 300, 128, true, BF16));
        return List.copyOf(specs);
    }
}
