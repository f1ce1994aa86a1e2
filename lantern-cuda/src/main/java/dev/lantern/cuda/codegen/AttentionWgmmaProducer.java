package dev.lantern.cuda.codegen;

/**
 * The producer of the warp-specialised wgmma attention kernel: warpgroup {@code NC} (one warp,
 * or with two consumers and TMA a whole warpgroup) copies Q and every K and V tile into their
 * stages and signals the consumers on the stages' "full" mbarriers, never computing attention
 * itself. With TMA one thread issues tensor copies that complete on the barrier (expect_tx);
 * with cp.async the warp waits for its own copies, fences them for the tensor cores and
 * arrives. Persistent CTAs walk their query tiles here in the same order as the consumers.
 * With RoPE on the keys the producer warpgroup also rotates each K tile once it lands.
 */
final class AttentionWgmmaProducer {
    private final AttentionWgmmaRenderer kernel;
    private final CudaTarget.WgmmaTile tile;
    private final boolean persistent;
    private final boolean realloc;
    private final int producerRegs;
    private final boolean ropeK;
    private final int group;

    /**
     * {@code realloc}: the producer is a warpgroup that gives registers back (setmaxnreg) down to
     * {@code producerRegs}; {@code ropeK}: it rotates the K tiles.
     */
    AttentionWgmmaProducer(AttentionWgmmaRenderer kernel, boolean realloc, int producerRegs, boolean ropeK) {
        this.kernel = kernel;
        this.tile = kernel.tile();
        this.persistent = kernel.persistent();
        this.realloc = realloc;
        this.producerRegs = producerRegs;
        this.ropeK = ropeK;
        this.group = kernel.spec().group();
    }

    /** The producer's branch ({@code if (wg == NC)}), which returns when its copies are issued. */
    void emit(CudaEmitter e) {
        if (tile.tma()) {
            e.block("if (wg == NC)", () -> emitTma(e));
        } else {
            e.block("if (wg == NC)", () -> emitCpAsync(e));
        }
    }

    /** TMA: thread NC * 128 issues every copy; with RoPE on the keys the whole warpgroup rotates K too. */
    private void emitTma(CudaEmitter e) {
        e.comment("producer: one thread issues the tensor copies; each full barrier expects the tile's bytes");
        if (realloc) {
            e.line("asm volatile(\"setmaxnreg.dec.sync.aligned.u32 " + producerRegs + ";\\n\" ::: \"memory\");");
        }
        if (ropeK) {
            emitRopeProducer(e);
            e.line("return;");
            return;
        }
        e.block("if (tid == NC * 128)", () -> {
            if (!persistent) {
                e.line(headCoordinates());
                emitQCopy(e, "sQ0", "LT_QFULL");
                e.block("for (int j = 0; j < nk; ++j)", () -> emitTileCopies(e, "LT_KFULL"));
                return;
            }
            e.line("int it0 = 0, tc = 0;  // the key tiles and query tiles this CTA has done");
            e.block("for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x, ++tc)", () -> {
                kernel.emitTileStart(e);
                e.line(headCoordinates());
                e.line("const int qb = tc % QBUF;");
                e.line("if (tc >= QBUF) lt_mbar_wait(LT_QE(qb), ((tc / QBUF) - 1) & 1);  // no consumer reads the buffer's last Q");
                emitQCopy(e, "sQ0 + qb * NC * QBYTES", "LT_QF(qb)");
                e.block("for (int j = 0; j < nk; ++j)", () -> emitTileCopies(e, "LT_KFULL"));
                e.line("it0 += nk;");
            });
        });
        e.line("return;");
    }

    /** cp.async: copy, wait for its own copies, proxy fence, arrive on the full barrier. */
    private void emitCpAsync(CudaEmitter e) {
        e.comment("producer: copy, wait for its own copies, proxy fence, arrive on the full barrier");
        e.unrolled("w", "NC", () -> e.line("lt_load_tile<64, 32>(sQ0 + w * QBYTES, qb, q_ss, q0 + 64 * w, seq_q, lane);"));
        e.line("lt_cp_commit();");
        e.block("for (int j = 0; j < nk; ++j)", () -> {
            e.line("const unsigned ph = ((j / STAGES) - 1) & 1;  // the release of tile j - STAGES");
            e.line("if (j >= STAGES) lt_mbar_wait(LT_KEMPTY(j % STAGES), ph);");
            e.line("lt_load_tile<BC, 32>(LT_KBUF(j), kb, k_ss, j * BC, seq_k, lane);");
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_one();  // all but K_j: Q (j = 0) or V_j-1");
            e.line("lt_async_fence();");
            e.line("lt_mbar_arrive(j == 0 ? LT_QFULL : LT_VFULL((j - 1) % STAGES));");
            e.line("if (j >= STAGES) lt_mbar_wait(LT_VEMPTY(j % STAGES), ph);");
            e.line("lt_load_tile<BC, 32>(LT_VBUF(j), vb, v_ss, j * BC, seq_k, lane);");
            e.line("lt_cp_commit();");
            e.line("lt_cp_wait_one();  // K_j");
            e.line("lt_async_fence();");
            e.line("lt_mbar_arrive(LT_KFULL(j % STAGES));");
        });
        e.line("lt_cp_wait_all();");
        e.line("lt_async_fence();");
        e.line("lt_mbar_arrive(nk > 0 ? LT_VFULL((nk - 1) % STAGES) : LT_QFULL);");
        e.line("return;");
    }

