package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * The tensor-core attention kernel (FlashAttention-2 schedule) for head_dim 64 and 128,
 * bf16 or f16, on sm_80+ ({@code mma.sync.m16n8k16}, f32 accumulators).
 *
 * <pre>
 * CTA  = NW warps, BR = 16 * MT * NW query rows; each warp owns MT m16 tiles (16 * MT rows) of S, P, O.
 * smem = Q[BR][D] | K[BC][D] | V[BC][D], bf16, rows of D/8 16-byte chunks, chunk c of row r
 *        stored at c ^ (r % 8) so that ldmatrix's 8 row addresses hit 8 different bank groups.
 * loop over key tiles j (causal: only tiles with a key &lt;= the CTA's last query):
 *   wait K_j; barrier; cp.async V_j          (V_j lands while S is computed)
 *   S = Q K_j^T   (Q fragments in registers when MT = 1, else re-read from smem; K by ldmatrix,
 *                  each K fragment feeding MT MMAs)
 *   mask (only diagonal and ragged tiles), online softmax in f32, log2 domain (scale folded
 *   into the exp2 argument as one FFMA when scale &gt; 0)
 *   wait V_j; barrier; cp.async K_j+1        (K_j+1 lands while P V is computed)
 *   O += P V_j    (P re-packed from the S accumulators, V by ldmatrix.trans)
 * O /= l, stored straight from the accumulators.
 * </pre>
 * Rows past seq_q / keys past seq_k are zero-filled by cp.async (src-size 0) and masked, so
 * any sequence length is served. CTAs walk the query blocks of one (batch, head) together
 * (K/V reuse in L2), the heaviest causal block first.
 */
final class AttentionMmaRenderer {
    private final AttentionSpec spec;
    private final CudaTarget.AttentionTile tile;
    private final String t;

    AttentionMmaRenderer(AttentionSpec spec, CudaTarget target) {
        this.spec = spec;
        this.tile = spec.headDim() == 64 ? target.attention64() : target.attention128();
        this.t = CudaPrelude.cType(spec.dtype());
        int chunks = spec.headDim() / 8;
        int threads = tile.warps() * 32;
        if ((tile.keyTile() * chunks) % threads != 0 || (tile.queryRows() * chunks) % threads != 0) {
            throw new CodegenException(spec.name() + ": attention tile " + tile + " does not divide head_dim "
                    + spec.headDim());
        }
        if (tile.rowTiles() * spec.headDim() > 128) {
            // O alone takes rowTiles * headDim / 2 registers per thread: past 64 the kernel spills (ptxas: 255 + stack)
            throw new CodegenException(spec.name() + ": attention tile " + tile.tag() + " holds " + tile.rowTiles()
                    + " row tiles of head_dim " + spec.headDim() + " in registers; more than 255 per thread");
        }
        int smem = sharedBytes();
        if (smem > target.sharedBytesPerBlock()) {
            throw new CodegenException(spec.name() + ": attention needs " + smem + " bytes of shared memory, "
                    + target.arch() + " allows " + target.sharedBytesPerBlock());
        }
    }

    private int sharedBytes() {
        return (tile.queryRows() + 2 * tile.keyTile() * tile.stages()) * spec.headDim() * 2;
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        int d = spec.headDim();
        int threads = tile.warps() * 32;
        boolean qInRegisters = tile.rowTiles() == 1;
        boolean foldScale = spec.scale() > 0;
        CudaPrelude.emit(e, "attention" + (spec.causal() ? " (causal)" : "") + ", head_dim " + d
                + ", tensor-core path (mma.sync m16n8k16, " + tile.warps() + " warps x " + tile.rowTiles()
                + " row tiles, key tile " + tile.keyTile() + ", " + tile.stages() + " K/V stage(s))");
        String mmaType = spec.dtype() == DType.BF16 ? "bf16" : "f16";
        String pack2 = spec.dtype() == DType.BF16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
        String vec2 = spec.dtype() == DType.BF16 ? "__nv_bfloat162" : "__half2";
        e.linef("constexpr int D = %d, NW = %d, MT = %d, THREADS = NW * 32, BR = 16 * MT * NW, BC = %d, CH = D / 8;",
                d, tile.warps(), tile.rowTiles(), tile.keyTile());
        e.linef("constexpr bool CAUSAL = %s;", spec.causal());
        e.linef("constexpr float SCALE_LOG2 = %s;  // scale * log2(e)",
                ElementwiseRenderer.floatLiteral(spec.scale() * 1.4426950408889634));
        AttentionParams.emitMaskConstant(e, spec, spec.scale() > 0);
        e.line("typedef " + t + " T;");
        e.blank();
        emitHelpers(e, mmaType, pack2, vec2);
        List<KernelParam> params = AttentionParams.of(t, spec);
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(" + threads + ")"), () -> {
            e.line("extern __shared__ __align__(128) unsigned char lt_smem[];");
            e.line("const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;");
            e.line("const int qblocks = (seq_q + BR - 1) / BR;");
            e.line("const long long bh = blockIdx.x / qblocks;");
            e.line("const int q0 = (qblocks - 1 - (int) (blockIdx.x % qblocks)) * BR;  // heaviest causal block first");
            AttentionParams.emitBases(e, "T", spec);
            e.line("const unsigned sQ = (unsigned) __cvta_generic_to_shared(lt_smem);");
            boolean twoStages = tile.stages() == 2;
            if (twoStages) {
                e.line("const unsigned sKV = sQ + BR * D * 2;  // stage s: K at sKV + s * 2 * BC * D * 2, V after it");
            } else {
                e.line("const unsigned sK = sQ + BR * D * 2, sV = sK + BC * D * 2;");
            }
            e.line("int nk = (seq_k + BC - 1) / BC;");
            e.line("if (CAUSAL) nk = min(nk, (q0 + BR + BC - 1) / BC);  // tiles past the last query are fully masked");
            e.line("lt_load_tile<BR>(sQ, qb, q_ss, q0, seq_q, tid);");
            if (twoStages) {
                e.block("if (nk > 0)", () -> {
                    e.line("lt_load_tile<BC>(sKV, kb, k_ss, 0, seq_k, tid);");
                    e.line("lt_load_tile<BC>(sKV + BC * D * 2, vb, v_ss, 0, seq_k, tid);");
                });
            } else {
                e.line("if (nk > 0) lt_load_tile<BC>(sK, kb, k_ss, 0, seq_k, tid);");
            }
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_all();");
            e.line("__syncthreads();");
            e.comment("ldmatrix lane roles: matrix m = lane / 8, row r = lane % 8 within it");
            e.line("const int lm = lane >> 3, lr = lane & 7;");
            e.comment("A-fragment address of (m-tile mt, k-step kk) of this warp's query rows in sQ");
            e.line("#define LT_QADDR(mt, kk) (sQ + (((warp * MT + (mt)) * 16 + (lm & 1) * 8 + lr) * D "
                    + "+ ((((kk) * 2 + (lm >> 1)) ^ lr) << 3)) * 2)");
            if (qInRegisters) {
                e.line("unsigned qf[D / 16][4];  // A fragments of this warp's 16 query rows, kept for the whole loop");
                e.unrolled("kk", "D / 16", () -> e.line("lt_ldsm_x4(LT_QADDR(0, kk), qf[kk]);"));
            }
            e.line("float oacc[MT][D / 8][4];");
            e.unrolled("mt", "MT", () -> e.unrolled("n", "D / 8",
                    () -> e.line("oacc[mt][n][0] = oacc[mt][n][1] = oacc[mt][n][2] = oacc[mt][n][3] = 0.f;")));
            e.line("float mrow[MT][2], lrow[MT][2];");
            e.unrolled("mt", "MT", () -> e.line("mrow[mt][0] = mrow[mt][1] = -LT_INF; lrow[mt][0] = lrow[mt][1] = 0.f;"));
            e.line("const int g = lane >> 2, t4 = lane & 3;");
            e.line("const int qrow = q0 + warp * MT * 16 + g;  // this thread's rows: qrow + 16 mt + 8 h");
            e.block("for (int kt = 0; kt < nk; ++kt)", () -> {
                if (twoStages) {
                    e.line("const unsigned sK = sKV + (kt & 1) * (2 * BC * D * 2), sV = sK + BC * D * 2;");
                    e.block("if (kt + 1 < nk)", () -> {
                        e.line("const unsigned nK = sKV + ((kt + 1) & 1) * (2 * BC * D * 2);");
                        e.line("lt_load_tile<BC>(nK, kb, k_ss, (kt + 1) * BC, seq_k, tid);");
                        e.line("lt_load_tile<BC>(nK + BC * D * 2, vb, v_ss, (kt + 1) * BC, seq_k, tid);");
                        e.line("lt_cp_commit();");
                        e.line("lt_cp_wait_one();  // all but the tile just issued: K_kt and V_kt have landed");
                    });
                    e.block("else", () -> e.line("lt_cp_wait_all();"));
                    e.line("__syncthreads();");
                    emitScores(e, qInRegisters, foldScale);
                    emitSoftmax(e, foldScale);
                    emitPv(e);
                    e.line("__syncthreads();  // every warp is done with this stage before it is refilled");
                } else {
                    e.block("if (kt > 0)", () -> {
                        e.line("lt_cp_wait_all();  // K_kt has landed");
                        e.line("__syncthreads();   // and every warp is done reading V_kt-1");
                    });
                    e.line("lt_load_tile<BC>(sV, vb, v_ss, kt * BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                    emitScores(e, qInRegisters, foldScale);
                    emitSoftmax(e, foldScale);
                    e.line("lt_cp_wait_all();  // V_kt has landed");
                    e.line("__syncthreads();   // and every warp is done reading K_kt");
                    e.block("if (kt + 1 < nk)", () -> {
                        e.line("lt_load_tile<BC>(sK, kb, k_ss, (kt + 1) * BC, seq_k, tid);");
                        e.line("lt_cp_commit();");
                    });
                    emitPv(e);
                }
            });
            emitEpilogue(e, pack2, vec2);
            e.line("#undef LT_QADDR");
        });
        int smem = sharedBytes();
        int br = tile.queryRows();
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + br - 1) / br), threads, smem);
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()), "mma");
    }

    private void emitHelpers(CudaEmitter e, String mmaType, String pack2, String vec2) {
        AttentionParams.emitMmaHelpers(e, tile.stages() == 2, mmaType, pack2, vec2);
        e.blank();
    }

    private void emitScores(CudaEmitter e, boolean qInRegisters, boolean foldScale) {
        e.line("float s[MT][BC / 8][4];");
        e.unrolled("mt", "MT", () -> e.unrolled("n", "BC / 8",
                () -> e.line("s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;")));
        e.unrolled("kk", "D / 16", () -> {
            if (!qInRegisters) {
                e.line("unsigned qa[MT][4];");
                e.unrolled("mt", "MT", () -> e.line("lt_ldsm_x4(LT_QADDR(mt, kk), qa[mt]);"));
            }
            String a = qInRegisters ? "qf[kk]" : "qa[mt]";
            e.unrolled("np", "BC / 16", () -> {
                e.comment("B fragments of two 8-key n-tiles: keys np*16 + (lm/2)*8 + lr, dims kk*16 + (lm%2)*8");
                e.line("const int key = np * 16 + (lm >> 1) * 8 + lr, ch = kk * 2 + (lm & 1);");
                e.line("unsigned b[4];");
                e.line("lt_ldsm_x4(sK + (key * D + ((ch ^ lr) << 3)) * 2, b);");
                e.unrolled("mt", "MT", () -> {
                    e.line("lt_mma(s[mt][2 * np], " + a + ", b[0], b[1]);");
                    e.line("lt_mma(s[mt][2 * np + 1], " + a + ", b[2], b[3]);");
                });
            });
        });
        if (!foldScale) {
            e.unrolled("mt", "MT", () -> e.unrolled("n", "BC / 8",
                    () -> e.unrolled("i", "4", () -> e.line("s[mt][n][i] *= SCALE_LOG2;"))));
        }
        e.line("const int k0 = kt * BC;");
        if (spec.masked()) {
            e.unrolled("mt", "MT", () -> e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () ->
                    AttentionParams.emitMaskAdd(e, spec, "s[mt][n][i]",
                            "const int col = k0 + n * 8 + 2 * t4 + (i & 1), row = qrow + mt * 16 + (i >> 1) * 8;"))));
        }
        e.block("if (k0 + BC > seq_k || (CAUSAL && k0 + BC - 1 > q0))", () -> {
            e.comment("a ragged or diagonal tile: mask keys past seq_k and, causal, keys after the query");
            e.unrolled("mt", "MT", () -> e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> {
                e.line("const int col = k0 + n * 8 + 2 * t4 + (i & 1), row = qrow + mt * 16 + (i >> 1) * 8;");
                e.line("if (col >= seq_k || (CAUSAL && col > row)) s[mt][n][i] = -LT_INF;");
            })));
        });
    }

    private void emitSoftmax(CudaEmitter e, boolean foldScale) {
        e.unrolled("mt", "MT", () -> e.unrolled("h", "2", () -> {
            AttentionParams.emitRowSoftmax(e, "[mt]", "exp2f", "corr", foldScale, true);
            e.unrolled("n", "D / 8", () -> {
                e.line("oacc[mt][n][2 * h] *= corr;");
                e.line("oacc[mt][n][2 * h + 1] *= corr;");
            });
        }));
    }

    private void emitPv(CudaEmitter e) {
        e.unrolled("j", "BC / 16", () -> {
            e.comment("P as A fragments: k-step j covers keys 16j..16j+15 = the S n-tiles 2j and 2j+1");
            e.line("unsigned pa[MT][4];");
            e.unrolled("mt", "MT", () -> {
                e.line("pa[mt][0] = lt_pack(s[mt][2 * j][0], s[mt][2 * j][1]);");
                e.line("pa[mt][1] = lt_pack(s[mt][2 * j][2], s[mt][2 * j][3]);");
                e.line("pa[mt][2] = lt_pack(s[mt][2 * j + 1][0], s[mt][2 * j + 1][1]);");
                e.line("pa[mt][3] = lt_pack(s[mt][2 * j + 1][2], s[mt][2 * j + 1][3]);");
            });
            e.unrolled("dp", "D / 16", () -> {
                e.comment("V fragments (transposed): keys j*16 + (lm%2)*8 + lr, dims dp*16 + (lm/2)*8");
                e.line("const int key = j * 16 + (lm & 1) * 8 + lr, ch = dp * 2 + (lm >> 1);");
                e.line("unsigned b[4];");
                e.line("lt_ldsm_x4_t(sV + (key * D + ((ch ^ lr) << 3)) * 2, b);");
                e.unrolled("mt", "MT", () -> {
                    e.line("lt_mma(oacc[mt][2 * dp], pa[mt], b[0], b[1]);");
                    e.line("lt_mma(oacc[mt][2 * dp + 1], pa[mt], b[2], b[3]);");
                });
            });
        });
    }

    private void emitEpilogue(CudaEmitter e, String pack2, String vec2) {
        e.unrolled("mt", "MT", () -> e.unrolled("h", "2",
                () -> AttentionParams.emitRowStore(e, spec, "[mt]", "qrow + mt * 16 + h * 8", "D / 8", pack2, vec2)));
    }
}
