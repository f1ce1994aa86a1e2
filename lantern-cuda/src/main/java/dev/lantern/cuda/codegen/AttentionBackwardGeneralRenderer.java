package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/**
 * The general kernels of attention's backward ({@link AttentionBackwardSpec}): any head_dim up to
 * 1024, any dtype, CUDA cores, f32 math. One warp per row, the row's head_dim spread over the lanes
 * (dims lane, lane + 32, ...), each dot product a warp butterfly (the same sum on every lane):
 * LSE, DELTA and GRAD_Q take a query row and walk the keys; GRAD_KV takes a key row and walks the
 * query rows of each head of its group in order, so dk and dv are summed in one fixed order by
 * one warp. Scores are in the log2 domain: s·scale·log2(e) + mask·log2(e) − lse·log2(e), exp2.
 */
final class AttentionBackwardGeneralRenderer {
    static final int WARPS = 4;

    private final AttentionBackwardSpec spec;
    private final String t;

    AttentionBackwardGeneralRenderer(AttentionBackwardSpec spec) {
        this.spec = spec;
        this.t = CudaPrelude.cType(spec.dtype());
    }

    /** The kernel's parameters in the order {@link AttentionBackwardSpec} lists them. */
    static List<KernelParam> params(AttentionBackwardSpec spec, String t) {
        List<KernelParam> p = new ArrayList<>();
        String in = "const " + t + "* __restrict__";
        List<String> strided = switch (spec.kind()) {
            case LSE -> List.of("q", "k");
            case DELTA -> List.of("o", "dy");
            case GRAD_Q, GRAD_KV, GRAD_KV_DS, GRAD_KV_DQ -> List.of("q", "k", "v", "dy");
            case DQ_DS -> throw new IllegalStateException("DQ_DS has its own parameters (AttentionDqFromDsRenderer)");
        };
        strided.forEach(x -> p.add(new KernelParam(in, x)));
        switch (spec.kind()) {
            case LSE -> p.add(new KernelParam("float* __restrict__", "lse"));
            case DELTA -> p.add(new KernelParam("float* __restrict__", "delta"));
            default -> {
                p.add(new KernelParam("const float* __restrict__", "lse"));
                p.add(new KernelParam("const float* __restrict__", "delta"));
            }
        }
        boolean mask = spec.masked() && spec.kind() != AttentionBackwardSpec.Kind.DELTA;
        if (mask) {
            p.add(new KernelParam(in, "amask"));
        }
        if (spec.kind() == AttentionBackwardSpec.Kind.GRAD_Q || spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV
                || spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV_DS || spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV_DQ) {
            p.add(new KernelParam(t + "* __restrict__", "out"));
        }
        p.add(new KernelParam("int", "heads"));
        p.add(new KernelParam("int", "seq_q"));
        p.add(new KernelParam("int", "seq_k"));
        for (String x : strided) {
            for (String axis : List.of("b", "h", "s")) {
                p.add(new KernelParam("long long", x + "_s" + axis));
            }
        }
        if (mask) {
            for (String axis : List.of("b", "h", "s")) {
                p.add(new KernelParam("long long", "amask_s" + axis));
            }
        }
        return p;
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "attention backward " + spec.kind().name().toLowerCase(java.util.Locale.ROOT) + (spec.causal() ? " (causal)" : "")
                + ", head_dim " + spec.headDim() + ", general path (one warp per row)");
        List<KernelParam> params = params(spec, t);
        int d = spec.headDim();
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(" + WARPS * 32 + ")"), () -> {
            e.linef("constexpr int D = %d, DL = %d, WARPS = %d, GROUP = %d;", d, (d + 31) / 32, WARPS, spec.group());
            AttentionBackwardRows.scaleConstants(e, spec);
            e.line("(void) SCALE; (void) SCALE_LOG2; (void) LOG2E; (void) GROUP;");
            e.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;");
            e.line("const int rows = " + (spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV ? "seq_k" : "seq_q") + ";");
            e.line("const long long blocks = (rows + WARPS - 1) / WARPS;");
            e.comment(spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV ? "bh: (batch, K/V head)" : "bh: (batch, head)");
            e.line("const long long bh = blockIdx.x / blocks;");
            e.line("const int row = (int) (blockIdx.x % blocks) * WARPS + warp;");
            e.line("if (row >= rows) return;");
            switch (spec.kind()) {
                case LSE -> lse(e);
                case DELTA -> delta(e);
                case GRAD_Q -> gradQ(e);
                case GRAD_KV -> gradKv(e);
            }
        });
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + WARPS - 1) / WARPS), WARPS * 32, 0);
        long groups = spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV ? spec.batch() * spec.kvHeads() : spec.batch() * spec.heads();
        long rows = spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV ? spec.seqK() : spec.seqQ();
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(groups, rows, spec.seqK()), "general");
    }

    /** x's row {@code r} of (batch bi, head h) loaded into {@code reg[DL]} as f32 (0 past D). */
    private void load(CudaEmitter e, String reg, String x, String r) {
        e.unrolled("i", "DL", () -> {
            e.line("const int c = lane + 32 * i;");
            e.line(reg + "[i] = c < D ? lt_f32(" + x + "b[(long long) " + r + " * " + x + "_ss + c]) : 0.f;");
        });
    }

    /** The warp's dot product of register rows a and b (every lane gets it). */
    private static void dot(CudaEmitter e, String out, String a, String b) {
        e.line("float " + out + " = 0.f;");
        e.unrolled("i", "DL", () -> e.line(out + " = fmaf(" + a + "[i], " + b + "[i], " + out + ");"));
        e.line(out + " = lt_warp_sum(" + out + ");");
    }

    /** The log2-domain score of the warp's registers qv against key row j of kb (mask at (qi, j) when masked). */
    private void score(CudaEmitter e, String qi, String j) {
        e.line("float s = 0.f;");
        e.unrolled("i", "DL", () -> {
            e.line("const int c = lane + 32 * i;");
            e.line("if (c < D) s = fmaf(qv[i], lt_f32(kb[(long long) " + j + " * k_ss + c]), s);");
        });
        e.line("s = lt_warp_sum(s) * SCALE_LOG2;");
        if (spec.masked()) {
            e.line("s += lt_f32(amb[(long long) " + qi + " * amask_ss + " + j + "]) * LOG2E;");
        }
    }

    private void bases(CudaEmitter e, String head, List<String> qRows, boolean kv) {
        e.line("const long long bi = bh / " + (kv ? "(heads / GROUP)" : "heads") + ";");
        for (String x : qRows) {
            e.line("const " + t + "* __restrict__ " + x + "b = " + x + " + bi * " + x + "_sb + " + head + " * " + x + "_sh;");
        }
        if (spec.masked() && spec.kind() != AttentionBackwardSpec.Kind.DELTA) {
            e.line("const " + t + "* __restrict__ amb = amask + bi * amask_sb + " + head + " * amask_sh;");
        }
    }

    private void kvBases(CudaEmitter e, String kvHead, List<String> which) {
        for (String x : which) {
            e.line("const " + t + "* __restrict__ " + x + "b = " + x + " + bi * " + x + "_sb + " + kvHead + " * " + x + "_sh;");
        }
    }

    private void lse(CudaEmitter e) {
        e.line("const long long hi = bh % heads;");
        bases(e, "hi", List.of("q"), false);
        kvBases(e, "(hi / GROUP)", List.of("k"));
        e.line("float qv[DL];");
        load(e, "qv", "q", "row");
        e.line("float m = -LT_INF, l = 0.f;");
        e.line(spec.causal() ? "const int kend = min(seq_k, row + 1);" : "const int kend = seq_k;");
        e.block("for (int j = 0; j < kend; ++j)", () -> {
            score(e, "row", "j");
            e.line("const float mn = fmaxf(m, s);");
            e.line("if (mn == -LT_INF) continue;  // every key so far masked out (and -inf - -inf is NaN)");
            e.line("l = l * exp2f(m - mn) + exp2f(s - mn);");
            e.line("m = mn;");
        });
        e.comment("natural log: ln(Σ 2^x) = (m + log2 l) · ln 2");
        e.line("if (lane == 0) lse[bh * seq_q + row] = l > 0.f ? (m + log2f(l)) * 0.6931471805599453f : -LT_INF;");
    }

    private void delta(CudaEmitter e) {
        e.line("const long long hi = bh % heads;");
        bases(e, "hi", List.of("o", "dy"), false);
        e.line("float ov[DL], gv[DL];");
        load(e, "ov", "o", "row");
        load(e, "gv", "dy", "row");
        dot(e, "dd", "ov", "gv");
        e.line("if (lane == 0) delta[bh * seq_q + row] = dd;");
    }

    private void gradQ(CudaEmitter e) {
        e.line("const long long hi = bh % heads;");
        bases(e, "hi", List.of("q", "dy"), false);
        kvBases(e, "(hi / GROUP)", List.of("k", "v"));
        e.line("float qv[DL], gv[DL], acc[DL];");
        load(e, "qv", "q", "row");
        load(e, "gv", "dy", "row");
        e.unrolled("i", "DL", () -> e.line("acc[i] = 0.f;"));
        e.line("const float l2 = lse[bh * seq_q + row] * LOG2E, dd = delta[bh * seq_q + row];");
        e.line(spec.causal() ? "const int kend = l2 == -LT_INF ? 0 : min(seq_k, row + 1);" : "const int kend = l2 == -LT_INF ? 0 : seq_k;");
        e.block("for (int j = 0; j < kend; ++j)", () -> {
            score(e, "row", "j");
            e.line("const float p = exp2f(s - l2);");
            e.line("float kv[DL], vv[DL];");
            load(e, "kv", "k", "j");
            load(e, "vv", "v", "j");
            dot(e, "dp", "gv", "vv");
            e.line("const float ds = p * (dp - dd);");
            e.unrolled("i", "DL", () -> e.line("acc[i] = fmaf(ds, kv[i], acc[i]);"));
        });
        e.line(t + "* __restrict__ ob = out + (bh * seq_q + row) * (long long) D;");
        e.unrolled("i", "DL", () -> {
            e.line("const int c = lane + 32 * i;");
            e.line("if (c < D) ob[c] = lt_from<" + t + ">(acc[i] * SCALE);");
        });
    }

    private void gradKv(CudaEmitter e) {
        e.line("const long long hk = bh % (heads / GROUP);");
        e.line("const long long bi = bh / (heads / GROUP);");
        kvBases(e, "hk", List.of("k", "v"));
        e.line("float kv[DL], vv[DL], dk[DL], dv[DL];");
        load(e, "kv", "k", "row");
        load(e, "vv", "v", "row");
        e.unrolled("i", "DL", () -> e.line("dk[i] = 0.f; dv[i] = 0.f;"));
        e.comment("the group's query heads in order, each query row in order: one fixed summation order");
        e.block("for (int g = 0; g < GROUP; ++g)", () -> {
            e.line("const long long hi = hk * GROUP + g;");
            for (String x : List.of("q", "dy")) {
                e.line("const " + t + "* __restrict__ " + x + "b = " + x + " + bi * " + x + "_sb + hi * " + x + "_sh;");
            }
            if (spec.masked()) {
                e.line("const " + t + "* __restrict__ amb = amask + bi * amask_sb + hi * amask_sh;");
            }
            e.line("const long long rb = (bi * heads + hi) * seq_q;");
            e.block("for (int i0 = " + (spec.causal() ? "row" : "0") + "; i0 < seq_q; ++i0)", () -> {
                e.line("const float l2 = lse[rb + i0] * LOG2E;");
                e.line("if (l2 == -LT_INF) continue;  // a row that sees no key: P = 0");
                e.line("float qv[DL], gv[DL];");
                load(e, "qv", "q", "i0");
                load(e, "gv", "dy", "i0");
                e.line("float s = 0.f;");
                e.unrolled("i", "DL", () -> e.line("s = fmaf(qv[i], kv[i], s);"));
                e.line("s = lt_warp_sum(s) * SCALE_LOG2;");
                if (spec.masked()) {
                    e.line("s += lt_f32(amb[(long long) i0 * amask_ss + row]) * LOG2E;");
                }
                e.line("const float p = exp2f(s - l2);");
                dot(e, "dp", "gv", "vv");
                e.line("const float ds = p * (dp - delta[rb + i0]);");
                e.unrolled("i", "DL", () -> {
                    e.line("dv[i] = fmaf(p, gv[i], dv[i]);");
                    e.line("dk[i] = fmaf(ds, qv[i], dk[i]);");
                });
            });
        });
        e.comment("out [2, b, hk, t, D]: dk at [0], dv at [1]");
        e.line("const long long plane = (long long) gridDim.x / ((seq_k + WARPS - 1) / WARPS) * seq_k * D;");
        e.line(t + "* __restrict__ dkb = out + (bh * seq_k + row) * (long long) D;");
        e.unrolled("i", "DL", () -> {
            e.line("const int c = lane + 32 * i;");
            e.block("if (c < D)", () -> {
                e.line("dkb[c] = lt_from<" + t + ">(dk[i] * SCALE);");
                e.line("dkb[plane + c] = lt_from<" + t + ">(dv[i]);");
            });
        });
    }
}
