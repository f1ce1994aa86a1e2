package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;
import java.util.List;

/**
 * attention backward's DELTA (delta[b,h,i] = Σ dy_i∘o_i, f32) for bf16/f16 rows of 8 to 256 dims (a
 * power of two): each lane reads 16 bytes of o and of dy (8 dims), {@code L = D / 8} lanes share a
 * row and sum it with a butterfly over their group, so one warp covers {@code 32 / L} rows a load and
 * each lane has {@value #UNROLL} rows' loads in flight before it sums any. A CTA of {@value #WARPS}
 * warps takes {@code WARPS · 32 / L · UNROLL} consecutive rows of one (b, h). The general kernel's
 * one warp a row with 2-byte loads ran 0.12 ms at 16×32×1024×128, about half the memory's speed.
 * Rows must start 16-byte aligned (the lowering copies an operand whose offset or (b, h, s) strides
 * are not multiples of 8 elements). The order of each sum is fixed by D alone.
 */
final class AttentionDeltaRenderer {
    static final int WARPS = 8;
    static final int UNROLL = 4;

    private final AttentionBackwardSpec spec;

    AttentionDeltaRenderer(AttentionBackwardSpec spec) {
        if (!supports(spec)) {
            throw new CodegenException(spec.name() + ": the vector delta needs delta over bf16/f16 rows of 8 to 256 dims (a power of two), got "
                    + spec.kind() + " " + spec.dtype() + " head_dim " + spec.headDim());
        }
        this.spec = spec;
    }

    /** DELTA over bf16/f16 with head_dim a power of two from 8 to 256. */
    static boolean supports(AttentionBackwardSpec spec) {
        int d = spec.headDim();
        return spec.kind() == AttentionBackwardSpec.Kind.DELTA && (spec.dtype() == DType.BF16 || spec.dtype() == DType.F16)
                && d >= 8 && d <= 256 && Integer.bitCount(d) == 1;
    }

    /** Consecutive rows of one (b, h) a CTA covers. */
    int rowsPerCta() {
        return WARPS * (32 / (spec.headDim() / 8)) * UNROLL;
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        String t = CudaPrelude.cType(spec.dtype());
        int d = spec.headDim();
        int rows = rowsPerCta();
        CudaPrelude.emit(e, "attention backward delta = rowsum(dy∘o), head_dim " + d + ", 16-byte loads, " + (d / 8) + " lanes a row");
        List<KernelParam> params = AttentionBackwardGeneralRenderer.params(spec, t);
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(" + WARPS * 32 + ")"), () -> {
            e.linef("constexpr int D = %d, L = %d, RW = 32 / L, UNROLL = %d, ROWS = %d;", d, d / 8, UNROLL, rows);
            e.line("typedef " + t + " T;");
            e.line("(void) seq_k;");
            e.line("const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, sub = lane / L, c = lane % L;");
            e.line("const long long blocks = (seq_q + ROWS - 1) / ROWS;");
            e.line("const long long bh = blockIdx.x / blocks, bi = bh / heads, hi = bh % heads;");
            e.line("const int r0 = (int) (blockIdx.x % blocks) * ROWS + warp * RW * UNROLL + sub;  // this lane's rows: r0 + u * RW");
            e.line("const T* __restrict__ ob = o + bi * o_sb + hi * o_sh + c * 8;");
            e.line("const T* __restrict__ gb = dy + bi * dy_sb + hi * dy_sh + c * 8;");
            e.line("uint4 ov[UNROLL], gv[UNROLL];");
            e.unrolled("u", "UNROLL", () -> {
                e.line("const int row = r0 + u * RW;");
                e.line("ov[u] = row < seq_q ? *reinterpret_cast<const uint4*>(ob + row * o_ss) : make_uint4(0u, 0u, 0u, 0u);");
                e.line("gv[u] = row < seq_q ? *reinterpret_cast<const uint4*>(gb + row * dy_ss) : make_uint4(0u, 0u, 0u, 0u);");
            });
            e.unrolled("u", "UNROLL", () -> {
                e.line("const T* oe = reinterpret_cast<const T*>(&ov[u]);");
                e.line("const T* ge = reinterpret_cast<const T*>(&gv[u]);");
                e.line("float s = 0.f;");
                e.unrolled("x", "8", () -> e.line("s = fmaf(lt_f32(oe[x]), lt_f32(ge[x]), s);"));
                e.line("#pragma unroll");
                e.line("for (int m = L / 2; m > 0; m >>= 1) s += __shfl_xor_sync(0xffffffffu, s, m);");
                e.line("const int row = r0 + u * RW;");
                e.line("if (c == 0 && row < seq_q) delta[bh * seq_q + row] = s;");
            });
        });
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + rows - 1) / rows), WARPS * 32, 0);
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()),
                "vector");
    }
}
