package dev.lantern.cuda.codegen;

/**
 * The orders in which {@link AttentionBackwardWgmmaRenderer}'s kernels keep the tensor cores busy
 * while the exponentials and dS run: each step's products committed as separate wgmma groups and
 * waited for one at a time, so a group runs under the arithmetic that does not need it; and
 * grad_q's dQ product of a tile queued ahead of the next tile's score products. The products and
 * the summation order are those of the waiting form; only when each is waited for changes. No
 * wgmma is in flight across a loop's back edge: ptxas serializes the wgmmas of such a loop
 * (warning C7515), which {@code AttentionBackwardNvccTest} checks for.
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
        e.line("lt_wgmma_fence();");
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dk, sa[j], LT_VDESC(cQ + j * 2048), true);"));
        e.line("lt_wgmma_commit();");
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

    /**
     * grad_q's walk with dQ += dS K of tile kt on the tensor cores ahead of tile kt + 1's score
     * products, in one queue: dS of a tile is formed one step before its product is issued (it waits
     * in {@code sa}), and a tile's K and V buffers are refilled (tile kt + 2) once every warp has
     * waited for that product. Nothing is in flight across the loop's back edge (ptxas would serialize
     * the wgmmas). dQ sums the tiles in the same order as the waiting form.
     */
    static void gradQPipelined(CudaEmitter e) {
        e.line("unsigned sa[BC / 16][4];  // dS of the tile whose dQ product is issued next");
        e.line("float s[BC / 8][4], dp[BC / 8][4];");
        e.block("", () -> {
            e.comment("prologue: tile 0's dS");
            e.line("lt_cp_wait_all();  // Q, dO and tile 0");
            e.line("lt_async_fence();");
            e.line("__syncthreads();");
            e.line("const int c0 = 0;");
            e.line("const unsigned cK = sK, cV = sV;");
            e.line("const bool edge = c0 + BC > seq_k || (CAUSAL && c0 + BC - 1 > q0);  // a ragged or diagonal tile");
            qScoresIssue(e);
            e.line("if (nk > 1) issue(1, 1);");
            e.line("lt_cp_commit();");
            qScoresSplit(e);
            AttentionBackwardWgmmaRenderer.pack(e, "s", "sa");
        });
        e.block("for (int kt = 0; kt + 1 < nk; ++kt)", () -> {
            e.line("const int buf = kt & 1;");
            e.line("lt_cp_wait_all();  // tile kt + 1 (issued one step ago)");
            e.line("lt_async_fence();");
            e.line("__syncthreads();   // ... landed for every thread");
            e.line("lt_wgmma_fence();");
            e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dq, sa[j], LT_VDESC(sK + buf * TBYTES + j * 2048), true);"));
            e.line("lt_wgmma_commit();");
            e.line("const int c0 = (kt + 1) * BC;");
            e.line("const unsigned cK = sK + (buf ^ 1) * TBYTES, cV = sV + (buf ^ 1) * TBYTES;");
            e.line("const bool edge = c0 + BC > seq_k || (CAUSAL && c0 + BC - 1 > q0);  // a ragged or diagonal tile");
            qScoresIssue(e);
            e.line("lt_wgmma_wait<1>();  // dQ += dS K of tile kt and S of tile kt + 1 are done; dP may still run");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
            e.line("__syncthreads();     // ... in every warp: tile kt's buffers are free for tile kt + 2");
            e.line("if (kt + 2 < nk) issue(kt + 2, buf);");
            e.line("lt_cp_commit();");
            e.comment("dS = P (dP - delta), P = exp2(s·scale·log2e - lse·log2e): 0 where masked or where the row sees no key");
            e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> qProbability(e)));
            e.line("lt_wgmma_wait<0>();  // dP is ready");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(dp[n]);"));
            e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> e.line("s[n][i] *= dp[n][i] - dl[i >> 1];")));
            AttentionBackwardWgmmaRenderer.pack(e, "s", "sa");
        });
        e.comment("epilogue: the last tile's dQ product");
        e.line("lt_wgmma_fence();");
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dq, sa[j], LT_VDESC(sK + ((nk - 1) & 1) * TBYTES + j * 2048), true);"));
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<0>();");
        e.unrolled("n", "16", () -> e.line("lt_reg_fence(dq[n]);"));
    }

    /** grad_kv's names for tile {@code it}'s buffers (of buffer {@code buf}) and whether it is ragged or diagonal. */
    private static void kvTile(CudaEmitter e, String it, String buf) {
        e.line("const int i0 = (qs + (" + it + ") % per) * BC;");
        e.line("const unsigned cQ = sQ + (" + buf + ") * TBYTES, cG = sG + (" + buf + ") * TBYTES;");
        e.line("const float* cL = fL + (" + buf + ") * BC;");
        e.line("const float* cD = fD + (" + buf + ") * BC;");
        e.line("const bool edge = k0 + BM > seq_k || (CAUSAL && i0 < k0 + BM);  // a ragged or diagonal tile");
    }

    /** grad_kv's Sᵀ = K Qᵀ and dPᵀ = V dOᵀ of the tile at cQ, cG as two wgmma groups. */
    private static void kvScoresIssue(CudaEmitter e) {
        e.line("lt_wgmma_fence();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(st, LT_KDESC(sK, RBYTES / 2, kk), LT_KDESC(cQ, HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(dpt, LT_KDESC(sV, RBYTES / 2, kk), LT_KDESC(cG, HALF, kk), kk > 0);"));
        e.line("lt_wgmma_commit();");
    }

    /**
     * From Sᵀ (landed, fenced) to dSᵀ in {@code sa}: Pᵀ, dV += Pᵀ dO issued, then (dPᵀ landed: the
     * newest group but dV) dSᵀ = Pᵀ∘(dPᵀ − delta); returns with dV waited for.
     */
    private static void kvProbabilitiesAndDv(CudaEmitter e) {
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> kvProbability(e)));
        AttentionBackwardWgmmaRenderer.pack(e, "st", "pa");
        e.line("lt_wgmma_fence();");
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dv, pa[j], LT_VDESC(cG + j * 2048), true);"));
        e.line("lt_wgmma_commit();");
        e.line("lt_wgmma_wait<1>();  // dPᵀ is ready; dV += Pᵀ dO may still run");
        e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(dpt[n]);"));
        e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> e.line("dpt[n][i] = st[n][i] * (dpt[n][i] - cD[n * 8 + 2 * t4 + (i & 1)]);")));
        AttentionBackwardWgmmaRenderer.pack(e, "dpt", "sa");
        e.line("lt_wgmma_wait<0>();  // dV += Pᵀ dO is done");
    }

    /**
     * grad_kv's walk with dK += dSᵀ Q of tile it on the tensor cores ahead of tile it + 1's score
     * products: dSᵀ of a tile is formed one step before its dK product is issued (it waits in
     * {@code sa}); a tile's buffers are refilled (tile it + 2) once every warp has waited for that
     * product. Replaces the loop after {@link AttentionBackwardRows#kvTileWalk}.
     */
    static void kvPipelined(CudaEmitter e) {
        e.line("unsigned pa[BC / 16][4], sa[BC / 16][4];  // Pᵀ, and the dSᵀ whose dK product is issued next");
        e.line("float st[BC / 8][4], dpt[BC / 8][4];  // Sᵀ and dPᵀ: rows = the CTA's keys, columns = the tile's queries");
        e.block("if (total > 0)", () -> {
            e.comment("prologue: tile 0's dV product and dSᵀ");
            e.line("lt_cp_wait_all();  // K, V and tile 0");
            e.line("lt_async_fence();");
            e.line("__syncthreads();");
            kvTile(e, "0", "0");
            kvScoresIssue(e);
            e.line("if (total > 1) issue(1, 1);");
            e.line("lt_cp_commit();");
            e.line("lt_wgmma_wait<1>();  // Sᵀ is ready; dPᵀ may still run");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(st[n]);"));
            kvProbabilitiesAndDv(e);
        });
        e.block("for (int it = 0; it + 1 < total; ++it)", () -> {
            e.line("const int buf = it & 1;");
            e.line("lt_cp_wait_all();  // tile it + 1 (issued one step ago)");
            e.line("lt_async_fence();");
            e.line("__syncthreads();   // ... landed for every thread");
            e.line("lt_wgmma_fence();");
            e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dk, sa[j], LT_VDESC(sQ + buf * TBYTES + j * 2048), true);"));
            e.line("lt_wgmma_commit();");
            kvTile(e, "it + 1", "buf ^ 1");
            kvScoresIssue(e);
            e.line("lt_wgmma_wait<1>();  // dK += dSᵀ Q of tile it and Sᵀ of tile it + 1 are done; dPᵀ may still run");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(st[n]);"));
            e.line("__syncthreads();     // ... in every warp: tile it's buffers are free for tile it + 2");
            e.line("if (it + 2 < total) issue(it + 2, buf);");
            e.line("lt_cp_commit();");
            kvProbabilitiesAndDv(e);
        });
        e.block("if (total > 0)", () -> {
            e.comment("epilogue: the last tile's dK product");
            e.line("lt_wgmma_fence();");
            e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(dk, sa[j], LT_VDESC(sQ + ((total - 1) & 1) * TBYTES + j * 2048), true);"));
            e.line("lt_wgmma_commit();");
            e.line("lt_wgmma_wait<0>();");
        });
        e.unrolled("n", "16", () -> {
            e.line("lt_reg_fence(dv[n]);");
            e.line("lt_reg_fence(dk[n]);");
        });
    }
}
