package dev.lantern.cuda.codegen;

/**
 * What the tensor-core kernels of attention's gradients ({@link AttentionBackwardMmaRenderer},
 * {@link AttentionBackwardWgmmaRenderer}) share around their products: the scale constants, each
 * query row's lse and delta as the exponentials read them, grad_kv's walk over the group's query
 * tiles with their lse and delta staged beside Q and dO, and the stores of dq and of dk;dv. The
 * products between differ (mma.sync fragments, or wgmma from shared memory); the bookkeeping and
 * the summation order are one.
 */
final class AttentionBackwardRows {
    private AttentionBackwardRows() {}

    /** log2(e): the exponentials run as exp2, the lse is stored in nats. */
    static final double LOG2E = 1.4426950408889634;

    /** {@code SCALE}, {@code SCALE_LOG2} (the scale times log2 e) and {@code LOG2E} as constexpr floats. */
    static void scaleConstants(CudaEmitter e, AttentionBackwardSpec spec) {
        e.linef("constexpr float SCALE = %s, SCALE_LOG2 = %s, LOG2E = %s;", ElementwiseRenderer.floatLiteral(spec.scale()),
                ElementwiseRenderer.floatLiteral(spec.scale() * LOG2E), ElementwiseRenderer.floatLiteral(LOG2E));
    }

    /**
     * grad_q's per-thread row constants {@code l2[h]} (lse·log2e; +inf where the row sees no key, so
     * P = 0) and {@code dl[h]} (delta) for the thread's two rows {@code row0 + 8h}.
     */
    static void rowLseDelta(CudaEmitter e, String row0) {
        e.line("float l2[2], dl[2];  // this thread's rows: lse·log2e (+inf: the row sees no key, P = 0) and delta");
        e.unrolled("h", "2", () -> {
            e.line("const int row = " + row0 + " + 8 * h;");
            e.line("const float L = row < seq_q ? lse[bh * seq_q + row] : -LT_INF;");
            e.line("l2[h] = L == -LT_INF ? LT_INF : L * LOG2E;");
            e.line("dl[h] = row < seq_q ? delta[bh * seq_q + row] : 0.f;");
        });
    }

    /**
     * grad_kv's walk: {@code total} query tiles of {@code tile} rows, the group's query heads in order
     * and each head's tiles in order (tile it: head it / per; causal: from the first tile that sees
     * the block's first key k0), one fixed summation order. {@code issue(it, buf)} copies tile it's Q
     * and dO into buffer buf ({@code stride} bytes apart, at sQ and sG) and stages its lse·log2e and
     * delta in fL and fD; tile 0 is issued and committed here.
     */
    static void kvTileWalk(CudaEmitter e, String tile, String stride) {
        kvTileCounts(e, tile);
        e.comment("the group's query heads in order, each head's query tiles in order (tile it: head it / per): one fixed summation order;");
        e.comment("Q, dO, lse and delta of tile it + 1 land in the other buffer while tile it is used");
        e.block("auto issue = [&](int it, int buf)", () -> {
            e.line("const long long hi = hk * GROUP + it / per;");
            e.line("const int i0 = (qs + it % per) * " + tile + ";");
            e.line("const long long rb = (bi * heads + hi) * seq_q;");
            e.line("lt_load_tile<" + tile + ">(sQ + buf * " + stride + ", q + bi * q_sb + hi * q_sh, q_ss, i0, seq_q, tid);");
            e.line("lt_load_tile<" + tile + ">(sG + buf * " + stride + ", dy + bi * dy_sb + hi * dy_sh, dy_ss, i0, seq_q, tid);");
            e.block("if (tid < " + tile + ")", () -> {
                e.line("const int row = i0 + tid;");
                e.line("const float L = row < seq_q ? lse[rb + row] : -LT_INF;");
                e.line("fL[buf * " + tile + " + tid] = L == -LT_INF ? LT_INF : L * LOG2E;");
                e.line("fD[buf * " + tile + " + tid] = row < seq_q ? delta[rb + row] : 0.f;");
            });
        });
        e.line(";");
        e.line("if (total > 0) issue(0, 0);");
        e.line("lt_cp_commit();");
    }

