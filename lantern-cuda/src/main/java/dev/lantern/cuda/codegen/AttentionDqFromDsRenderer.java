package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * attention's dq from the dS tiles grad_kv wrote ({@link AttentionBackwardSpec.Kind#DQ_DS} after
 * {@link AttentionBackwardSpec.Kind#GRAD_KV_DS}): dq_i = scale Σ_j dS_ij k_j, one wgmma product per
 * 64-key tile where GRAD_Q recomputes S = Q Kᵀ and dP = dO Vᵀ first (three products, and the
 * exponentials). bf16/f16, head_dim 128, sm_90a.
 *
 * <pre>
 * CTA = 128 query rows of one (b, h), two warpgroups of 64; per 64-key tile (causal: up to the block's last query):
 *   the thread's A fragments of dS (4 × 16 bytes, already in fragment order: {@link #dsLayout}) from global memory,
 *   one tile ahead; K's tile by cp.async into 128-byte-swizzled shared memory, two buffers, shared by both warpgroups;
 *   dQ += dS K     wgmma m64n128k16, dS from registers, K read transposed (the N-major B operand)
 * </pre>
 * K's tiles come from L2 once for 128 rows: with one warpgroup a CTA (64 rows,
 * {@code lantern.attention.backward.dqWarpgroups=1}) K's 16 KB a tile outweighed the tile's 8 KB of dS.
 * Causal: a warpgroup skips the key tiles past its own last query (its products, not the barriers).
 * A 64 × 64 dS tile (4096 16-bit values, rows the tile's queries, columns its keys) is kept in the
 * order its readers need: 16-byte chunk {@code p · 128 + T} holds thread T's A fragment of k-step p
 * (warp T / 32, lane roles g = lane / 4, t4 = lane % 4, r = 16·(T / 32) + g): dS[r][16p + 2t4 ..+1],
 * dS[r + 8][same], dS[r][16p + 8 + 2t4 ..+1], dS[r + 8][same]. grad_kv writes whole chunks from a
 * transposed copy in shared memory, and each thread here reads its four, a warp's side by side.
 * The summation order is fixed (key tiles in order, no atomics), so strict mode runs it, and the
 * result is GRAD_Q's up to the order of the score products' f32 sums (dS comes from Sᵀ = K Qᵀ).
 */
final class AttentionDqFromDsRenderer {
    static final int BM = 64;
    static final int TILE = 64;
    /** Warpgroups of a CTA, each 64 query rows ({@code lantern.attention.backward.dqWarpgroups}, 2 by default). */
    private final int warpgroups;

    private final AttentionBackwardSpec spec;
    private final String t;
    private final String mmaType;
    private final String pack2;
    private final String vec2;

    AttentionDqFromDsRenderer(AttentionBackwardSpec spec, CudaTarget target) {
        this(spec, target, "1".equals(System.getProperty("lantern.attention.backward.dqWarpgroups")) ? 1 : 2);
    }

    /** With {@code warpgroups} of 64 query rows a CTA (1 or 2). */
    AttentionDqFromDsRenderer(AttentionBackwardSpec spec, CudaTarget target, int warpgroups) {
        if (spec.kind() != AttentionBackwardSpec.Kind.DQ_DS || spec.headDim() != 128 || spec.masked()
                || (spec.dtype() != DType.BF16 && spec.dtype() != DType.F16) || target.wgmmaAttention() == null) {
            throw new CodegenException(spec.name() + ": dq from dS needs DQ_DS, bf16/f16, head_dim 128, no mask and a wgmma GPU, got "
                    + spec + " on " + target.arch());
        }
        this.spec = spec;
        this.t = CudaPrelude.cType(spec.dtype());
        boolean bf16 = spec.dtype() == DType.BF16;
        this.mmaType = bf16 ? "bf16" : "f16";
        this.pack2 = bf16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
        this.vec2 = bf16 ? "__nv_bfloat162" : "__half2";
        if (warpgroups != 1 && warpgroups != 2) {
            throw new CodegenException(spec.name() + ": dq from dS runs one or two warpgroups a CTA, got " + warpgroups);
        }
        this.warpgroups = warpgroups;
    }

    /** Two buffers of K's tile and 1 KiB of alignment slack. */
    static int sharedBytes() {
        return 2 * TILE * 256 + 1024;
    }

    /** Emits {@code lt_ds_row(qt, nkt)}: dS tiles of one head before query tile qt (causal: those at or below the diagonal). */
    static void emitTileRow(CudaEmitter e) {
        e.comment("dS tiles of a head before query tile qt: nkt a row, or when causal min(row + 1, nkt) (AttentionBackwardSpec.dsTilesPerHead)");
        e.block("__device__ __forceinline__ long long lt_ds_row(int qt, int nkt)", () -> {
            e.line("if (!CAUSAL) return (long long) qt * nkt;");
            e.line("return qt <= nkt ? (long long) qt * (qt + 1) / 2 : (long long) nkt * (nkt + 1) / 2 + (long long) (qt - nkt) * nkt;");
        });
    }

    /**
     * The CTA {@code blk} (an expression: the block's index among DQ_DS's) from the thread roles to
     * the store of dq into {@code out}: {@code dsHead} is the slot of the (batch, query head) {@code bh}'s
     * dS tiles, {@code load} the 16-byte load of a fragment ({@code __ldg}, or {@code __ldcg} where the
     * tiles were written by the same launch).
     */
    void emitBody(CudaEmitter e, String blk, String dsHead, String load, String out) {
        emitRoles(e, blk, dsHead);
        e.line("const unsigned sK = sbase;  // two buffers of K's tile");
        e.line("uint4 nx[4];  // the next tile's fragments, loaded a tile ahead");
        e.unrolled("p", "4", () -> e.line("nx[p] = nkw > 0 ? " + load + "(dsb + p * 128) : make_uint4(0u, 0u, 0u, 0u);"));
        e.line("if (nk > 0) lt_load_tile<BC>(sK, kb, k_ss, 0, seq_k, tid);");
        e.line("lt_cp_commit();");
        e.block("for (int kt = 0; kt < nk; ++kt)", () -> {
            e.line("const int buf = kt & 1;");
            e.line("__syncthreads();  // every warp is done with tile kt - 1, whose buffer tile kt + 1 fills");
            e.line("if (kt + 1 < nk) lt_load_tile<BC>(sK + (buf ^ 1) * TBYTES, kb, k_ss, (kt + 1) * BC, seq_k, tid);");
            e.line("lt_cp_commit();");
            e.line("unsigned a[4][4];");
            e.unrolled("p", "4", () -> e.line("a[p][0] = nx[p].x; a[p][1] = nx[p].y; a[p][2] = nx[p].z; a[p][3] = nx[p].w;"));
            e.block("if (kt + 1 < nkw)", () -> e.unrolled("p", "4", () -> e.line("nx[p] = " + load + "(dsb + (kt + 1) * 512 + p * 128);")));
            e.line("lt_cp_wait_one();  // every group but the newest: tile kt landed");
            e.line("lt_async_fence();");
            e.line("__syncthreads();");
            e.comment("nkw is the same for the whole warpgroup: its wgmma runs on every thread of it or on none");
            e.block("if (kt < nkw)", () -> {
                e.line("const unsigned cK = sK + buf * TBYTES;");
                e.line("lt_wgmma_fence();");
                e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dq, a[j], LT_VDESC(cK + j * 2048), true);"));
                e.line("lt_wgmma_commit();");
                e.line("lt_wgmma_wait<0>();");
                e.unrolled("n", "16", () -> e.line("lt_reg_fence(dq[n]);"));
            });
        });
        e.line("lt_cp_wait_all();");
        AttentionBackwardRows.storeDq(e, "qrow", pack2, vec2, out);
    }

    /** The thread roles, the CTA's head and query tile, dsb (this thread's chunk of its first dS tile), qrow and dq = 0. */
    private void emitRoles(CudaEmitter e, String blk, String dsHead) {
        e.line("extern __shared__ __align__(1024) unsigned char lt_smem[];");
        e.line("const int tid = threadIdx.x, lane = tid & 31, wi = tid >> 5;");
        e.line("const int g = lane >> 2, t4 = lane & 3;  // accumulator roles: rows (wi & 3)*16 + g (+8), columns 8n + 2 t4 (+1)");
        e.line("const unsigned sraw = (unsigned) __cvta_generic_to_shared(lt_smem), sbase = (sraw + 1023u) & ~1023u;");
        e.line("(void) SCALE_LOG2; (void) LOG2E;");
        e.line("const int nqt = (seq_q + BM - 1) / BM, nkt = (seq_k + BC - 1) / BC;  // 64-row query tiles, 64-key tiles");
        e.line("const int cblocks = (nqt + W - 1) / W;  // the CTAs of a head");
        e.line("const long long bh = " + blk + " / cblocks;  // (batch, query head)");
        e.line("const int cb = cblocks - 1 - (int) (" + blk + " % cblocks);  // heaviest causal block first");
        e.line("const int qt = cb * W + (wi >> 2), q0 = qt * BM;  // this warpgroup's query tile (past nqt: no rows)");
        e.line("const int lastQt = min(cb * W + W, nqt) - 1;  // the CTA's last query tile with rows");
        e.line("const long long bi = bh / heads, hi = bh % heads, hkv = hi / GROUP;");
        e.line("const T* __restrict__ kb = k + bi * k_sb + hkv * k_sh;");
        e.comment("causal: key tiles past a block's last query hold no dS; the CTA walks its last warpgroup's tiles");
        e.line("const int nk = CAUSAL ? min(nkt, lastQt + 1) : nkt;");
        e.line("const int nkw = qt >= nqt ? 0 : CAUSAL ? min(nkt, qt + 1) : nkt;  // this warpgroup's");
        e.line("const uint4* __restrict__ dsb = reinterpret_cast<const uint4*>(ds) + ((" + dsHead + ") * lt_ds_row(nqt, nkt) + lt_ds_row(min(qt, nqt), nkt)) * 512"
                + " + (tid & 127);");
        e.line("const int qrow = q0 + (wi & 3) * 16 + g;  // this thread's rows: qrow and qrow + 8");
        e.line("float dq[16][4];");
        e.unrolled("n", "16", () -> e.line("dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;"));
    }

    /**
     * As {@link #emitBody}, the tiles through {@code stages} buffers of shared memory (cp.async, one
     * barrier a tile): K's tile and the warpgroups' dS fragments of tile kt + stages − 1 are copied
     * while tile kt's product runs, so the copies' latency (dS from memory, K from L2) is hidden by
     * more than one tile's product. dS is read with cp.async.cg (L2, as {@code __ldcg}). Shared memory:
     * {@link #stagedSharedBytes}.
     */
    void emitStagedBody(CudaEmitter e, String blk, String dsHead, String out, int stages) {
        emitRoles(e, blk, dsHead);
        e.linef("constexpr int S = %d;  // buffers of K's tile and of the dS fragments", stages);
        e.line("const unsigned sK = sbase, sD = sbase + S * TBYTES;  // [S] K tiles; [S][W][4 k-steps][128 threads] 16-byte fragments");
        e.line("const int wg = wi >> 2, lt = tid & 127;");
        e.block("auto stage = [&](int kt)", () -> {
            e.line("const int b = kt % S;");
            e.line("lt_load_tile<BC>(sK + b * TBYTES, kb, k_ss, kt * BC, seq_k, tid);");
            e.block("if (kt < nkw)", () -> e.unrolled("p", "4", () ->
                    e.line("lt_cp_async16(sD + ((b * W + wg) * 512 + p * 128 + lt) * 16, dsb + kt * 512 + p * 128, true);")));
        });
        e.line(";");
        e.unrolled("s", "S - 1", () -> {
            e.line("if (s < nk) stage(s);");
            e.line("lt_cp_commit();");
        });
        e.line("const uint4* fD = reinterpret_cast<const uint4*>(lt_smem + (sD - sraw));");
        e.block("for (int kt = 0; kt < nk; ++kt)", () -> {
            e.line("lt_cp_wait_n<S - 2>();  // every group but the S - 2 newest: tile kt landed");
            e.line("lt_async_fence();");
            e.line("__syncthreads();  // ... for every thread; and every warp is done with tile kt - 1, whose buffers tile kt + S - 1 fills");
            e.line("if (kt + S - 1 < nk) stage(kt + S - 1);");
            e.line("lt_cp_commit();");
            e.comment("nkw is the same for the whole warpgroup: its wgmma runs on every thread of it or on none");
            e.block("if (kt < nkw)", () -> {
                e.line("const int b = kt % S;");
                e.line("unsigned a[4][4];");
                e.unrolled("p", "4", () -> {
                    e.line("const uint4 f = fD[(b * W + wg) * 512 + p * 128 + lt];");
                    e.line("a[p][0] = f.x; a[p][1] = f.y; a[p][2] = f.z; a[p][3] = f.w;");
                });
                e.line("const unsigned long long dKv = LT_VDESC(sK + b * TBYTES);");
                e.line("lt_wgmma_fence();");
                e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dq, a[j], dKv + j * 128, true);"));
                e.line("lt_wgmma_commit();");
                e.line("lt_wgmma_wait<0>();");
                e.unrolled("n", "16", () -> e.line("lt_reg_fence(dq[n]);"));
            });
        });
        e.line("lt_cp_wait_all();");
        AttentionBackwardRows.storeDq(e, "qrow", pack2, vec2, out);
    }

    /** Shared memory of {@link #emitStagedBody} with {@code warpgroups} a CTA: the stages' K tiles and dS fragments, 1 KiB of slack. */
    static int stagedSharedBytes(int stages, int warpgroups) {
        return stages * (TILE * 256 + warpgroups * 4 * 128 * 16) + 1024;
    }

    List<KernelParam> params() {
        String in = "const " + t + "* __restrict__";
        return List.of(new KernelParam(in, "k"), new KernelParam(in, "ds"), new KernelParam(t + "* __restrict__", "out"),
                new KernelParam("int", "heads"), new KernelParam("int", "seq_q"), new KernelParam("int", "seq_k"),
                new KernelParam("long long", "k_sb"), new KernelParam("long long", "k_sh"), new KernelParam("long long", "k_ss"));
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "attention backward dq from grad_kv's dS tiles" + (spec.causal() ? " (causal)" : "")
                + ", head_dim 128, Hopper path (wgmma, " + warpgroups + (warpgroups == 1 ? " warpgroup, " : " warpgroups, ") + warpgroups * BM
                + " query rows a CTA)");
        e.linef("constexpr int THREADS = %d, W = %d, D = 128, BM = %d, BC = %d, GROUP = %d;  // BM: rows of a warpgroup",
                128 * warpgroups, warpgroups, BM, TILE, spec.group());
        e.line("constexpr int HALF = BC * 128, TBYTES = BC * 256;  // half of K's tile, all of it");
        e.linef("constexpr bool CAUSAL = %s;", spec.causal());
        AttentionBackwardRows.scaleConstants(e, spec);
        e.line("typedef " + t + " T;");
        e.blank();
        WgmmaHelpers.emitKernelHelpers(e, TILE, false, mmaType, pack2, vec2);
        emitTileRow(e);
        List<KernelParam> params = params();
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(THREADS, " + (warpgroups == 1 ? 3 : 2) + ")"), () -> {
            emitBody(e, "blockIdx.x", "bh", "__ldg", "out");
        });
        e.line("#undef LT_VDESC");
        int smem = sharedBytes();
        int w = warpgroups;
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * (((size.get(1) + BM - 1) / BM + w - 1) / w), 128 * w, smem);
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()),
                "wgmma");
    }
}
