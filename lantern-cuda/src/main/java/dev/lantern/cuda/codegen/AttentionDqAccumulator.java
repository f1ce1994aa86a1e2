package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;
import java.util.List;

/**
 * The two ends of the f32 accumulator that fused dq is summed into ({@link AttentionBackwardSpec}
 * DELTA_CLEAR and DQ_FINISH; GRAD_KVQ adds to it in between):
 *
 * <pre>
 * DELTA_CLEAR  one warp a query row, 8 rows a CTA: delta = Σ dy∘o over the row's 128 dims (4 a lane,
 *              one 8-byte load of each), and the row's 128 accumulator floats set to 0 (one float4 a lane)
 * DQ_FINISH    dq = scale · acc rounded to q's dtype, 4 elements a thread ([b, h, s, 128] dense both sides)
 * </pre>
 *
 * head_dim 128 only (the fused kernel's): other head dims are a {@link CodegenException}. o's and
 * dy's rows must start 8-byte aligned (the lowering copies an operand whose offset or strides are
 * not multiples of 8 elements).
 */
final class AttentionDqAccumulator {
    static final int D = 128;
    static final int THREADS = 256;

    private final AttentionBackwardSpec spec;
    private final String t;

    AttentionDqAccumulator(AttentionBackwardSpec spec) {
        if (spec.kind() != AttentionBackwardSpec.Kind.DELTA_CLEAR && spec.kind() != AttentionBackwardSpec.Kind.DQ_FINISH) {
            throw new CodegenException(spec.name() + ": the dq accumulator renders delta_clear and dq_finish, not " + spec.kind());
        }
        if (spec.headDim() != D || (spec.dtype() != DType.BF16 && spec.dtype() != DType.F16)) {
            throw new CodegenException(spec.name() + ": the fused dq accumulator needs head_dim " + D + " in bf16 or f16, got head_dim "
                    + spec.headDim() + " " + spec.dtype());
        }
        this.spec = spec;
        this.t = CudaPrelude.cType(spec.dtype());
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        boolean clear = spec.kind() == AttentionBackwardSpec.Kind.DELTA_CLEAR;
        CudaPrelude.emit(e, clear ? "attention backward delta = rowsum(dy∘o), the dq accumulator's rows zeroed (head_dim 128)"
                : "attention backward dq = scale · the f32 accumulator (head_dim 128)");
        List<KernelParam> params = AttentionBackwardGeneralRenderer.params(spec, t);
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(" + THREADS + ")"), () -> {
            e.linef("constexpr int D = %d;", D);
            e.line("typedef " + t + " T;");
            if (clear) {
                deltaClear(e);
            } else {
                finish(e);
            }
        });
        LaunchRule rule = clear
                ? size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + 7) / 8), THREADS, 0)
                : size -> LaunchConfig.linear((size.get(0) * size.get(1) * (D / 4) + THREADS - 1) / THREADS, THREADS, 0);
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()), "general");
    }

    private static void deltaClear(CudaEmitter e) {
        e.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
        e.line("const long long blocks = (seq_q + 7) / 8;");
        e.line("const long long bh = blockIdx.x / blocks, bi = bh / heads, hi = bh % heads;");
        e.line("const int row = (int) (blockIdx.x % blocks) * 8 + warp;");
        e.line("(void) seq_k;");
        e.line("if (row >= seq_q) return;");
        e.line("const uint2 ov = *reinterpret_cast<const uint2*>(o + bi * o_sb + hi * o_sh + row * o_ss + lane * 4);");
        e.line("const uint2 gv = *reinterpret_cast<const uint2*>(dy + bi * dy_sb + hi * dy_sh + row * dy_ss + lane * 4);");
        e.line("const T* oe = reinterpret_cast<const T*>(&ov);");
        e.line("const T* ge = reinterpret_cast<const T*>(&gv);");
        e.line("float dd = 0.f;");
        e.unrolled("x", "4", () -> e.line("dd = fmaf(lt_f32(oe[x]), lt_f32(ge[x]), dd);"));
        e.line("dd = lt_warp_sum(dd);");
        e.line("if (lane == 0) delta[bh * seq_q + row] = dd;");
        e.line("reinterpret_cast<float4*>(acc + (bh * seq_q + row) * (long long) D)[lane] = make_float4(0.f, 0.f, 0.f, 0.f);");
    }

    private void finish(CudaEmitter e) {
        AttentionBackwardRows.scaleConstants(e, spec);
        e.line("(void) SCALE_LOG2; (void) LOG2E; (void) seq_k;");
        e.line("const long long i = (long long) blockIdx.x * blockDim.x + threadIdx.x;  // a float4 of acc");
        e.linef("constexpr long long BATCH = %dLL;", spec.batch());
        e.line("if (i >= BATCH * heads * seq_q * (D / 4)) return;");
        e.line("const float4 a = reinterpret_cast<const float4*>(acc)[i];");
        e.line("uint2 raw;");
        e.line("T* el = reinterpret_cast<T*>(&raw);");
        e.line("el[0] = lt_from<T>(a.x * SCALE);");
        e.line("el[1] = lt_from<T>(a.y * SCALE);");
        e.line("el[2] = lt_from<T>(a.z * SCALE);");
        e.line("el[3] = lt_from<T>(a.w * SCALE);");
        e.line("reinterpret_cast<uint2*>(out)[i] = raw;");
    }
}
