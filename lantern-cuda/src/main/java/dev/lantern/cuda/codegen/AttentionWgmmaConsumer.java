package dev.lantern.cuda.codegen;

/**
 * The consumers of the warp-specialised wgmma attention kernel: {@code NC} warpgroups, each
 * owning 64 query rows of the CTA's query tile. A consumer waits on a stage's "full" mbarrier,
 * issues its GEMMs ({@link AttentionWgmmaMath}) and arrives on the stage's "empty" barrier once
 * the wgmma that read it has completed, so that the producer may refill it; consumers never
 * wait on each other. With ping-pong the two warpgroups take turns issuing GEMMs (named
 * barriers), so that one's softmax runs while the other's GEMMs hold the tensor cores. With
 * persistent CTAs they walk the query tiles in the producer's order, each key tile at its place
 * in the CTA's ring of stages ({@link AttentionWgmmaRenderer#ring}).
 */
final class AttentionWgmmaConsumer {
    private final AttentionWgmmaRenderer kernel;
    private final AttentionWgmmaMath m;
    private final CudaTarget.WgmmaTile tile;
    private final boolean persistent;
    private final boolean rope;
    private final boolean foldScale;
    private final boolean realloc;
    private final int consumerRegs;

    /**
     * {@code rope}: each warpgroup rotates its Q in place; {@code foldScale}: the softmax scale is
     * folded into exp2; {@code realloc}: the consumers take registers (setmaxnreg) up to
     * {@code consumerRegs}.
     */
    AttentionWgmmaConsumer(AttentionWgmmaRenderer kernel, boolean rope, boolean foldScale, boolean realloc,
                           int consumerRegs) {
        this.kernel = kernel;
        this.m = kernel.math();
        this.tile = kernel.tile();
        this.persistent = kernel.persistent();
        this.rope = rope;
        this.foldScale = foldScale;
        this.realloc = realloc;
        this.consumerRegs = consumerRegs;
    }

    /** The consumers' part of the kernel, after the producer's branch: every query tile of the CTA. */
    void emit(CudaEmitter e) {
        e.comment("consumers: warpgroup wg owns query rows q0 + 64 wg ..");
        if (realloc) {
            e.line("asm volatile(\"setmaxnreg.inc.sync.aligned.u32 " + consumerRegs + ";\\n\" ::: \"memory\");");
        }
        e.line("const int wi = (tid >> 5) & 3;");
        if (!persistent) {
            e.line("const unsigned sQ = sQ0 + wg * QBYTES;");
        }
        e.line("const int g = lane >> 2, t4 = lane & 3;");
        if (persistent) {
            e.line("int it0 = 0, tc = 0;  // the key tiles and query tiles this CTA has done");
            e.block("for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x, ++tc)", () -> {
                kernel.emitTileStart(e);
                emitTile(e);
                e.line("it0 += nk;");
            });
        } else {
            emitTile(e);
        }
    }

