package dev.lantern.cuda.codegen;

/**
 * How {@link AttentionBackwardWgmmaRenderer}'s kernels keep the tensor cores busy while the
 * exponentials and dS run: each step's products committed as separate wgmma groups and waited for
 * one at a time, so a group runs under the arithmetic that does not need it. The products and the
 * summation order are those of the waiting form; only when each is waited for changes. No wgmma is
 * left in flight across a loop's back edge: ptxas serializes every wgmma of such a loop (warning
 * C7515; {@code AttentionBackwardNvccTest} fails on it). Walks that queued a tile's last product
 * ahead of the next tile's scores were built and measured no faster (docs/training.md).
 */
final class AttentionBackwardWgmmaOverlap {
    private AttentionBackwardWgmmaOverlap() {}

    /** grad_kv's P of accumulator element (n, i) into {@code st[n][i]}: 0 past seq_k, or past the query when causal. */
    static void kvProbability(CudaEmitter e) {
        e.line("const int key = krow + (i >> 1) * 8, qi = n * 8 + 2 * t4 + (i & 1);");
        e.line("float p = lt_exp2(st[n][i] * SCALE_LOG2 - cL[qi]);");
        e.line("if (edge && (key >= seq_k || (CAUSAL && key > i0 + qi))) p = 0.f;");
        e.line("st[n][i] = p;");
    }

    /** grad_q's P of accumulator element (n, i) into {@code s[n][i]}: 0 past seq_k, or past the row when causal. */
    static void qProbability(CudaEmitter e) {
        e.line("const int row = qrow + (i >> 1) * 8, col = c0 + n * 8 + 2 * t4 + (i & 1);");
        e.line("float p = lt_exp2(s[n][i] * SCALE_LOG2 - l2[i >> 1]);");
        e.line("if (edge && (col >= seq_k || (CAUSAL && col > row))) p = 0.f;");
        e.line("s[n][i] = p;");
    }

    /**
     * grad_kv's products with the exponentials under the tensor cores: Sᵀ and dPᵀ are committed as two
     * groups, so Pᵀ is computed while dPᵀ runs; dV += Pᵀ dO is issued before dSᵀ is formed, so dSᵀ is
     * computed while dV runs; then dK += dSᵀ Q. The same products, in the same order, as the waiting form.
     */
    static void kvOverlapped(CudaEmitter e) {
        kvOverlapped(e, false);
    }

