package dev.lantern.cuda.codegen;

import java.util.List;

/**
 * The general attention kernel: any head_dim up to 1024 and any dtype, correct and slow.
 * One warp per query row: the query and the output accumulator are spread over the lanes
 * (dims lane, lane + 32, ...); each key costs a warp reduction for its score, followed by an
 * online-softmax update in f32 (exp2 with scale * log2 e folded in).
 */
final class AttentionGeneralRenderer {
    private static final int WARPS = 4;

    private final AttentionSpec spec;
    private final String t;

    AttentionGeneralRenderer(AttentionSpec spec, CudaTarget target) {
        this.spec = spec;
        this.t = CudaPrelude.cType(spec.dtype());
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "attention" + (spec.causal() ? " (causal)" : "") + ", head_dim " + spec.headDim()
                + ", general path (one warp per query)");
        List<KernelParam> params = AttentionParams.of(t, spec);
        int d = spec.headDim();
        int perLane = (d + 31) / 32;
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(" + WARPS * 32 + ")"), () -> {
            e.linef("constexpr int D = %d, DL = %d, WARPS = %d;", d, perLane, WARPS);
            e.linef("constexpr float SCALE_LOG2 = %s;",
                    ElementwiseRenderer.floatLiteral(spec.scale() * 1.4426950408889634));
            AttentionParams.emitMaskConstant(e, spec, false);
            e.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
            e.line("const long long qblocks = (seq_q + WARPS - 1) / WARPS;");
            e.line("const long long bh = blockIdx.x / qblocks;");
            e.line("const int row = (int) (blockIdx.x % qblocks) * WARPS + warp;");
            e.line("if (row >= seq_q) return;");
            AttentionParams.emitBases(e, t, spec);
            e.line("float qv[DL], acc[DL];");
            e.unrolled("i", "DL", () -> {
                e.line("const int c = lane + 32 * i;");
                e.line("qv[i] = c < D ? lt_f32(qb[row * q_ss + c]) : 0.f;");
                e.line("acc[i] = 0.f;");
            });
            e.line("float m = -LT_INF, l = 0.f;");
            e.line(spec.causal() ? "const int kend = min(seq_k, row + 1);" : "const int kend = seq_k;");
            e.block("for (int j = 0; j < kend; ++j)", () -> {
                e.line("float s = 0.f;");
                e.unrolled("i", "DL", () -> {
                    e.line("const int c = lane + 32 * i;");
                    e.line("if (c < D) s = fmaf(qv[i], lt_f32(kb[j * k_ss + c]), s);");
                });
                e.line("s = lt_warp_sum(s) * SCALE_LOG2;");
                if (spec.masked()) {
                    e.line("s += lt_f32(amb[row * amask_ss + j]) * MASK_MUL;");
                }
                e.line("const float mn = fmaxf(m, s);");
                e.line("const float corr = exp2f(m - mn), p = exp2f(s - mn);");
                e.line("l = l * corr + p;");
                e.unrolled("i", "DL", () -> {
                    e.line("const int c = lane + 32 * i;");
                    e.line("acc[i] = acc[i] * corr + (c < D ? p * lt_f32(vb[j * v_ss + c]) : 0.f);");
                });
                e.line("m = mn;");
            });
            e.line("const float inv = l > 0.f ? 1.f / l : 0.f;");
            if (spec.lse()) { // m is in the log2 domain: lse = (m + log2 l) ln 2, -inf for a row that sees no key
                e.line("if (lane == 0) lse[bh * seq_q + row] = l > 0.f ? (m + log2f(l)) * 0.6931471805599453f : -LT_INF;");
            }
            e.unrolled("i", "DL", () -> {
                e.line("const int c = lane + 32 * i;");
                e.line("if (c < D) ob[row * o_ss + c] = lt_from<" + t + ">(acc[i] * inv);");
            });
        });
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + WARPS - 1) / WARPS), WARPS * 32, 0);
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()), "general");
    }
}