    /** The consumers' work on one query tile: Q, the loop over key tiles, the last P V and the store of O. */
    private void emitTile(CudaEmitter e) {
        boolean pingPong = tile.pingPong();
        e.line("const int wq0 = q0 + 64 * wg;  // the warpgroup's first query row");
        e.line("const int qrow = wq0 + wi * 16 + g;  // this thread's rows: qrow and qrow + 8");
        m.emitAccumulators(e);
        if (pingPong) {
            e.comment("ping-pong: a warpgroup issues its GEMMs only in its turn (bar.sync on barrier 1 + wg), then");
            e.comment("hands the turn over (bar.arrive on the other's); warpgroup 0 starts. Each issues nk + 1 times;");
            e.comment("warpgroup 1 skips its last hand-over, so every barrier gets as many arrivals as waits.");
            e.line("if (wg == 1 && nk > 0) lt_bar_arrive<1>();");
        }
        if (persistent) {
            e.line("const unsigned sQ = sQ0 + (tc % QBUF) * NC * QBYTES + wg * QBYTES;  // this tile's Q buffer, this warpgroup's rows");
            e.line("lt_mbar_wait(LT_QF(tc % QBUF), (tc / QBUF) & 1);");
        } else {
            e.line("lt_mbar_wait(LT_QFULL, 0);");
        }
        if (rope) {
            e.block("", () -> {
                e.comment("rotate this warpgroup's Q in place (64 rows x 8 chunk pairs, 4 per thread), then make");
                e.comment("the writes visible to the tensor cores and wait for the whole warpgroup (barrier 3 + wg)");
                e.line("const int ct = tid & 127, c = ct & 7;");
                e.line("float cd[8], sd[8], cs[8], sn[8];");
                e.line("lt_rope_steps(c, cd, sd);");
                e.line("lt_rope_angles((float) (wq0 + (ct >> 3)), c, cs, sn);");
                e.unrolled("it", "4", () -> {
                    e.line("const int r = (ct >> 3) + 16 * it;");
                    e.line("lt_rope_chunk(sQ + r * 128 + ((c ^ (r & 7)) << 4), 8192, cs, sn);");
                    e.line("lt_rope_step(cs, sn, cd, sd);");
                });
                e.line("lt_async_fence();");
                e.line("if (wg == 0) asm volatile(\"bar.sync 3, 128;\\n\" ::: \"memory\"); "
                        + "else asm volatile(\"bar.sync 4, 128;\\n\" ::: \"memory\");");
            });
        }
        e.block("if (nk > 0)", () -> {
            m.emitQFragments(e);
            e.line(persistent ? "lt_mbar_wait(LT_KFULL(it0 % STAGES), (it0 / STAGES) & 1);" : "lt_mbar_wait(LT_KFULL(0), 0);");
            turnBegin(e);
            m.emitScores(e, "LT_KBUF(" + kernel.ring("0") + ")");
            turnEnd(e, false);
            e.line("lt_wgmma_wait<0>();");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
            e.line(persistent ? "lt_mbar_arrive(LT_KEMPTY(it0 % STAGES));" : "lt_mbar_arrive(LT_KEMPTY(0));");
            e.line("const int k0 = 0;");
            m.emitMaskAndSoftmax(e, foldScale);
            m.emitPack(e);
        });
        e.block("for (int kt = 1; kt < nk; ++kt)", () -> {
            String kt = kernel.ring("kt"), prev = kernel.ring("kt - 1");
            e.line("lt_mbar_wait(LT_KFULL(" + kt + " % STAGES), (" + kt + " / STAGES) & 1);");
            turnBegin(e);
            m.emitScores(e, "LT_KBUF(" + kt + ")");
            e.line("lt_mbar_wait(LT_VFULL(" + prev + " % STAGES), (" + prev + " / STAGES) & 1);");
            m.emitPvIssue(e, persistent ? prev : "kt - 1");
            turnEnd(e, false);
            e.line("lt_wgmma_wait<1>();  // S_kt is ready; P V may still run");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
            e.line("lt_mbar_arrive(LT_KEMPTY(" + kt + " % STAGES));");
            e.line("const int k0 = kt * BC;");
            m.emitMaskAndSoftmax(e, foldScale);
            e.line("lt_wgmma_wait<0>();  // O += P_kt-1 V_kt-1 is done");
            m.emitOutputFence(e);
            e.line("lt_mbar_arrive(LT_VEMPTY(" + prev + " % STAGES));");
            m.emitRescale(e);
            m.emitPack(e);
        });
        if (persistent) {
            e.line("lt_mbar_arrive(LT_QE(tc % QBUF));  // every S GEMM of this tile has completed: its Q buffer may be refilled");
        }
        e.block("if (nk > 0)", () -> {
            String last = kernel.ring("nk - 1");
            e.line("lt_mbar_wait(LT_VFULL(" + last + " % STAGES), (" + last + " / STAGES) & 1);");
            turnBegin(e);
            e.line("lt_wgmma_fence();");
            m.emitPvIssue(e, persistent ? last : "nk - 1");
            turnEnd(e, true);
            e.line("lt_wgmma_wait<0>();");
            m.emitOutputFence(e);
            if (persistent) {
                e.line("lt_mbar_arrive(LT_VEMPTY(" + last + " % STAGES));  // the next query tile's copies reuse the stage");
            }
        });
        m.emitEpilogue(e);
    }

    /** Ping-pong: wait for this warpgroup's turn to issue GEMMs. */
    private void turnBegin(CudaEmitter e) {
        if (tile.pingPong()) {
            e.line("if (wg == 0) lt_bar_sync<1>(); else lt_bar_sync<2>();");
        }
    }

    /** Ping-pong: hand the turn to the other warpgroup (warpgroup 1 not after its last issue). */
    private void turnEnd(CudaEmitter e, boolean last) {
        if (tile.pingPong()) {
            e.line(last ? "if (wg == 0) lt_bar_arrive<2>();" : "if (wg == 0) lt_bar_arrive<2>(); else lt_bar_arrive<1>();");
        }
    }
}
