package dev.lantern.cuda.codegen;

/**
 * One consumer warpgroup's arithmetic on a key tile, the same in both wgmma attention kernels:
 * the accumulators, S = Q K^T and O += P V issued on {@code wgmma}, the mask and the online
 * softmax of S in f32 (log2 domain), O's rescale, P packed to 16-bit A fragments, and the final
 * O / l store. Each method writes straight-line code; the kernels decide when it runs and
 * which barrier or wait surrounds it.
 *
 * <pre>
 * oacc[16][4]     O, 64 rows x 128 dims per warpgroup (m64n128 accumulator layout)
 * s[BC / 8][4]    S of one key tile (m64nBC); pa[BC / 16][4] the same as P, packed
 * mrow[2], lrow[2] the running max and sum of the thread's rows qrow and qrow + 8
 * </pre>
 */
final class AttentionWgmmaMath {
    private final AttentionSpec spec;
    private final CudaTarget.WgmmaTile tile;
    private final String pack2;
    private final String vec2;

    AttentionWgmmaMath(AttentionSpec spec, CudaTarget.WgmmaTile tile, String pack2, String vec2) {
        this.spec = spec;
        this.tile = tile;
        this.pack2 = pack2;
        this.vec2 = vec2;
    }

    /** The accumulators and softmax state of one warpgroup (and Q's fragments when they stay in registers). */
    void emitAccumulators(CudaEmitter e) {
        e.line("float oacc[16][4];");
        e.unrolled("n", "16", () -> e.line("oacc[n][0] = oacc[n][1] = oacc[n][2] = oacc[n][3] = 0.f;"));
        e.line("float mrow[2] = {-LT_INF, -LT_INF}, lrow[2] = {0.f, 0.f};");
        e.line("float s[BC / 8][4];");
        e.line("unsigned pa[BC / 16][4];");
        if (tile.qInRegisters()) {
            e.line("unsigned qf[8][4];");
        }
    }

    /** With Q in registers: its A fragments, read once from shared memory. */
    void emitQFragments(CudaEmitter e) {
        if (!tile.qInRegisters()) {
            return;
        }
        e.comment("Q as wgmma A fragments, kept for the whole loop: ldmatrix x4 of rows wi*16.., dims 16kk..");
        e.unrolled("kk", "8", () -> {
            e.line("const int r = wi * 16 + ((lane >> 3) & 1) * 8 + (lane & 7), c = kk * 2 + (lane >> 4);");
            e.line("lt_ldsm_x4(sQ + (c >> 3) * 8192 + r * 128 + (((c & 7) ^ (r & 7)) << 4), qf[kk]);");
        });
    }

    /** Issues O += P V of key tile {@code keyTile} (BC / 16 k-steps of 16 keys, 2048 bytes of V each) and commits it. */
    void emitPvIssue(CudaEmitter e, String keyTile) {
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(oacc, pa[j], LT_VDESC(LT_VBUF(" + keyTile + ") + j * 2048), true);"));
        e.line("lt_wgmma_commit();");
    }

    void emitOutputFence(CudaEmitter e) {
        e.unrolled("n", "16", () -> e.line("lt_reg_fence(oacc[n]);"));
    }

    /** O *= exp(m_old - m_new), row by row. */
    void emitRescale(CudaEmitter e) {
        e.unrolled("n", "16", () -> {
            e.line("oacc[n][0] *= corr[0]; oacc[n][1] *= corr[0];");
            e.line("oacc[n][2] *= corr[1]; oacc[n][3] *= corr[1];");
        });
    }

    /** Issues S = Q K^T (8 k-steps of 16 dims; k-step kk at byte 32 (kk % 4) of half kk / 4) and commits it. */
    void emitScores(CudaEmitter e, String kbuf) {
        e.line("lt_wgmma_fence();");
        String a = tile.qInRegisters() ? "qf[kk]" : "lt_desc(sQ + (kk >> 2) * 8192 + (kk & 3) * 32, 16, 1024)";
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(s, " + a + ", "
                + "lt_desc(" + kbuf + " + (kk >> 2) * HALF + (kk & 3) * 32, 16, 1024), kk > 0);"));
        e.line("lt_wgmma_commit();");
    }

    /** P as wgmma A fragments: k-step j covers keys 16j..16j+15 = the S n-tiles 2j and 2j+1. */
    void emitPack(CudaEmitter e) {
        e.unrolled("j", "BC / 16", () -> {
            e.line("pa[j][0] = lt_pack(s[2 * j][0], s[2 * j][1]);");
            e.line("pa[j][1] = lt_pack(s[2 * j][2], s[2 * j][3]);");
            e.line("pa[j][2] = lt_pack(s[2 * j + 1][0], s[2 * j + 1][1]);");
            e.line("pa[j][3] = lt_pack(s[2 * j + 1][2], s[2 * j + 1][3]);");
        });
    }

    /**
     * Masks S of the key tile at {@code k0} where it is ragged or on the diagonal, then runs the
     * online softmax of both rows ({@code corr} = exp(m_old - m_new)); {@code foldScale}: the scale
     * is folded into the exp2 argument, else S is scaled first.
     */
    void emitMaskAndSoftmax(CudaEmitter e, boolean foldScale) {
        if (!foldScale) {
            e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> e.line("s[n][i] *= SCALE_LOG2;")));
        }
        e.line("float corr[2];");
        if (spec.masked()) {
            e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> AttentionParams.emitMaskAdd(e, spec, "s[n][i]",
                    "const int col = k0 + n * 8 + 2 * t4 + (i & 1), row = qrow + (i >> 1) * 8;")));
        }
        e.block("if (k0 + BC > seq_k || (CAUSAL && k0 + BC - 1 > wq0))", () -> {
            e.comment("a ragged or diagonal tile: mask keys past seq_k and, causal, keys after the query");
            e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> {
                e.line("const int col = k0 + n * 8 + 2 * t4 + (i & 1), row = qrow + (i >> 1) * 8;");
                e.line("if (col >= seq_k || (CAUSAL && col > row)) s[n][i] = -LT_INF;");
            }));
        });
        e.unrolled("h", "2", () -> AttentionParams.emitRowSoftmax(e, "", "lt_exp2", "corr[h]", foldScale, false));
    }

    /** O / l, stored straight from the accumulators, two rows per thread. */
    void emitEpilogue(CudaEmitter e) {
        e.unrolled("h", "2", () -> AttentionParams.emitRowStore(e, spec, "", "qrow + h * 8", "16", pack2, vec2));
    }
}
