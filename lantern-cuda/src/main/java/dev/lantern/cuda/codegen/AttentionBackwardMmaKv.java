package dev.lantern.cuda.codegen;

/**
 * The body of the tensor-core GRAD_KV kernel ({@link AttentionBackwardMmaRenderer}): a CTA owns BK
 * keys of one (b, K/V head) and walks the query tiles of each query head of its group, one fixed
 * order (the group's heads in order, each head's tiles in order), flattened into one sequence of
 * tiles so that tile j + 1's copies overlap tile j's products:
 * <pre>
 * smem  = K[BK][D] | V[BK][D] | Q[2][BQ][D] | dO[2][BQ][D] | lse·log2e[2][BQ] | delta[2][BQ]
 * prologue: K, V (one cp.async group), then tile 0 into buffer 0 (a second group)
 * tile j (buffer j &amp; 1):  barrier (every warp is done with buffer (j + 1) &amp; 1)
 *                         issue tile j + 1 into the other buffer (its lse and delta into registers);
 *                         wait for all but that group; barrier
 *                         Sᵀ = K Qᵀ, dPᵀ = V dOᵀ, Pᵀ = exp2(Sᵀ·scale·log2e − lse·log2e), dSᵀ = Pᵀ∘(dPᵀ − delta)
 *                         dV += Pᵀ dO, dK += dSᵀ Q; tile j + 1's lse and delta to the other buffer
 * </pre>
 * Causal: a head's tiles start at the first that sees the block's first key. A row whose lse is −inf
 * is staged as +inf (P = 0); rows past seq_q read as zeros and their P is 0.
 */
final class AttentionBackwardMmaKv {
    private AttentionBackwardMmaKv() {}

    /** Shared memory of the kernel: the key block's K and V, two buffers of the query tile's Q, dO, lse and delta. */
    static int sharedBytes(int d, int keyTile, int queryTile) {
        return (2 * keyTile + 4 * queryTile) * d * 2 + 4 * queryTile * 4;
    }