    /**
     * As above; with {@code writeDs} (GRAD_KV_DS) dSᵀ, as packed for dK, also goes to global memory in
     * DQ_DS's fragment order ({@link AttentionDqFromDsRenderer}) while dK runs: each warp's 16 keys are
     * exactly one k-step of DQ_DS's A operand, so a warp transposes its own block through shared memory
     * (stmatrix.trans, then ldmatrix) with no barrier across the CTA. A first form that stored 16-bit
     * values one at a time into one CTA-wide tile and synchronised the CTA made grad_kv a third slower
     * (0.78 to 1.04 ms causal, H200, 2026-12-04).
     */
    static void kvOverlapped(CudaEmitter e, boolean writeDs) {
        e.line("const unsigned long long dQb = lt_desc(cQ, 16, 1024), dGb = lt_desc(cG, 16, 1024), dQv = LT_VDESC(cQ), dGv = LT_VDESC(cG);");
        e.line("lt_wgmma_fence();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(st, dKa + LT_KOFF(RBYTES / 2, kk), dQb + LT_KOFF(HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(dpt, dVa + LT_KOFF(RBYTES / 2, kk), dGb + LT_KOFF(HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<1>();  // Sᵀ is ready; dPᵀ may still run");
        e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(st[n]);"));
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> kvProbability(e)));
        e.line("unsigned pa[BC / 16][4], sa[BC / 16][4];");
        AttentionBackwardWgmmaRenderer.pack(e, "st", "pa");
        e.line("lt_wgmma_fence();");
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dv, pa[j], dGv + j * 128, true);"));
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<1>();  // dPᵀ is ready; dV += Pᵀ dO may still run");
        e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(dpt[n]);"));
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> e.line("dpt[n][i] = st[n][i] * (dpt[n][i] - cD[n * 8 + 2 * t4 + (i & 1)]);")));
        AttentionBackwardWgmmaRenderer.pack(e, "dpt", "sa");
        if (writeDs) {
            e.comment("dS of the warp's 16 keys to global memory, through the warp's own block of shared memory: stmatrix.trans");
            e.comment("writes each 8x8 fragment of dSᵀ as rows of dS ([query][key]) while dV runs (before dK reads sa); after dK is");
            e.comment("issued, ldmatrix reads back, for each 16-query block, the A fragment DQ_DS's thread (block, lane) takes for");
            e.comment("k-step wi: chunk wi * 128 + block * 32 + lane");
            e.line("__syncwarp();  // the warp's reads of the last tile's block are done");
            e.unrolled("j", "BC / 16", () -> {
                e.line("const int mi = lane >> 3, qrow8 = 16 * j + (mi >> 1) * 8 + (lane & 7);");
                e.line("lt_stsm_x4_trans(sW + (qrow8 * DSP + (mi & 1) * 8) * 2, sa[j]);");
            });
        }
        e.line("lt_wgmma_fence();");
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dk, sa[j], dQv + j * 128, true);"));
        e.line("lt_wgmma_commit();");
        if (writeDs) {
            e.line("__syncwarp();");
            e.block("", () -> {
                e.line("const int qt = qs + ct;  // the tile's query tile, of the group's query head ch");
                e.line("uint4* __restrict__ dst = reinterpret_cast<uint4*>(ds) + ((dsUnit * GROUP + ch) * dsTiles + lt_ds_row(qt, nkt) + kt) * 512"
                        + " + wi * 128 + lane;");
                e.unrolled("qb", "4", () -> {
                    e.line("const int mi = lane >> 3;");
                    e.line("uint4 f;");
                    e.line("lt_ldsm_x4v(sW + ((16 * qb + (mi & 1) * 8 + (lane & 7)) * DSP + (mi >> 1) * 8) * 2, f);");
                    e.line("dst[qb * 32] = f;");
                });
            });
        }
        e.line("lt_wgmma_wait<0>();");
        e.unrolled("n", "16", () -> {
            e.line("lt_reg_fence(dv[n]);");
            e.line("lt_reg_fence(dk[n]);");
        });
    }

    /** GRAD_KV_DS's shared-memory helpers: stmatrix of four 8x8 fragments transposed, ldmatrix of four into a uint4. */
    static void emitDsHelpers(CudaEmitter e) {
        e.block("__device__ __forceinline__ void lt_stsm_x4_trans(unsigned addr, const unsigned (&r)[4])", () ->
                e.line("asm volatile(\"stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\\n\" "
                        + ":: \"r\"(addr), \"r\"(r[0]), \"r\"(r[1]), \"r\"(r[2]), \"r\"(r[3]) : \"memory\");"));
        e.block("__device__ __forceinline__ void lt_ldsm_x4v(unsigned addr, uint4& f)", () ->
                e.line("asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\" "
                        + ": \"=r\"(f.x), \"=r\"(f.y), \"=r\"(f.z), \"=r\"(f.w) : \"r\"(addr) : \"memory\");"));
    }

    /** Issues grad_q's S = Q Kᵀ and dP = dO Vᵀ of the tile at cK, cV as two wgmma groups. */
    static void qScoresIssue(CudaEmitter e) {
        e.line("lt_wgmma_fence();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(s, LT_KDESC(sQ, RBYTES / 2, kk), LT_KDESC(cK, HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(dp, LT_KDESC(sG, RBYTES / 2, kk), LT_KDESC(cV, HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
    }

    /** grad_q's dS into s: P once S has landed (dP still running), then P (dP − delta) once dP has. */
    static void qScoresSplit(CudaEmitter e) {
        e.line("lt_wgmma_wait<1>();  // S is ready; dP may still run");
        e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> qProbability(e)));
        e.line("lt_wgmma_wait<0>();  // dP is ready");
        e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(dp[n]);"));
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> e.line("s[n][i] *= dp[n][i] - dl[i >> 1];")));
    }
}
