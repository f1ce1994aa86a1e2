package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * The tensor-core kernels of attention's backward ({@link AttentionBackwardSpec} LSE, GRAD_Q,
 * GRAD_KV) for head_dim 64 and 128, bf16 or f16, sm_80+: {@code mma.sync.m16n8k16} with f32
 * accumulators, tiles in shared memory in the forward's swizzled layout (16-byte chunk c of row r
 * at c ^ (r % 8)), A and B fragments by {@code ldmatrix} ({@code .trans} where the reduction runs
 * over the tile's rows). 4 warps, each owning 16 rows of its CTA's block:
 *
 * <pre>
 * LSE     CTA = 64 query rows of one (b, h); per 64-key tile: S = Q Kᵀ, running max and sum per row
 * GRAD_Q  CTA = 64 query rows of one (b, h); per 64-key tile (causal: up to the block's last query):
 *           S = Q Kᵀ, dP = dO Vᵀ (Q, dO, K, V fragments by ldmatrix), P = exp2(S·scale·log2e − lse·log2e),
 *           dS = P∘(dP − delta), dQ += dS K (dS re-packed from the accumulators, K by ldmatrix.trans)
 * GRAD_KV CTA = 64 keys of one (b, K/V head); for each query head of the group, per BR-row query tile
 *           (causal: from the first tile that sees the block's first key): Sᵀ = K Qᵀ, dPᵀ = V dOᵀ,
 *           Pᵀ, dSᵀ as above (lse and delta of the tile's rows staged in shared memory),
 *           dV += Pᵀ dO, dK += dSᵀ Q (dO and Q by ldmatrix.trans)
 * tiles: the query tile BR of GRAD_KV is 32 at head_dim 128 (registers: 255 a thread, 2 CTAs an SM), else 64; the key tile of
 * GRAD_Q 64 (32 with an additive mask at head_dim 128)
 * </pre>
 * The streamed tiles (GRAD_Q's K and V, GRAD_KV's Q, dO, lse and delta) have {@link #STAGES} buffers:
 * tile i + 1's cp.async copies are issued before tile i is used and waited for (wait_group 1) only
 * when tile i + 1 comes up, so the copies overlap the tile's mma work; a CTA used to wait for every
 * tile it loaded, idle.
 * Rows past seq_q and keys past seq_k are zero-filled by cp.async and their P set to 0; a row whose
 * lse is −inf (it sees no key) has P = 0 (its lse·log2e is staged as +inf). Every output element is
 * accumulated by one thread in a fixed order (no atomics), so strict mode runs these kernels.
 */
final class AttentionBackwardMmaRenderer {
    static final int WARPS = 4;
    /** Buffers of the streamed tiles (GRAD_Q's K and V, GRAD_KV's Q and dO): the next tile lands while this one is used. */
    static final int STAGES = 2;

    private final AttentionBackwardSpec spec;
    private final String t;
    private final int queryTile;
    private final int keyTile;

    AttentionBackwardMmaRenderer(AttentionBackwardSpec spec, CudaTarget target) {
        this.spec = spec;
        this.t = CudaPrelude.cType(spec.dtype());
        // the tiles a warp's registers hold at head_dim 128 without spills (ptxas -v, AttentionBackwardNvccTest):
        // grad_kv keeps dK and dV (2 x 64 f32) beside S^T and dP^T, grad_q dQ (64) beside S and dP; grad_kv's 32-query
        // tile (1.49 ms causal, 2.55 non-causal at 16x32x1024x128 on the H200) beats the 16 that spilled nothing (1.82, 3.28)
        boolean wide = spec.headDim() == 128;
        this.queryTile = spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV && wide ? 32 : 64;
        // grad_q at head_dim 128: 0.82 ms causal, 1.41 non-causal with 64 keys (246 registers), against 0.88 / 1.53 with 32;
        // an additive mask's loads push the 64-key tile past 255 registers (spills), so a masked one keeps 32
        this.keyTile = spec.kind() == AttentionBackwardSpec.Kind.GRAD_Q && wide && spec.masked() ? 32 : 64;
        if (!supports(spec, target)) {
            throw new CodegenException(spec.name() + ": the tensor-core backward needs bf16/f16, head_dim 64 or 128, mma.sync "
                    + "and kind lse/grad_q/grad_kv, got " + spec);
        }
        if (sharedBytes() > target.sharedBytesPerBlock()) {
            throw new CodegenException(spec.name() + ": needs " + sharedBytes() + " bytes of shared memory, " + target.arch()
                    + " allows " + target.sharedBytesPerBlock());
        }
    }

    static boolean supports(AttentionBackwardSpec spec, CudaTarget target) {
        return target.tensorCoreMma() && (spec.headDim() == 64 || spec.headDim() == 128)
                && (spec.dtype() == DType.BF16 || spec.dtype() == DType.F16) && spec.kind() != AttentionBackwardSpec.Kind.DELTA
                && spec.kind() != AttentionBackwardSpec.Kind.DQ_DS;
    }

    int sharedBytes() {
        int d = spec.headDim();
        return switch (spec.kind()) {
            case LSE -> 2 * 64 * d * 2;
            case GRAD_Q -> (2 * 64 + 2 * STAGES * keyTile) * d * 2;
            case GRAD_KV -> (2 * 64 + 2 * STAGES * queryTile) * d * 2 + 2 * STAGES * queryTile * 4;
            case DELTA, GRAD_KV_DS, DQ_DS, GRAD_KV_DQ -> 0;
        };
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        int d = spec.headDim();
        String kind = spec.kind().name().toLowerCase(java.util.Locale.ROOT);
        CudaPrelude.emit(e, "attention backward " + kind + (spec.causal() ? " (causal)" : "") + ", head_dim " + d
                + ", tensor-core path (mma.sync m16n8k16, 4 warps" + (spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV
                ? ", query tile " + queryTile : "") + ")");
        String mmaType = spec.dtype() == DType.BF16 ? "bf16" : "f16";
        String pack2 = spec.dtype() == DType.BF16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
        String vec2 = spec.dtype() == DType.BF16 ? "__nv_bfloat162" : "__half2";
        e.linef("constexpr int D = %d, NW = %d, THREADS = NW * 32, CH = D / 8, BQ = %d, BK = %d, GROUP = %d;",
                d, WARPS, queryTile, keyTile, spec.group());
        e.linef("constexpr bool CAUSAL = %s;", spec.causal());
        AttentionBackwardRows.scaleConstants(e, spec);
        e.line("typedef " + t + " T;");
        e.blank();
        AttentionBackwardMmaHelpers.emit(e, mmaType, pack2, vec2);
        List<KernelParam> params = AttentionBackwardGeneralRenderer.params(spec, t);
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(" + WARPS * 32 + ")"), () -> {
            e.line("extern __shared__ __align__(128) unsigned char lt_smem[];");
            e.line("const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;");
            e.line("const int lm = lane >> 3, lr = lane & 7;  // ldmatrix roles: matrix lm, row lr within it");
            e.line("const int g = lane >> 2, t4 = lane & 3;   // mma roles: rows g and g + 8, columns 2 t4, 2 t4 + 1");
            e.line("(void) SCALE; (void) GROUP;");
            e.comment("A fragment (16 rows from r0, k-step kk) and B fragments (two 8-row n-tiles from n0, k-step kk; or,");
            e.comment("transposed, rows k0.. as the reduction and two 8-column n-tiles from chunk pair dp) in swizzled smem");
            e.line("#define LT_A(s, r0, kk) ((s) + (((r0) + (lm & 1) * 8 + lr) * D + ((((kk) * 2 + (lm >> 1)) ^ lr) << 3)) * 2)");
            e.line("#define LT_B(s, n0, kk) ((s) + (((n0) + (lm >> 1) * 8 + lr) * D + ((((kk) * 2 + (lm & 1)) ^ lr) << 3)) * 2)");
            e.line("#define LT_BT(s, k0, dp) ((s) + (((k0) + (lm & 1) * 8 + lr) * D + ((((dp) * 2 + (lm >> 1)) ^ lr) << 3)) * 2)");
            switch (spec.kind()) {
                case LSE -> lse(e);
                case GRAD_Q -> gradQ(e, pack2, vec2);
                case GRAD_KV -> gradKv(e, pack2, vec2);
                case DELTA, GRAD_KV_DS, DQ_DS -> throw new IllegalStateException(spec.kind() + " has no mma.sync kernel");
            }
            e.line("#undef LT_A");
            e.line("#undef LT_B");
            e.line("#undef LT_BT");
        });
        int smem = sharedBytes();
        int rows = spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV ? 64 : 64;
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + rows - 1) / rows), WARPS * 32, smem);
        long groups = spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV ? spec.batch() * spec.kvHeads() : spec.batch() * spec.heads();
        long n = spec.kind() == AttentionBackwardSpec.Kind.GRAD_KV ? spec.seqK() : spec.seqQ();
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(groups, n, spec.seqK()), "mma");
    }

    /** bh, q0 and the operand bases of a per-query-block kernel (LSE, GRAD_Q). */
    private void queryBlock(CudaEmitter e, boolean grad) {
        e.line("const int qblocks = (seq_q + 63) / 64;");
        e.line("const long long bh = blockIdx.x / qblocks;");
        e.line("const int q0 = (qblocks - 1 - (int) (blockIdx.x % qblocks)) * 64;  // heaviest causal block first");
        e.line("const long long bi = bh / heads, hi = bh % heads, hkv = hi / GROUP;");
        e.line("const T* __restrict__ qb = q + bi * q_sb + hi * q_sh;");
        e.line("const T* __restrict__ kb = k + bi * k_sb + hkv * k_sh;");
        if (grad) {
            e.line("const T* __restrict__ vb = v + bi * v_sb + hkv * v_sh;");
            e.line("const T* __restrict__ dyb = dy + bi * dy_sb + hi * dy_sh;");
        }
        if (spec.masked()) {
            e.line("const T* __restrict__ amb = amask + bi * amask_sb + hi * amask_sh;");
        }
        e.line("int nk = (seq_k + BK - 1) / BK;");
        e.line("if (CAUSAL) nk = min(nk, (q0 + 64 + BK - 1) / BK);  // key tiles past the block's last query are fully masked");
    }

    /** s[n][i] (raw scores of 16 query rows x BK keys) -> log2-domain scores with the mask, -inf where masked out. */
    private void maskedScores(CudaEmitter e, String s, String rowExpr, String colExpr, String nTiles) {
        e.unrolled("n", nTiles, () -> e.unrolled("i", "4", () -> {
            e.line("const int row = " + rowExpr + ", col = " + colExpr + ";");
            e.line("float x = " + s + "[n][i] * SCALE_LOG2;");
            if (spec.masked()) {
                e.line("if (row < seq_q && col < seq_k) x += lt_f32(amb[(long long) row * amask_ss + col]) * LOG2E;");
            }
            e.line(s + "[n][i] = col < seq_k && (!CAUSAL || col <= row) ? x : -LT_INF;");
        }));
    }

    private void lse(CudaEmitter e) {
        queryBlock(e, false);
        e.line("const unsigned sQ = (unsigned) __cvta_generic_to_shared(lt_smem), sK = sQ + 64 * D * 2;");
        e.line("lt_load_tile<64>(sQ, qb, q_ss, q0, seq_q, tid);");
        e.line("lt_cp_commit();");
        e.line("float m[2] = {-LT_INF, -LT_INF}, l[2] = {0.f, 0.f};");
        e.block("for (int kt = 0; kt < nk; ++kt)", () -> {
            e.line("__syncthreads();  // every warp is done with the previous K tile");
            e.line("lt_load_tile<BK>(sK, kb, k_ss, kt * BK, seq_k, tid);");
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_all();");
            e.line("__syncthreads();");
            e.line("float s[BK / 8][4];");
            e.unrolled("n", "BK / 8", () -> e.line("s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;"));
            e.unrolled("kk", "D / 16", () -> {
                e.line("unsigned a[4];");
                e.line("lt_ldsm_x4(LT_A(sQ, warp * 16, kk), a);");
                e.unrolled("np", "BK / 16", () -> {
                    e.line("unsigned b[4];");
                    e.line("lt_ldsm_x4(LT_B(sK, np * 16, kk), b);");
                    e.line("lt_mma(s[2 * np], a, b[0], b[1]);");
                    e.line("lt_mma(s[2 * np + 1], a, b[2], b[3]);");
                });
            });
            maskedScores(e, "s", "q0 + warp * 16 + g + (i >> 1) * 8", "kt * BK + n * 8 + 2 * t4 + (i & 1)", "BK / 8");
            e.unrolled("h", "2", () -> {
                e.line("float mx = -LT_INF;");
                e.unrolled("n", "BK / 8", () -> e.line("mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));"));
                e.line("mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));");
                e.line("mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));");
                e.line("const float mn = fmaxf(m[h], mx);");
                e.block("if (mn != -LT_INF)", () -> {
                    e.line("float ls = 0.f;");
                    e.unrolled("n", "BK / 8", () -> e.line("ls += exp2f(s[n][2 * h] - mn) + exp2f(s[n][2 * h + 1] - mn);"));
                    e.line("l[h] = l[h] * exp2f(m[h] - mn) + ls;");
                    e.line("m[h] = mn;");
                });
            });
        });
        e.unrolled("h", "2", () -> {
            e.line("float lq = l[h];");
            e.line("lq += __shfl_xor_sync(0xffffffffu, lq, 1);");
            e.line("lq += __shfl_xor_sync(0xffffffffu, lq, 2);");
            e.line("const int row = q0 + warp * 16 + g + 8 * h;");
            e.comment("natural log: ln(sum 2^x) = (m + log2 l) ln 2");
            e.line("if (t4 == 0 && row < seq_q) lse[bh * seq_q + row] = lq > 0.f ? (m[h] + log2f(lq)) * 0.6931471805599453f : -LT_INF;");
        });
    }

    private void gradQ(CudaEmitter e, String pack2, String vec2) {
        queryBlock(e, true);
        e.line("const unsigned sQ = (unsigned) __cvta_generic_to_shared(lt_smem), sG = sQ + 64 * D * 2, sK = sG + 64 * D * 2, "
                + "sV = sK + 2 * BK * D * 2;  // two buffers each of K and V");
        e.line("lt_load_tile<64>(sQ, qb, q_ss, q0, seq_q, tid);");
        e.line("lt_load_tile<64>(sG, dyb, dy_ss, q0, seq_q, tid);");
        e.line("lt_cp_commit();");
        AttentionBackwardRows.rowLseDelta(e, "q0 + warp * 16 + g");
        e.line("float dq[D / 8][4];");
        e.unrolled("n", "D / 8", () -> e.line("dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;"));
        e.comment("K and V tiles stream through two buffers: tile kt + 1 lands while tile kt is used");
        e.block("auto issue = [&](int kt, int buf)", () -> {
            e.line("lt_load_tile<BK>(sK + buf * (BK * D * 2), kb, k_ss, kt * BK, seq_k, tid);");
            e.line("lt_load_tile<BK>(sV + buf * (BK * D * 2), vb, v_ss, kt * BK, seq_k, tid);");
        });
        e.line(";");
        e.line("if (nk > 0) issue(0, 0);");
        e.line("lt_cp_commit();");
        e.block("for (int kt = 0; kt < nk; ++kt)", () -> {
            e.line("const int buf = kt & 1;");
            e.line("__syncthreads();  // every warp is done with tile kt - 1, whose buffer tile kt + 1 fills");
            e.line("if (kt + 1 < nk) issue(kt + 1, buf ^ 1);");
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_one();  // every group but the newest: tile kt (and Q, dO) landed");
            e.line("__syncthreads();");
            e.line("const unsigned cK = sK + buf * (BK * D * 2), cV = sV + buf * (BK * D * 2);");
            e.line("float s[BK / 8][4], dp[BK / 8][4];");
            e.unrolled("n", "BK / 8", () -> e.line("s[n][0] = s[n][1] = s[n][2] = s[n][3] = dp[n][0] = dp[n][1] = dp[n][2] = dp[n][3] = 0.f;"));
            e.unrolled("kk", "D / 16", () -> {
                e.line("unsigned qa[4], ga[4];");
                e.line("lt_ldsm_x4(LT_A(sQ, warp * 16, kk), qa);");
                e.line("lt_ldsm_x4(LT_A(sG, warp * 16, kk), ga);");
                e.unrolled("np", "BK / 16", () -> {
                    e.line("unsigned b[4];");
                    e.line("lt_ldsm_x4(LT_B(cK, np * 16, kk), b);");
                    e.line("lt_mma(s[2 * np], qa, b[0], b[1]);");
                    e.line("lt_mma(s[2 * np + 1], qa, b[2], b[3]);");
                    e.line("lt_ldsm_x4(LT_B(cV, np * 16, kk), b);");
                    e.line("lt_mma(dp[2 * np], ga, b[0], b[1]);");
                    e.line("lt_mma(dp[2 * np + 1], ga, b[2], b[3]);");
                });
            });
            maskedScores(e, "s", "q0 + warp * 16 + g + (i >> 1) * 8", "kt * BK + n * 8 + 2 * t4 + (i & 1)", "BK / 8");
            e.comment("dS = P (dP - delta), P = exp2(s - lse log2e): 0 where masked (s = -inf) or the row sees no key (+inf)");
            e.unrolled("n", "BK / 8", () -> e.unrolled("i", "4",
                    () -> e.line("s[n][i] = exp2f(s[n][i] - l2[i >> 1]) * (dp[n][i] - dl[i >> 1]);")));
            e.unrolled("j", "BK / 16", () -> {
                e.line("unsigned a[4];");
                e.line("lt_acc_to_a(s[2 * j], s[2 * j + 1], a);");
                e.unrolled("c", "D / 16", () -> {
                    e.line("unsigned b[4];");
                    e.line("lt_ldsm_x4_t(LT_BT(cK, j * 16, c), b);");
                    e.line("lt_mma(dq[2 * c], a, b[0], b[1]);");
                    e.line("lt_mma(dq[2 * c + 1], a, b[2], b[3]);");
                });
            });
        });
        e.line("lt_cp_wait_all();");
        AttentionBackwardRows.storeDq(e, "q0 + warp * 16 + g", pack2, vec2);
    }

    private void gradKv(CudaEmitter e, String pack2, String vec2) {
        e.line("const int kblocks = (seq_k + BK - 1) / BK;");
        e.line("const long long bh = blockIdx.x / kblocks;  // (batch, K/V head)");
        e.line("const int k0 = (int) (blockIdx.x % kblocks) * BK;");
        e.line("const long long hkn = heads / GROUP, bi = bh / hkn, hk = bh % hkn;");
        e.line("const T* __restrict__ kb = k + bi * k_sb + hk * k_sh;");
        e.line("const T* __restrict__ vb = v + bi * v_sb + hk * v_sh;");
        e.line("const unsigned sK = (unsigned) __cvta_generic_to_shared(lt_smem), sV = sK + BK * D * 2, sQ = sV + BK * D * 2, "
                + "sG = sQ + 2 * BQ * D * 2;  // two buffers each of Q and dO");
        e.line("float* fL = reinterpret_cast<float*>(lt_smem + (2 * BK + 4 * BQ) * D * 2);  // each buffer's lse·log2e");
        e.line("float* fD = fL + 2 * BQ;                                                    // and delta");
        e.line("lt_load_tile<BK>(sK, kb, k_ss, k0, seq_k, tid);");
        e.line("lt_load_tile<BK>(sV, vb, v_ss, k0, seq_k, tid);");
        e.line("lt_cp_commit();");
        e.line("float dk[D / 8][4], dv[D / 8][4];");
        e.unrolled("n", "D / 8", () -> e.line("dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.f;"));
        e.line("const int krow = k0 + warp * 16 + g;  // this thread's keys: krow and krow + 8");
        AttentionBackwardRows.kvTileWalk(e, "BQ", "(BQ * D * 2)");
        e.block("for (int it = 0; it < total; ++it)", () -> {
            e.line("const int buf = it & 1;");
            e.line("__syncthreads();  // every warp is done with tile it - 1, whose buffers tile it + 1 fills");
            e.line("if (it + 1 < total) issue(it + 1, buf ^ 1);");
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_one();  // every group but the newest: tile it (and K, V) landed");
            e.line("__syncthreads();");
            e.line("const int i0 = (qs + it % per) * BQ;");
            if (spec.masked()) {
                e.line("const long long hi = hk * GROUP + it / per;");
                e.line("const T* __restrict__ amb = amask + bi * amask_sb + hi * amask_sh;");
            }
            e.line("const unsigned cQ = sQ + buf * (BQ * D * 2), cG = sG + buf * (BQ * D * 2);");
            e.line("const float* cL = fL + buf * BQ;");
            e.line("const float* cD = fD + buf * BQ;");
            {
                e.line("float st[BQ / 8][4], dpt[BQ / 8][4];  // S^T and dP^T: rows = this warp's 16 keys, columns = the tile's queries");
                e.unrolled("n", "BQ / 8", () -> e.line("st[n][0] = st[n][1] = st[n][2] = st[n][3] = dpt[n][0] = dpt[n][1] = dpt[n][2] = dpt[n][3] = 0.f;"));
                e.unrolled("kk", "D / 16", () -> {
                    e.line("unsigned ka[4], va[4];");
                    e.line("lt_ldsm_x4(LT_A(sK, warp * 16, kk), ka);");
                    e.line("lt_ldsm_x4(LT_A(sV, warp * 16, kk), va);");
                    e.unrolled("np", "BQ / 16", () -> {
                        e.line("unsigned b[4];");
                        e.line("lt_ldsm_x4(LT_B(cQ, np * 16, kk), b);");
                        e.line("lt_mma(st[2 * np], ka, b[0], b[1]);");
                        e.line("lt_mma(st[2 * np + 1], ka, b[2], b[3]);");
                        e.line("lt_ldsm_x4(LT_B(cG, np * 16, kk), b);");
                        e.line("lt_mma(dpt[2 * np], va, b[0], b[1]);");
                        e.line("lt_mma(dpt[2 * np + 1], va, b[2], b[3]);");
                    });
                });
                e.unrolled("n", "BQ / 8", () -> e.unrolled("i", "4", () -> {
                    e.line("const int key = krow + (i >> 1) * 8, qi = n * 8 + 2 * t4 + (i & 1), row = i0 + qi;");
                    e.line("float x = st[n][i] * SCALE_LOG2;");
                    if (spec.masked()) {
                        e.line("if (row < seq_q && key < seq_k) x += lt_f32(amb[(long long) row * amask_ss + key]) * LOG2E;");
                    }
                    e.line("const float p = key < seq_k && (!CAUSAL || key <= row) ? exp2f(x - cL[qi]) : 0.f;");
                    e.line("st[n][i] = p;");
                    e.line("dpt[n][i] = p * (dpt[n][i] - cD[qi]);");
                }));
                e.unrolled("j", "BQ / 16", () -> {
                    e.line("unsigned pa[4], sa[4];");
                    e.line("lt_acc_to_a(st[2 * j], st[2 * j + 1], pa);");
                    e.line("lt_acc_to_a(dpt[2 * j], dpt[2 * j + 1], sa);");
                    e.unrolled("c", "D / 16", () -> {
                        e.line("unsigned b[4];");
                        e.line("lt_ldsm_x4_t(LT_BT(cG, j * 16, c), b);");
                        e.line("lt_mma(dv[2 * c], pa, b[0], b[1]);");
                        e.line("lt_mma(dv[2 * c + 1], pa, b[2], b[3]);");
                        e.line("lt_ldsm_x4_t(LT_BT(cQ, j * 16, c), b);");
                        e.line("lt_mma(dk[2 * c], sa, b[0], b[1]);");
                        e.line("lt_mma(dk[2 * c + 1], sa, b[2], b[3]);");
                    });
                });
            }
        });
        AttentionBackwardRows.storeDkDv(e, pack2, vec2);
    }
}