    static void emit(CudaEmitter e, AttentionBackwardSpec spec, String pack2, String vec2) {
        e.line("const int kblocks = (seq_k + BK - 1) / BK;");
        e.line("const long long bh = blockIdx.x / kblocks;  // (batch, K/V head)");
        e.line("const int k0 = (int) (blockIdx.x % kblocks) * BK;");
        e.line("const long long hkn = heads / GROUP, bi = bh / hkn, hk = bh % hkn;");
        e.line("const T* __restrict__ kb = k + bi * k_sb + hk * k_sh;");
        e.line("const T* __restrict__ vb = v + bi * v_sb + hk * v_sh;");
        e.line("const unsigned sK = (unsigned) __cvta_generic_to_shared(lt_smem), sV = sK + BK * D * 2, sQ0 = sV + BK * D * 2, "
                + "sG0 = sQ0 + 2 * BQ * D * 2;");
        e.line("float* fL0 = reinterpret_cast<float*>(lt_smem + (2 * BK + 4 * BQ) * D * 2);  // [2][BQ]: the tiles' lse·log2e");
        e.line("float* fD0 = fL0 + 2 * BQ;                                                  // [2][BQ]: and delta");
        e.line("lt_load_tile<BK>(sK, kb, k_ss, k0, seq_k, tid);");
        e.line("lt_load_tile<BK>(sV, vb, v_ss, k0, seq_k, tid);");
        e.line("lt_cp_commit();");
        e.line("const int nq = (seq_q + BQ - 1) / BQ;");
        e.line("const int qfirst = CAUSAL ? min(k0 / BQ, nq) : 0;  // causal: the first tile that sees key k0");
        e.line("const int per = nq - qfirst, tiles = GROUP * per;  // tile j: head hk * GROUP + j / per, query tile qfirst + j % per");
        e.comment("tile j's Q and dO into buffer bf (one cp.async group); its lse·log2e and delta into nL, nD (threads < BQ),");
        e.comment("stored to the buffer's fL, fD after the current tile's products, so that their latency hides behind them");
        e.line("float nL = 0.f, nD = 0.f;");
        e.line("#define LT_KV_ISSUE(j, bf) do { \\");
        e.line("    const long long hi_ = hk * GROUP + (j) / per; const int i0_ = (qfirst + (j) % per) * BQ; \\");
        e.line("    lt_load_tile<BQ>(sQ0 + (bf) * BQ * D * 2, q + bi * q_sb + hi_ * q_sh, q_ss, i0_, seq_q, tid); \\");
        e.line("    lt_load_tile<BQ>(sG0 + (bf) * BQ * D * 2, dy + bi * dy_sb + hi_ * dy_sh, dy_ss, i0_, seq_q, tid); \\");
        e.line("    lt_cp_commit(); \\");
        e.line("    if (tid < BQ) { \\");
        e.line("        const int row_ = i0_ + tid; const long long rb_ = (bi * heads + hi_) * seq_q; \\");
        e.line("        const float L_ = row_ < seq_q ? lse[rb_ + row_] : -LT_INF; \\");
        e.line("        nL = L_ == -LT_INF ? LT_INF : L_ * LOG2E; \\");
        e.line("        nD = row_ < seq_q ? delta[rb_ + row_] : 0.f; \\");
        e.line("    } } while (0)");
        e.block("if (tiles > 0)", () -> {
            e.line("LT_KV_ISSUE(0, 0);");
            e.block("if (tid < BQ)", () -> {
                e.line("fL0[tid] = nL;");
                e.line("fD0[tid] = nD;");
            });
        });
        e.line("float dk[D / 8][4], dv[D / 8][4];");
        e.unrolled("n", "D / 8", () -> e.line("dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.f;"));
        e.line("const int krow = k0 + warp * 16 + g;  // this thread's keys: krow and krow + 8");
        e.block("for (int j = 0; j < tiles; ++j)", () -> {
            e.line("const int bf = j & 1;");
            e.line("const long long hi = hk * GROUP + j / per;");
            e.line("const int i0 = (qfirst + j % per) * BQ;");
            if (spec.masked()) {
                e.line("const T* __restrict__ amb = amask + bi * amask_sb + hi * amask_sh;");
            }
            e.line("const unsigned sQ = sQ0 + bf * BQ * D * 2, sG = sG0 + bf * BQ * D * 2;");
            e.line("const float* fL = fL0 + bf * BQ;");
            e.line("const float* fD = fD0 + bf * BQ;");
            e.line("__syncthreads();  // every warp is done with tile j - 1, whose buffer tile j + 1 takes");
            e.block("if (j + 1 < tiles)", () -> {
                e.line("LT_KV_ISSUE(j + 1, bf ^ 1);");
                e.line("lt_cp_wait_one();  // every group but tile j + 1's: K, V and tile j have landed");
            });
            e.line("else lt_cp_wait_all();");
            e.line("__syncthreads();");
            e.line("float st[BQ / 8][4], dpt[BQ / 8][4];  // S^T and dP^T: rows = this warp's 16 keys, columns = the tile's queries");
            e.unrolled("n", "BQ / 8", () -> e.line("st[n][0] = st[n][1] = st[n][2] = st[n][3] = dpt[n][0] = dpt[n][1] = dpt[n][2] = dpt[n][3] = 0.f;"));
            e.unrolled("kk", "D / 16", () -> {
                e.line("unsigned ka[4], va[4];");
                e.line("lt_ldsm_x4(LT_A(sK, warp * 16, kk), ka);");
                e.line("lt_ldsm_x4(LT_A(sV, warp * 16, kk), va);");
                e.unrolled("np", "BQ / 16", () -> {
                    e.line("unsigned b[4];");
                    e.line("lt_ldsm_x4(LT_B(sQ, np * 16, kk), b);");
                    e.line("lt_mma(st[2 * np], ka, b[0], b[1]);");
                    e.line("lt_mma(st[2 * np + 1], ka, b[2], b[3]);");
                    e.line("lt_ldsm_x4(LT_B(sG, np * 16, kk), b);");
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
                e.line("const float p = key < seq_k && (!CAUSAL || key <= row) ? exp2f(x - fL[qi]) : 0.f;");
                e.line("st[n][i] = p;");
                e.line("dpt[n][i] = p * (dpt[n][i] - fD[qi]);");
            }));
            e.unrolled("jj", "BQ / 16", () -> {
                e.line("unsigned pa[4], sa[4];");
                e.line("lt_acc_to_a(st[2 * jj], st[2 * jj + 1], pa);");
                e.line("lt_acc_to_a(dpt[2 * jj], dpt[2 * jj + 1], sa);");
                e.unrolled("c", "D / 16", () -> {
                    e.line("unsigned b[4];");
                    e.line("lt_ldsm_x4_t(LT_BT(sG, jj * 16, c), b);");
                    e.line("lt_mma(dv[2 * c], pa, b[0], b[1]);");
                    e.line("lt_mma(dv[2 * c + 1], pa, b[2], b[3]);");
                    e.line("lt_ldsm_x4_t(LT_BT(sQ, jj * 16, c), b);");
                    e.line("lt_mma(dk[2 * c], sa, b[0], b[1]);");
                    e.line("lt_mma(dk[2 * c + 1], sa, b[2], b[3]);");
                });
            });
            e.block("if (tid < BQ && j + 1 < tiles)", () -> {
                e.line("fL0[(bf ^ 1) * BQ + tid] = nL;  // buffer bf ^ 1 was last read by tile j - 1, before this tile's first barrier");
                e.line("fD0[(bf ^ 1) * BQ + tid] = nD;");
            });
        });
        e.line("#undef LT_KV_ISSUE");
        e.line("lt_cp_wait_all();  // causal keys past every query ran no tile: their K/V copies still land before exit");
        e.comment("out [2, b, hk, t, D]: dk at [0], dv one plane after");
        e.line("const long long plane = (long long) (gridDim.x / kblocks) * seq_k * D;");
        e.unrolled("h", "2", () -> {
            e.line("const int key = krow + 8 * h;");
            e.line("T* __restrict__ ob = out + (bh * seq_k + key) * (long long) D;");
            e.block("if (key < seq_k)", () -> e.unrolled("n", "D / 8", () -> {
                e.line("*reinterpret_cast<" + vec2 + "*>(ob + n * 8 + 2 * t4) = " + pack2 + "(dk[n][2 * h] * SCALE, dk[n][2 * h + 1] * SCALE);");
                e.line("*reinterpret_cast<" + vec2 + "*>(ob + plane + n * 8 + 2 * t4) = " + pack2 + "(dv[n][2 * h], dv[n][2 * h + 1]);");
            }));
        });
    }
}
