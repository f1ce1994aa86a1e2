package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * The Hopper kernels of attention's gradients ({@link AttentionBackwardSpec} GRAD_Q and GRAD_KV) for
 * head_dim 128, bf16 or f16, without an additive mask, on sm_90a: every product on {@code wgmma}
 * (one warpgroup of 128 threads, f32 accumulators in registers), the tiles in 128-byte-swizzled
 * shared memory as [2][rows][64] (the forward's layout, {@link AttentionWgmmaRenderer}), so the
 * tensor cores read both operands of the score products, and the B operand of the gradient
 * products, straight from shared memory; the A operand of a gradient product is P or dS re-packed
 * from the accumulators.
 *
 * <pre>
 * GRAD_KV  CTA = 64 keys of one (b, K/V head); for each query head of the group, per 64-row query
 *          tile (causal: from the first tile that sees the block's first key):
 *            Sᵀ = K Qᵀ, dPᵀ = V dOᵀ        wgmma m64n64k16, A (K, V) and B (Q, dO) from shared memory
 *            Pᵀ = exp2(Sᵀ·scale·log2e − lse·log2e), dSᵀ = Pᵀ∘(dPᵀ − delta)   (lse and delta staged per tile)
 *            dV += Pᵀ dO, dK += dSᵀ Q      wgmma m64n128k16, A from registers, B (dO, Q) read transposed
 * GRAD_Q   CTA = 64 query rows of one (b, h); per 64-key tile (causal: up to the block's last query):
 *            S = Q Kᵀ, dP = dO Vᵀ          wgmma m64n64k16 from shared memory
 *            dS = P∘(dP − delta)            P as above, lse and delta of the thread's two rows in registers
 *            dQ += dS K                     wgmma m64n128k16, dS from registers, K read transposed
 * </pre>
 * The streamed tiles (GRAD_KV's Q, dO, lse and delta; GRAD_Q's K and V) have two buffers: tile i + 1's
 * cp.async copies are issued before tile i is used. Two CTAs share an SM (about 98 KiB of shared
 * memory each), so one's exponentials run while the other's products do. Rows past seq_q and keys past
 * seq_k are zero-filled and their P set to 0 (only ragged and causal-diagonal tiles test the bounds);
 * a row whose lse is −inf has P = 0. Each output element is summed by one thread in a fixed order
 * (no atomics): strict mode runs these kernels, and their results are the same on every run.
 */
final class AttentionBackwardWgmmaRenderer {
    /** Query rows (GRAD_Q) or keys (GRAD_KV) of a CTA: the M of wgmma. */
    static final int BM = 64;
    /** The streamed tile: keys (GRAD_Q) or query rows (GRAD_KV) per step, the N of the score products. */
    static final int TILE = 64;

    private final AttentionBackwardSpec spec;
    private final String t;
    private final String mmaType;
    private final String pack2;
    private final String vec2;
    /** Whether the exponentials run under the products (two wgmma groups per step); {@code lantern.attention.backward.overlap=false} waits for each. */
    private final boolean overlap;

    AttentionBackwardWgmmaRenderer(AttentionBackwardSpec spec, CudaTarget target) {
        if (!supports(spec, target)) {
            throw new CodegenException(spec.name() + ": the wgmma backward needs grad_q or grad_kv, bf16/f16, head_dim 128, "
                    + "no additive mask and a wgmma GPU (sm_90), got " + spec + " on " + target.arch());
        }
        this.spec = spec;
        this.t = CudaPrelude.cType(spec.dtype());
        boolean bf16 = spec.dtype() == DType.BF16;
        this.mmaType = bf16 ? "bf16" : "f16";
        this.pack2 = bf16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
        this.vec2 = bf16 ? "__nv_bfloat162" : "__half2";
        this.overlap = !"false".equals(System.getProperty("lantern.attention.backward.overlap"));
        if (sharedBytes() > target.sharedBytesPerBlock()) {
            throw new CodegenException(spec.name() + ": needs " + sharedBytes() + " bytes of shared memory, " + target.arch()
                    + " allows " + target.sharedBytesPerBlock());
        }
    }

    /**
     * Whether this kernel serves {@code spec} on {@code target}: grad_q or grad_kv, bf16/f16, head_dim
     * 128, no additive mask, a GPU with wgmma; the system property
     * {@code lantern.attention.backward.wgmma=false} keeps the mma.sync kernels.
     */
    static boolean supports(AttentionBackwardSpec spec, CudaTarget target) {
        return !"false".equals(System.getProperty("lantern.attention.backward.wgmma")) && target.wgmmaAttention() != null
                && spec.headDim() == 128 && !spec.masked() && (spec.dtype() == DType.BF16 || spec.dtype() == DType.F16)
                && (spec.kind() == AttentionBackwardSpec.Kind.GRAD_Q || spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV
                    || spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV_DS);
    }

    /**
     * Elements of a row of a warp's dS block in shared memory ([64 queries][16 keys]): the warp's 16 keys
     * and 8 of padding, rows 48 bytes apart, so the eight 16-byte rows stmatrix and ldmatrix touch at
     * a time fall on distinct banks.
     */
    static final int DS_PITCH = 24;

    /**
     * The CTA's own two 64-row tiles, two buffers of the two streamed tiles, lse and delta (grad_kv),
     * dS transposed (GRAD_KV_DS), 1 KiB of alignment slack.
     */
    int sharedBytes() {
        int staged = spec.kind() != AttentionBackwardSpec.Kind.GRAD_Q ? 2 * 2 * TILE * 4 : 0;
        int ds = spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV_DS ? 4 * TILE * DS_PITCH * 2 : 0;
        return 2 * BM * 256 + 2 * 2 * TILE * 256 + staged + ds + 1024;
    }

    private boolean writesDs() {
        return spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV_DS;
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        boolean kv = spec.kind() != AttentionBackwardSpec.Kind.GRAD_Q;
        CudaPrelude.emit(e, "attention backward " + (kv ? "grad_kv" : "grad_q") + (writesDs() ? " writing dS" : "") + (spec.causal() ? " (causal)" : "")
                + ", head_dim 128, Hopper path (wgmma, one warpgroup, " + BM + " " + (kv ? "keys" : "query rows")
                + " a CTA, two CTAs an SM)");
        emitDefinitions(e);
        List<KernelParam> params = new java.util.ArrayList<>(AttentionBackwardGeneralRenderer.params(spec, t));
        if (writesDs()) {
            params.add(new KernelParam(t + "* __restrict__", "ds"));
            params.add(new KernelParam("long long", "plane"));
        }
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(THREADS, 2)"), () -> {
            if (kv) {
                emitGradKvBody(e, "blockIdx.x", "bh");
            } else {
                emitThreadRoles(e);
                gradQ(e);
            }
        });
        e.line("#undef LT_KDESC");
        e.line("#undef LT_KOFF");
        e.line("#undef LT_VDESC");
        int smem = sharedBytes();
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + BM - 1) / BM), 128, smem);
        long groups = kv ? spec.batch() * spec.kvHeads() : spec.batch() * spec.heads();
        long n = kv ? spec.seqK() : spec.seqQ();
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(groups, n, spec.seqK()), "wgmma");
    }

    /**
     * The kernel's constants (THREADS, D, BM, BC, GROUP, HALF, RBYTES, TBYTES, CAUSAL, the scale's), T,
     * and the wgmma helpers; with GRAD_KV_DS also lt_ds_row and the dS block's stmatrix/ldmatrix.
     */
    void emitDefinitions(CudaEmitter e) {
        e.linef("constexpr int THREADS = 128, D = 128, BM = %d, BC = %d, GROUP = %d;", BM, TILE, spec.group());
        e.line("constexpr int HALF = BC * 128;                // bytes of one 64-column half of a streamed tile");
        e.line("constexpr int RBYTES = BM * 256, TBYTES = BC * 256;  // a CTA tile, a streamed tile");
        e.linef("constexpr bool CAUSAL = %s;", spec.causal());
        AttentionBackwardRows.scaleConstants(e, spec);
        e.line("typedef " + t + " T;");
        e.blank();
        WgmmaHelpers.emitKernelHelpers(e, TILE, false, mmaType, pack2, vec2);
        e.comment("A or B operand (K-major, SW128) of a 64-column-half tile: k-step kk of 16 dims, halves HALF_BYTES apart");
        e.line("#define LT_KDESC(base, half_bytes, kk) lt_desc((base) + ((kk) >> 2) * (half_bytes) + ((kk) & 3) * 32, 16, 1024)");
        e.comment("the same operand's k-step kk as an offset (16-byte units) from the descriptor of its base: no carry leaves the");
        e.comment("address field, as every tile lies below 256 KiB of shared memory");
        e.line("#define LT_KOFF(half_bytes, kk) ((unsigned long long) ((((kk) >> 2) * (half_bytes) + ((kk) & 3) * 32) >> 4))");
        if (writesDs()) {
            AttentionDqFromDsRenderer.emitTileRow(e);
            AttentionBackwardWgmmaOverlap.emitDsHelpers(e);
        }
    }

    private static void emitThreadRoles(CudaEmitter e) {
        e.line("extern __shared__ __align__(1024) unsigned char lt_smem[];");
        e.line("const int tid = threadIdx.x, lane = tid & 31, wi = tid >> 5;");
        e.line("const int g = lane >> 2, t4 = lane & 3;  // accumulator roles: rows wi*16 + g (+8), columns 8n + 2 t4 (+1)");
        e.line("const unsigned sraw = (unsigned) __cvta_generic_to_shared(lt_smem), sbase = (sraw + 1023u) & ~1023u;");
        e.line("(void) SCALE; (void) GROUP;");
    }

    /**
     * grad_kv's CTA {@code blk} (an expression: the block's index among grad_kv's), from the thread roles
     * to the stores of dk;dv. With GRAD_KV_DS, {@code dsUnit} names the (batch, K/V head) slot whose
     * dS tiles it writes (its group's query heads in order).
     */
    void emitGradKvBody(CudaEmitter e, String blk, String dsUnit) {
        emitThreadRoles(e);
        gradKv(e, blk, dsUnit);
    }

    /** Issues the two score products of a step ({@code a1 b1ᵀ} into s1, {@code a2 b2ᵀ} into s2), commits and waits for them. */
    private static void scores(CudaEmitter e, String s1, String a1, String b1, String s2, String a2, String b2) {
        e.line("lt_wgmma_fence();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(" + s1 + ", LT_KDESC(" + a1 + ", RBYTES / 2, kk), LT_KDESC(" + b1 + ", HALF, kk), kk > 0);"));
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(" + s2 + ", LT_KDESC(" + a2 + ", RBYTES / 2, kk), LT_KDESC(" + b2 + ", HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<0>();");
        e.unrolled("n", "BC / 8", () -> {
            e.line("lt_reg_fence(" + s1 + "[n]);");
            e.line("lt_reg_fence(" + s2 + "[n]);");
        });
    }

    /** Packs accumulator tiles {@code s} into A fragments {@code a} (k-step j: columns 16j..16j+15). */
    static void pack(CudaEmitter e, String s, String a) {
        e.unrolled("j", "BC / 16", () -> {
            e.line(a + "[j][0] = lt_pack(" + s + "[2 * j][0], " + s + "[2 * j][1]);");
            e.line(a + "[j][1] = lt_pack(" + s + "[2 * j][2], " + s + "[2 * j][3]);");
            e.line(a + "[j][2] = lt_pack(" + s + "[2 * j + 1][0], " + s + "[2 * j + 1][1]);");
            e.line(a + "[j][3] = lt_pack(" + s + "[2 * j + 1][2], " + s + "[2 * j + 1][3]);");
        });
    }

    /** acc += a · b for each (acc, a, b-tile) pair: BC / 16 k-steps of 16 rows of the streamed tile, read transposed. */
    private static void gradients(CudaEmitter e, String[][] products) {
        e.line("lt_wgmma_fence();");
        for (String[] p : products) {
            e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(" + p[0] + ", " + p[1] + "[j], LT_VDESC(" + p[2] + " + j * 2048), true);"));
        }
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<0>();");
        e.unrolled("n", "16", () -> {
            for (String[] p : products) {
                e.line("lt_reg_fence(" + p[0] + "[n]);");
            }
        });
    }

    private void gradKv(CudaEmitter e, String blk, String dsUnit) {
        e.line("const int kblocks = (seq_k + BM - 1) / BM;");
        e.line("const long long bh = " + blk + " / kblocks;  // (batch, K/V head)");
        e.line("const int k0 = (int) (" + blk + " % kblocks) * BM;");
        e.line("const long long hkn = heads / GROUP, bi = bh / hkn, hk = bh % hkn;");
        e.line("const T* __restrict__ kb = k + bi * k_sb + hk * k_sh;");
        e.line("const T* __restrict__ vb = v + bi * v_sb + hk * v_sh;");
        e.line("const unsigned sK = sbase, sV = sK + RBYTES, sQ = sV + RBYTES, sG = sQ + 2 * TBYTES;  // two buffers each of Q and dO");
        e.line("float* fL = reinterpret_cast<float*>(lt_smem + (sG + 2 * TBYTES - sraw));  // each buffer's lse·log2e");
        e.line("float* fD = fL + 2 * BC;                                                  // and delta");
        if (writesDs()) {
            e.linef("constexpr int DSP = %d;  // a warp's dS block: [64 queries][16 keys], rows DSP elements apart", DS_PITCH);
            e.line("const unsigned sW = (unsigned) __cvta_generic_to_shared(fD + 2 * BC) + wi * (BC * DSP * 2);  // this warp's block");
            e.line("const int nkt = kblocks, kt = k0 / BM;");
            e.line("const long long dsTiles = lt_ds_row((seq_q + BC - 1) / BC, nkt);");
            e.line("const long long dsUnit = " + dsUnit + ";  // the slot of this (batch, K/V head)'s dS tiles");
        }
        e.line("lt_load_tile<BM>(sK, kb, k_ss, k0, seq_k, tid);");
        e.line("lt_load_tile<BM>(sV, vb, v_ss, k0, seq_k, tid);");
        e.line("lt_cp_commit();");
        e.line("float dk[16][4], dv[16][4];");
        e.unrolled("n", "16", () -> e.line("dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.f;"));
        e.line("const int krow = k0 + wi * 16 + g;  // this thread's keys: krow and krow + 8");
        AttentionBackwardRows.kvTileWalkCounted(e, "BC", "TBYTES");
        e.comment("the operands' shared-memory descriptors, offsets added per k-step (LT_KOFF) and per 16 rows (128 = 2048 bytes)");
        e.line("const unsigned long long dKa = lt_desc(sK, 16, 1024), dVa = lt_desc(sV, 16, 1024);");
        e.block("for (int it = 0; it < total; ++it)", () -> {
            e.line("const int buf = it & 1;");
            e.line("__syncthreads();  // every warp is done with tile it - 1 (its products were waited for), whose buffers tile it + 1 fills");
            e.line("stage(buf);  // tile it's lse and delta, loaded while tile it - 1 ran");
            e.line("if (it + 1 < total) issue(buf ^ 1);");
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_one();  // every group but the newest: tile it (and K, V) landed");
            e.line("lt_async_fence();  // ... and is visible to the tensor cores");
            e.line("__syncthreads();");
            e.line("const int i0 = (qs + ct) * BC;");
            e.line("const unsigned cQ = sQ + buf * TBYTES, cG = sG + buf * TBYTES;");
            e.line("const float* cL = fL + buf * BC;");
            e.line("const float* cD = fD + buf * BC;");
            e.line("float st[BC / 8][4], dpt[BC / 8][4];  // Sᵀ and dPᵀ: rows = the CTA's keys, columns = the tile's queries");
            e.line("const bool edge = k0 + BM > seq_k || (CAUSAL && i0 < k0 + BM);  // a ragged or diagonal tile");
            if (overlap || writesDs()) {
                AttentionBackwardWgmmaOverlap.kvOverlapped(e, writesDs());
            } else {
                scores(e, "st", "sK", "cQ", "dpt", "sV", "cG");
                e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> {
                    AttentionBackwardWgmmaOverlap.kvProbability(e);
                    e.line("dpt[n][i] = st[n][i] * (dpt[n][i] - cD[qi]);");
                }));
                e.line("unsigned pa[BC / 16][4], sa[BC / 16][4];");
                pack(e, "st", "pa");
                pack(e, "dpt", "sa");
                gradients(e, new String[][] {{"dv", "pa", "cG"}, {"dk", "sa", "cQ"}});
            }
            AttentionBackwardRows.kvTileNext(e);
        });
        AttentionBackwardRows.storeDkDv(e, pack2, vec2, writesDs());
    }

    private void gradQ(CudaEmitter e) {
        e.line("const int qblocks = (seq_q + BM - 1) / BM;");
        e.line("const long long bh = blockIdx.x / qblocks;");
        e.line("const int q0 = (qblocks - 1 - (int) (blockIdx.x % qblocks)) * BM;  // heaviest causal block first");
        e.line("const long long bi = bh / heads, hi = bh % heads, hkv = hi / GROUP;");
        e.line("const T* __restrict__ qb = q + bi * q_sb + hi * q_sh;");
        e.line("const T* __restrict__ kb = k + bi * k_sb + hkv * k_sh;");
        e.line("const T* __restrict__ vb = v + bi * v_sb + hkv * v_sh;");
        e.line("const T* __restrict__ dyb = dy + bi * dy_sb + hi * dy_sh;");
        e.line("int nk = (seq_k + BC - 1) / BC;");
        e.line("if (CAUSAL) nk = min(nk, (q0 + BM + BC - 1) / BC);  // key tiles past the block's last query are fully masked");
        e.line("const unsigned sQ = sbase, sG = sQ + RBYTES, sK = sG + RBYTES, sV = sK + 2 * TBYTES;  // two buffers each of K and V");
        e.line("lt_load_tile<BM>(sQ, qb, q_ss, q0, seq_q, tid);");
        e.line("lt_load_tile<BM>(sG, dyb, dy_ss, q0, seq_q, tid);");
        e.line("lt_cp_commit();");
        e.line("const int qrow = q0 + wi * 16 + g;  // this thread's rows: qrow and qrow + 8");
        AttentionBackwardRows.rowLseDelta(e, "qrow");
        e.line("float dq[16][4];");
        e.unrolled("n", "16", () -> e.line("dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;"));
        e.block("auto issue = [&](int kt, int buf)", () -> {
            e.line("lt_load_tile<BC>(sK + buf * TBYTES, kb, k_ss, kt * BC, seq_k, tid);");
            e.line("lt_load_tile<BC>(sV + buf * TBYTES, vb, v_ss, kt * BC, seq_k, tid);");
        });
        e.line(";");
        e.line("if (nk > 0) issue(0, 0);");
        e.line("lt_cp_commit();");
        e.block("for (int kt = 0; kt < nk; ++kt)", () -> {
            e.line("const int buf = kt & 1;");
            e.line("__syncthreads();  // every warp is done with tile kt - 1, whose buffers tile kt + 1 fills");
            e.line("if (kt + 1 < nk) issue(kt + 1, buf ^ 1);");
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_one();  // every group but the newest: tile kt (and Q, dO) landed");
            e.line("lt_async_fence();");
            e.line("__syncthreads();");
            e.line("const int c0 = kt * BC;");
            e.line("const unsigned cK = sK + buf * TBYTES, cV = sV + buf * TBYTES;");
            e.line("float s[BC / 8][4], dp[BC / 8][4];");
            e.line("const bool edge = c0 + BC > seq_k || (CAUSAL && c0 + BC - 1 > q0);  // a ragged or diagonal tile");
            e.comment("dS = P (dP - delta), P = exp2(s·scale·log2e - lse·log2e): 0 where masked or where the row sees no key");
            if (overlap) {
                AttentionBackwardWgmmaOverlap.qScoresIssue(e);
                AttentionBackwardWgmmaOverlap.qScoresSplit(e);
            } else {
                scores(e, "s", "sQ", "cK", "dp", "sG", "cV");
                e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> {
                    AttentionBackwardWgmmaOverlap.qProbability(e);
                    e.line("s[n][i] *= dp[n][i] - dl[i >> 1];");
                }));
            }
            e.line("unsigned sa[BC / 16][4];");
            pack(e, "s", "sa");
            gradients(e, new String[][] {{"dq", "sa", "cK"}});
        });
        e.line("lt_cp_wait_all();");
        AttentionBackwardRows.storeDq(e, "qrow", pack2, vec2);
    }
}
