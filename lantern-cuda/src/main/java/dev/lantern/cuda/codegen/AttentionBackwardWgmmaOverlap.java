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
     * As above; with {@code writeDs} (GRAD_KV_DS) dSᵀ, as packed for dK, is also written transposed into
     * shared memory ({@code sDS[query][key]}) before dK += dSᵀ Q is issued, and once every warp has
     * written its keys the tile is copied out to global memory in DQ_DS's fragment order
     * ({@link AttentionDqFromDsRenderer}) while dK runs.
     */
    static void kvOverlapped(CudaEmitter e, boolean writeDs) {
        e.line("lt_wgmma_fence();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(st, LT_KDESC(sK, RBYTES / 2, kk), LT_KDESC(cQ, HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(dpt, LT_KDESC(sV, RBYTES / 2, kk), LT_KDESC(cG, HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<1>();  // Sᵀ is ready; dPᵀ may still run");
        e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(st[n]);"));
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> kvProbability(e)));
        e.line("unsigned pa[BC / 16][4], sa[BC / 16][4];");
        AttentionBackwardWgmmaRenderer.pack(e, "st", "pa");
        e.line("lt_wgmma_fence();");
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dv, pa[j], LT_VDESC(cG + j * 2048), true);"));
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<1>();  // dPᵀ is ready; dV += Pᵀ dO may still run");
        e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(dpt[n]);"));
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> e.line("dpt[n][i] = st[n][i] * (dpt[n][i] - cD[n * 8 + 2 * t4 + (i & 1)]);")));
        AttentionBackwardWgmmaRenderer.pack(e, "dpt", "sa");
        if (writeDs) {
            e.comment("dSᵀ's 16-bit values into sDS[query][key]: sa[j][0] and [2] hold key krow, [1] and [3] key krow + 8;");
            e.comment("the low half query 16j + 2 t4 (+ 8 for [2], [3]), the high half the next query");
            e.line("const int kl = wi * 16 + g;");
            e.unrolled("j", "BC / 16", () -> e.unrolled("x", "4", () -> {
                e.line("const int ql = 16 * j + (x >> 1) * 8 + 2 * t4, kc = kl + (x & 1) * 8;");
                e.line("sDS[ql * DSP + kc] = (unsigned short) (sa[j][x] & 0xFFFFu);");
                e.line("sDS[(ql + 1) * DSP + kc] = (unsigned short) (sa[j][x] >> 16);");
            }));
        }
        e.line("lt_wgmma_fence();");
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dk, sa[j], LT_VDESC(cQ + j * 2048), true);"));
        e.line("lt_wgmma_commit();");
        if (writeDs) {
            e.line("__syncthreads();  // every warp's keys of the tile are in sDS (the loop's first barrier keeps the next tile off it)");
            e.block("", () -> {
                e.line("const long long hq = hk * GROUP + it / per;  // the tile's query head and query tile");
                e.line("const int qt = qs + it % per;");
                e.line("uint4* __restrict__ dst = reinterpret_cast<uint4*>(ds) + ((bi * heads + hq) * dsTiles + lt_ds_row(qt, nkt) + kt) * 512 + tid;");
                e.line("const int r = wi * 16 + g;  // as DQ_DS's thread tid: rows r and r + 8");
                e.unrolled("p", "4", () -> {
                    e.line("const unsigned* s0 = reinterpret_cast<const unsigned*>(sDS + r * DSP + 16 * p + 2 * t4);");
                    e.line("dst[p * 128] = make_uint4(s0[0], s0[4 * DSP], s0[4], s0[4 * DSP + 4]);");
                });
            });
        }
        e.line("lt_wgmma_wait<0>();");
        e.unrolled("n", "16", () -> {
            e.line("lt_reg_fence(dv[n]);");
            e.line("lt_reg_fence(dk[n]);");
        });
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