    /**
     * grad_kv's walk as {@link #kvTileWalk} (the same tiles in the same order), for a loop that keeps
     * the current tile's head and tile in {@code ch} and {@code ct} (advanced by {@link #kvTileNext})
     * rather than dividing {@code it}: {@code issue(buf)} copies the next tile ({@code nh}, {@code nt})
     * into buffer buf and loads its lse and delta into registers ({@code nL}, {@code nD}: threads
     * below {@code tile}); {@code stage(buf)} stores them, lse·log2e, into fL and fD an iteration
     * later, once the loads have landed, so no thread waits on them. Tile 0 is issued and committed here.
     */
    static void kvTileWalkCounted(CudaEmitter e, String tile, String stride) {
        kvTileCounts(e, tile);
        e.comment("the group's query heads in order, each head's query tiles in order: one fixed summation order; Q and dO");
        e.comment("of the next tile (head nh, tile nt) land in the other buffer while this one (head ch, tile ct) is used");
        e.line("int nh = 0, nt = 0, ch = 0, ct = 0;");
        e.line("float nL = -LT_INF, nD = 0.f;  // the next tile's lse and delta of row tid, staged an iteration after their loads");
        e.block("auto issue = [&](int buf)", () -> {
            e.line("const long long hi = hk * GROUP + nh;");
            e.line("const int i0 = (qs + nt) * " + tile + ";");
            e.line("lt_load_tile<" + tile + ">(sQ + buf * " + stride + ", q + bi * q_sb + hi * q_sh, q_ss, i0, seq_q, tid);");
            e.line("lt_load_tile<" + tile + ">(sG + buf * " + stride + ", dy + bi * dy_sb + hi * dy_sh, dy_ss, i0, seq_q, tid);");
            e.block("if (tid < " + tile + ")", () -> {
                e.line("const int row = i0 + tid;");
                e.line("const long long rb = (bi * heads + hi) * seq_q;");
                e.line("nL = row < seq_q ? lse[rb + row] : -LT_INF;");
                e.line("nD = row < seq_q ? delta[rb + row] : 0.f;");
            });
            e.line("if (++nt == per) { nt = 0; ++nh; }");
        });
        e.line(";");
        e.block("auto stage = [&](int buf)", () -> e.block("if (tid < " + tile + ")", () -> {
            e.line("fL[buf * " + tile + " + tid] = nL == -LT_INF ? LT_INF : nL * LOG2E;");
            e.line("fD[buf * " + tile + " + tid] = nD;");
        }));
        e.line(";");
        e.line("if (total > 0) issue(0);");
        e.line("lt_cp_commit();");
    }

    /** The end of a {@link #kvTileWalkCounted} loop's body: the current tile's head and tile move on. */
    static void kvTileNext(CudaEmitter e) {
        e.line("if (++ct == per) { ct = 0; ++ch; }");
    }

    /** grad_kv's tile counts: nq tiles of a head, the first one qs (causal), per a head, total over the group. */
    private static void kvTileCounts(CudaEmitter e, String tile) {
        e.line("const int nq = (seq_q + " + tile + " - 1) / " + tile + ";");
        e.line("const int qs = CAUSAL ? k0 / " + tile + " : 0;  // causal: the first tile that sees the block's first key");
        e.line("const int per = nq > qs ? nq - qs : 0, total = GROUP * per;");
    }

    /** grad_q's store: the thread's rows {@code row0 + 8h} of dq times the scale, D / 8 column pairs each. */
    static void storeDq(CudaEmitter e, String row0, String pack2, String vec2) {
        storeDq(e, row0, pack2, vec2, "out");
    }

    /** As above, into the pointer named {@code out}. */
    static void storeDq(CudaEmitter e, String row0, String pack2, String vec2, String out) {
        e.unrolled("h", "2", () -> {
            e.line("const int row = " + row0 + " + 8 * h;");
            e.line("T* __restrict__ ob = " + out + " + (bh * seq_q + row) * (long long) D;");
            e.block("if (row < seq_q)", () -> e.unrolled("n", "D / 8", () ->
                    e.line("*reinterpret_cast<" + vec2 + "*>(ob + n * 8 + 2 * t4) = " + pack2
                            + "(dq[n][2 * h] * SCALE, dq[n][2 * h + 1] * SCALE);")));
        });
    }

    /** grad_kv's store into out [2, b, hk, t, D]: dk (times the scale) at [0], dv one plane after, the thread's keys krow + 8h. */
    static void storeDkDv(CudaEmitter e, String pack2, String vec2) {
        storeDkDv(e, pack2, vec2, false);
    }

    /** As above; with {@code planeArg} the distance from dk's plane to dv's is the kernel's {@code plane} argument (a launch over part of the batch). */
    static void storeDkDv(CudaEmitter e, String pack2, String vec2, boolean planeArg) {
        e.line("lt_cp_wait_all();  // causal keys past every query ran no tile: their K/V copies still land before exit");
        e.comment("out [2, b, hk, t, D]: dk at [0], dv one plane after");
        if (!planeArg) {
            e.line("const long long plane = (long long) (gridDim.x / kblocks) * seq_k * D;");
        }
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