    /**
     * RoPE: the producer warpgroup. Thread 0 issues the copies (K into its raw barrier, V into
     * its full one) one tile ahead of the rotation; every thread waits for the K tile before, rotates its 8 chunk
     * pairs of it (rows (ptid / 8) + 16 i, chunk ptid % 8), fences the writes for the tensor
     * cores, and arrives on K's full barrier, which the consumers wait on (count 128).
     */
    private void emitRopeProducer(CudaEmitter e) {
        e.line("const int ptid = tid - NC * 128, c = ptid & 7;");
        e.line(headCoordinates());
        e.block("if (ptid == 0)", () -> emitQCopy(e, "sQ0", "LT_QFULL"));
        e.line("float cd[8], sd[8], cs[8], sn[8];");
        e.line("lt_rope_steps(c, cd, sd);");
        e.comment("iteration j: rotate K_j-1, then (thread 0) copy K_j and V_j. Thread 0's waits for free stages");
        e.comment("come after its share of the rotation, so they never hold K_j-1 back; K_j lands during a tile");
        e.block("for (int j = 0; j <= nk; ++j)", () -> {
            e.block("if (j > 0)", () -> {
                e.line("const int t = j - 1;");
                e.line("lt_rope_angles((float) (t * BC + (ptid >> 3)), c, cs, sn);");
                e.line("lt_mbar_wait(LT_KRAW(t % STAGES), (t / STAGES) & 1);");
                e.unrolled("it", "BC / 16", () -> {
                    e.line("const int r = (ptid >> 3) + 16 * it;");
                    e.line("lt_rope_chunk(LT_KBUF(t) + r * 128 + ((c ^ (r & 7)) << 4), HALF, cs, sn);");
                    e.line("lt_rope_step(cs, sn, cd, sd);");
                });
                e.line("lt_async_fence();");
                e.line("lt_mbar_arrive(LT_KFULL(t % STAGES));");
            });
            e.block("if (ptid == 0 && j < nk)", () -> emitTileCopies(e, "LT_KRAW"));
        });
    }

    /** The TMA head coordinates: hi32 for Q, hk32 (the K/V head, hi / group) for K and V when grouped. */
    private String headCoordinates() {
        return "const int hi32 = (int) hi, bi32 = (int) bi" + (group > 1 ? ", hk32 = (int) hkv;" : ";");
    }

    /** TMA: Q of every consumer warpgroup (two 64-column halves each), completing on the Q barrier. */
    private static void emitQCopy(CudaEmitter e, String base, String barrier) {
        e.line("lt_mbar_expect(" + barrier + ", NC * QBYTES);");
        e.unrolled("w", "NC", () -> {
            e.line("lt_tma_load(" + base + " + w * QBYTES, &tm_q_64, 0, q0 + 64 * w, hi32, bi32, " + barrier + ");");
            e.line("lt_tma_load(" + base + " + w * QBYTES + 8192, &tm_q_64, 64, q0 + 64 * w, hi32, bi32, " + barrier + ");");
        });
    }

    /**
     * TMA: K_j (completing on {@code kBarrier}) and V_j into their stage, each once the stage is free
     * again; the stage is key tile j's place in the CTA's ring ({@link AttentionWgmmaRenderer#ring}).
     */
    private void emitTileCopies(CudaEmitter e, String kBarrier) {
        String k = "&" + AttentionParams.tensorMap("k", tile.keyTile(), group);
        String v = "&" + AttentionParams.tensorMap("v", tile.keyTile(), group);
        String kvHead = group > 1 ? "hk32" : "hi32";
        String r = kernel.ring("j");
        e.line("const unsigned ph = ((" + r + " / STAGES) - 1) & 1;  // the release of tile j - STAGES");
        e.line("if (" + r + " >= STAGES) lt_mbar_wait(LT_KEMPTY(" + r + " % STAGES), ph);");
        e.line("lt_mbar_expect(" + kBarrier + "(" + r + " % STAGES), TBYTES);");
        e.line("lt_tma_load(LT_KBUF(" + r + "), " + k + ", 0, j * BC, " + kvHead + ", bi32, " + kBarrier + "(" + r + " % STAGES));");
        e.line("lt_tma_load(LT_KBUF(" + r + ") + HALF, " + k + ", 64, j * BC, " + kvHead + ", bi32, " + kBarrier + "(" + r + " % STAGES));");
        e.line("if (" + r + " >= STAGES) lt_mbar_wait(LT_VEMPTY(" + r + " % STAGES), ph);");
        e.line("lt_mbar_expect(LT_VFULL(" + r + " % STAGES), TBYTES);");
        e.line("lt_tma_load(LT_VBUF(" + r + "), " + v + ", 0, j * BC, " + kvHead + ", bi32, LT_VFULL(" + r + " % STAGES));");
        e.line("lt_tma_load(LT_VBUF(" + r + ") + HALF, " + v + ", 64, j * BC, " + kvHead + ", bi32, LT_VFULL(" + r + " % STAGES));");
    }
}
