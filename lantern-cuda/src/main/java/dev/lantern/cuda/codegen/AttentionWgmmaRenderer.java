package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.List;

/**
 * The Hopper attention kernel for head_dim 128, bf16 or f16, on sm_90a: both matrix products on
 * {@code wgmma} (warpgroup MMA, f32 accumulators in registers), K and V read by the tensor cores
 * straight from 128-byte-swizzled shared memory.
 *
 * <pre>
 * CTA  = one warpgroup (128 threads), 64 query rows q0..; several CTAs per SM overlap each other
 * smem = Q[2][64][64] | K stages [2][BC][64] | V stages [2][BC][64]   (bf16, 1024-byte aligned)
 *        every tile stored as two column halves of 64 elements: rows of 128 bytes, 16-byte chunk
 *        c of row r at c ^ (r % 8) (the SW128 pattern wgmma's descriptors name)
 * S = Q K^T      wgmma m64nBCk16, A and B from shared memory (both K-major), 8 k-steps
 * O += P V       wgmma m64n128k16, P from registers (re-packed S accumulators), V from shared
 *                memory read N-major (transposed by the descriptor), BC / 16 k-steps
 * prologue: S_0, its softmax, P_0
 * loop over key tiles j = 1.. (causal: only tiles with a key &lt;= the CTA's last query):
 *   issue S_j = Q K_j^T, then O += P_j-1 V_j-1 (both async); wait for S_j only
 *   mask (diagonal and ragged tiles), online softmax of S_j in f32, log2 domain, while P V runs
 *   wait for P V; O *= exp(m_old - m_new); P_j = S_j packed to bf16
 *   (two stages: K_j+1 and V_j load during tile j; one stage: each reloads as soon as its
 *   buffer's wgmma is done)
 * epilogue: O += P V of the last tile; O /= l, stored straight from the accumulators.
 * </pre>
 * Rows past seq_q / keys past seq_k are zero-filled by cp.async and masked, so any sequence
 * length is served. The same argument list as the mma.sync kernel ({@link AttentionParams}).
 */
final class AttentionWgmmaRenderer {
    private final AttentionSpec spec;
    private final CudaTarget.WgmmaTile tile;
    private final int smCount;
    private final String t;
    private final String mmaType;
    private final String pack2;
    private final String vec2;
    private final boolean persistent;

    AttentionWgmmaRenderer(AttentionSpec spec, CudaTarget target) {
        this.spec = spec;
        this.tile = target.wgmmaAttention();
        this.smCount = target.smCount();
        this.t = CudaPrelude.cType(spec.dtype());
        boolean bf16 = spec.dtype() == DType.BF16;
        this.mmaType = bf16 ? "bf16" : "f16";
        this.pack2 = bf16 ? "__floats2bfloat162_rn" : "__floats2half2_rn";
        this.vec2 = bf16 ? "__nv_bfloat162" : "__half2";
        this.persistent = tile.persistent();
        if (spec.headDim() != 128) {
            throw new CodegenException(spec.name() + ": the wgmma attention kernel needs head_dim 128, got "
                    + spec.headDim());
        }
        if (sharedBytes() > target.sharedBytesPerBlock()) {
            throw new CodegenException(spec.name() + ": attention needs " + sharedBytes()
                    + " bytes of shared memory, " + target.arch() + " allows " + target.sharedBytesPerBlock());
        }
    }

    /** Q, the K and V stages, and 1 KiB of slack to align the swizzle atoms to 1024 bytes. */
    int sharedBytes() {
        int barriers = tile.consumers() > 0 ? 128 : 0;
        return tile.qBuffers() * Math.max(1, tile.consumers()) * 64 * 256 + tile.stages() * 2 * tile.keyTile() * 256
                + 1024 + barriers;
    }

    CudaKernelSource render() {
        return tile.consumers() > 0 ? renderSpecialized() : renderPlain();
    }

    /**
     * Key tile {@code j}'s place in the CTA's ring of K and V stages: j itself, or with persistent
     * CTAs {@code it0 + j}, it0 counting the key tiles of the CTA's earlier query tiles.
     */
    private String ring(String j) {
        return persistent ? "(it0 + " + j + ")" : j.contains(" ") ? "(" + j + ")" : j;
    }

    /**
     * Persistent CTAs: how many to launch for {@code tiles} query tiles, {@code qblocks} of them per
     * (batch, head). CTA c walks tiles c, c + grid, ...; a causal tile's work falls with its index in
     * the head, so the grid is kept coprime to qblocks and every CTA meets every index in turn.
     */
    static long persistentGrid(long tiles, long qblocks, int slots, boolean causal) {
        long g = Math.min(tiles, slots);
        while (causal && g > 1 && g < tiles && gcd(g, qblocks) != 1) {
            g--;
        }
        return Math.max(1, g);
    }

    private static long gcd(long a, long b) {
        return b == 0 ? a : gcd(b, a % b);
    }

    private CudaKernelSource renderPlain() {
        CudaEmitter e = new CudaEmitter();
        int threads = 128;
        emitHeader(e, "wgmma, one warpgroup, key tile " + tile.keyTile() + ", " + tile.stages() + " K and V stage(s), "
                        + tile.minBlocks() + " CTA(s) per SM" + (tile.qInRegisters() ? ", Q in registers" : ""),
                String.format("constexpr int THREADS = 128, BR = 64, BC = %d, STAGES = %d;", tile.keyTile(), tile.stages()),
                "Q; one K or V tile");
        List<KernelParam> params = AttentionParams.of(t);
        boolean foldScale = spec.scale() > 0;
        boolean two = tile.stages() == 2;
        e.block(AttentionParams.signature(spec.name(), params,
                "__launch_bounds__(" + threads + ", " + tile.minBlocks() + ")"), () -> {
            e.line("extern __shared__ __align__(1024) unsigned char lt_smem[];");
            e.line("const int tid = threadIdx.x, lane = tid & 31, wi = tid >> 5;");
            e.line("const int qblocks = (seq_q + BR - 1) / BR;");
            e.line("const long long bh = blockIdx.x / qblocks;");
            e.line("const int q0 = (qblocks - 1 - (int) (blockIdx.x % qblocks)) * BR;  // heaviest causal block first");
            AttentionParams.emitBases(e, "T");
            e.line("const unsigned sbase = ((unsigned) __cvta_generic_to_shared(lt_smem) + 1023u) & ~1023u;");
            e.line("const unsigned sQ = sbase, sK0 = sQ + QBYTES, sV0 = sK0 + STAGES * TBYTES;  // stage s at + s * TBYTES");
            e.line("#define LT_KBUF(j) (sK0 + (STAGES == 2 ? ((j) & 1) * TBYTES : 0))");
            e.line("#define LT_VBUF(j) (sV0 + (STAGES == 2 ? ((j) & 1) * TBYTES : 0))");
            e.line("int nk = (seq_k + BC - 1) / BC;");
            e.line("if (CAUSAL) nk = min(nk, (q0 + BR + BC - 1) / BC);  // tiles past the last query are fully masked");
            e.line("const int g = lane >> 2, t4 = lane & 3;");
            e.line("const int wq0 = q0;  // the warpgroup's first query row");
            e.line("const int qrow = q0 + wi * 16 + g;  // this thread's rows: qrow and qrow + 8");
            emitAccumulators(e);
            e.block("if (nk > 0)", () -> {
                e.comment("prologue: Q and K_0, then V_0; S_0 and its softmax (O is still zero)");
                e.line("lt_load_tile<64>(sQ, qb, q_ss, q0, seq_q, tid);");
                e.line("lt_load_tile<BC>(LT_KBUF(0), kb, k_ss, 0, seq_k, tid);");
                e.line("lt_cp_commit();");
                e.line("lt_load_tile<BC>(LT_VBUF(0), vb, v_ss, 0, seq_k, tid);");
                if (two) {
                    e.line("if (nk > 1) lt_load_tile<BC>(LT_KBUF(1), kb, k_ss, BC, seq_k, tid);");
                }
                e.line("lt_cp_commit();");
                e.line("lt_cp_wait_one();  // Q and K_0");
                e.line("lt_async_fence();");
                e.line("__syncthreads();");
                emitQFragments(e);
                emitScores(e, "LT_KBUF(0)");
                e.line("lt_wgmma_wait<0>();");
                e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
                if (!two) {
                    e.line("__syncthreads();  // every warp's S_0 is done: K's buffer is free");
                    e.line("if (nk > 1) lt_load_tile<BC>(LT_KBUF(1), kb, k_ss, BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                }
                e.line("const int k0 = 0;");
                emitMaskAndSoftmax(e, foldScale);
                emitPack(e);
            });
            e.block("for (int kt = 1; kt < nk; ++kt)", () -> {
                e.comment("S_kt = Q K_kt^T and O += P_kt-1 V_kt-1 on the tensor cores while the softmax of S_kt runs");
                if (two) {
                    e.line("lt_cp_wait_all();  // K_kt and V_kt-1 (issued one iteration ago)");
                    e.line("lt_async_fence();");
                    e.line("__syncthreads();   // ... landed for every thread, and tile kt-1's reads are done");
                    e.block("if (kt + 1 < nk)", () -> e.line("lt_load_tile<BC>(LT_KBUF(kt + 1), kb, k_ss, (kt + 1) * BC, seq_k, tid);"));
                    e.line("lt_load_tile<BC>(LT_VBUF(kt), vb, v_ss, kt * BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                } else {
                    e.line("lt_cp_wait_all();  // K_kt and V_kt-1");
                    e.line("lt_async_fence();");
                    e.line("__syncthreads();");
                }
                emitScores(e, "LT_KBUF(kt)");
                e.line("lt_wgmma_fence();");
                emitPvIssue(e, "kt - 1");
                e.line("lt_wgmma_wait<1>();  // S_kt is ready; P V may still run");
                e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
                if (!two) {
                    e.line("__syncthreads();  // every warp's S_kt is done: K's buffer is free");
                    e.line("if (kt + 1 < nk) lt_load_tile<BC>(LT_KBUF(kt + 1), kb, k_ss, (kt + 1) * BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                }
                e.line("const int k0 = kt * BC;");
                emitMaskAndSoftmax(e, foldScale);
                e.line("lt_wgmma_wait<0>();  // O += P_kt-1 V_kt-1 is done");
                emitOutputFence(e);
                emitRescale(e);
                if (!two) {
                    e.line("__syncthreads();  // every warp's P V is done: V's buffer is free");
                    e.line("lt_load_tile<BC>(LT_VBUF(kt), vb, v_ss, kt * BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                }
                emitPack(e);
            });
            e.block("if (nk > 0)", () -> {
                e.comment("epilogue: O += P V of the last tile");
                e.line("lt_cp_wait_all();");
                e.line("lt_async_fence();");
                e.line("__syncthreads();");
                e.line("lt_wgmma_fence();");
                emitPvIssue(e, "nk - 1");
                e.line("lt_wgmma_wait<0>();");
                emitOutputFence(e);
            });
            emitEpilogue(e, pack2, vec2);
            e.line("#undef LT_KBUF");
            e.line("#undef LT_VBUF");
        });
        int smem = sharedBytes();
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + 63) / 64), threads, smem);
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()), "wgmma");
    }

    /**
     * The warp-specialised kernel: {@code NC} consumer warpgroups (64 query rows each, BR = 64 NC)
     * and one producer warp (with TMA and two consumers: a producer warpgroup that gives its
     * registers to the consumers through setmaxnreg) that alone issues the copies of Q, K and V. Stages are
     * handed over through mbarriers: the producer waits for its own copies, makes them visible
     * to the tensor cores (proxy fence) and arrives on the stage's "full" barrier; each consumer
     * thread arrives on the stage's "empty" barrier once the wgmma that read it has completed.
     * No CTA-wide barrier after the set-up, so consumers never wait on each other.
     */
    private CudaKernelSource renderSpecialized() {
        CudaEmitter e = new CudaEmitter();
        int nc = tile.consumers();
        // two consumer warpgroups with TMA: the producer is a whole warpgroup, so that it can hand
        // its registers to the consumers (setmaxnreg is warpgroup-wide): 24 for it, 240 for them
        boolean realloc = nc == 2 && tile.tma();
        // RoPE inside (render() has checked the tile): the consumers rotate their own Q; with
        // ropeKeys the producer warpgroup's threads also rotate each K tile once it lands, and then
        // keep 64 registers
        boolean rope = spec.fusedRope();
        boolean ropeK = rope && spec.ropeKeys();
        int producerRegs = ropeK ? 64 : 24;
        int consumerRegs = ropeK ? 216 : 240;
        int producerThreads = realloc ? 128 : 32;
        int threads = nc * 128 + producerThreads;
        if (realloc) {
            // setmaxnreg.inc waits until the registers the producer gave back cover it; the CTA holds
            // what ptxas allotted at launch (65536 / threads, in 8s), so a larger ask hangs forever
            int launch = 65536 / threads / 8 * 8;
            if (128 * (launch - producerRegs) < nc * 128 * (consumerRegs - launch)) {
                throw new IllegalStateException("setmaxnreg " + producerRegs + "/" + consumerRegs + " over " + launch);
            }
        }
        if (tile.stages() < 2) {
            throw new CodegenException(spec.name() + ": the warp-specialised attention needs two or more stages");
        }
        int barriers = 1 + 4 * tile.stages() + (ropeK ? tile.stages() : 0) + (persistent ? 2 * tile.qBuffers() : 0);
        if (barriers * 8 > 128) {  // the barrier area before the 1024-aligned tiles
            throw new CodegenException(spec.name() + ": " + barriers + " mbarriers do not fit in 128 bytes");
        }
        emitHeader(e, "wgmma, " + nc + " consumer warpgroup(s) + a producer warp, key tile " + tile.keyTile() + ", "
                        + tile.stages() + " K and V stages" + (tile.qInRegisters() ? ", Q in registers" : "")
                        + (tile.tma() ? ", tensor-memory-access copies" : ", cp.async copies")
                        + (tile.pingPong() ? ", ping-pong GEMM issue" : "") + (ropeK ? ", RoPE on q and k" : rope ? ", RoPE on q" : ""),
                String.format("constexpr int NC = %d, THREADS = NC * 128 + %d, BR = 64 * NC, BC = %d, STAGES = %d;",
                        nc, producerThreads, tile.keyTile(), tile.stages()),
                "one warpgroup's Q; one K or V tile");
        WgmmaHelpers.emitMbarriers(e);
        if (rope) {
            WgmmaHelpers.emitRope(e, spec.name() + "_theta", spec.ropeBase());
        }
        boolean pingPong = tile.pingPong();
        if (pingPong) {
            WgmmaHelpers.emitTurnBarriers(e);
        }
        boolean tma = tile.tma();
        if (tma) {
            WgmmaHelpers.emitTma(e);
        }
        e.blank();
        List<KernelParam> params = new java.util.ArrayList<>(AttentionParams.of(t));
        if (tma) {
            params.add(new KernelParam("const __grid_constant__ LtTensorMap", "tm_q_64"));
            params.add(new KernelParam("const __grid_constant__ LtTensorMap", "tm_k_" + tile.keyTile()));
            params.add(new KernelParam("const __grid_constant__ LtTensorMap", "tm_v_" + tile.keyTile()));
        }
        boolean foldScale = spec.scale() > 0;
        e.block(AttentionParams.signature(spec.name(), params,
                "__launch_bounds__(" + threads + ", " + tile.minBlocks() + ")"), () -> {
            e.line("extern __shared__ __align__(1024) unsigned char lt_smem[];");
            e.line("const int tid = threadIdx.x, lane = tid & 31;");
            e.comment("the warpgroup index, broadcast so that ptxas sees it uniform (else it serialises the wgmmas)");
            e.line("const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0);");
            e.line("const int qblocks = (seq_q + BR - 1) / BR;");
            if (persistent) {
                e.linef("const int ntiles = %d * qblocks;  // query tiles: batch x heads x qblocks, walked by the CTAs",
                        spec.batch() * spec.heads());
            } else {
                e.line("const long long bh = blockIdx.x / qblocks;");
                e.line("const int q0 = (qblocks - 1 - (int) (blockIdx.x % qblocks)) * BR;  // heaviest causal block first");
                AttentionParams.emitBases(e, "T", !tma);  // with TMA the tensor maps address Q, K and V
            }
            e.comment("barriers: qfull, kfull[S], vfull[S], kempty[S], vempty[S]" + (ropeK ? ", kraw[S]" : "")
                    + (persistent ? ", then qfull and qempty of each Q buffer" : "") + " (8 bytes each), then the tiles");
            e.line("const unsigned sraw = (unsigned) __cvta_generic_to_shared(lt_smem);");
            e.line("const unsigned bar = sraw, sbase = (sraw + 128 + 1023u) & ~1023u;");
            e.line("#define LT_QFULL (bar)");
            e.line("#define LT_KFULL(s) (bar + 8 + (s) * 8)");
            e.line("#define LT_VFULL(s) (bar + 8 + (STAGES + (s)) * 8)");
            e.line("#define LT_KEMPTY(s) (bar + 8 + (2 * STAGES + (s)) * 8)");
            e.line("#define LT_VEMPTY(s) (bar + 8 + (3 * STAGES + (s)) * 8)");
            if (ropeK) {
                e.line("#define LT_KRAW(s) (bar + 8 + (4 * STAGES + (s)) * 8)  // K landed, not yet rotated");
            }
            if (persistent) {
                e.linef("constexpr int QBUF = %d;  // Q buffers: tile tc uses buffer tc %% QBUF", tile.qBuffers());
                e.line("#define LT_QF(b) (bar + 8 + (4 * STAGES + 2 * (b)) * 8)  // Q buffer b copied");
                e.line("#define LT_QE(b) (bar + 8 + (4 * STAGES + 2 * (b) + 1) * 8)  // the consumers are done with Q buffer b");
            }
            e.line(persistent ? "const unsigned sQ0 = sbase, sK0 = sQ0 + QBUF * NC * QBYTES, sV0 = sK0 + STAGES * TBYTES;"
                    : "const unsigned sQ0 = sbase, sK0 = sQ0 + NC * QBYTES, sV0 = sK0 + STAGES * TBYTES;");
            e.line("#define LT_KBUF(j) (sK0 + ((j) % STAGES) * TBYTES)");
            e.line("#define LT_VBUF(j) (sV0 + ((j) % STAGES) * TBYTES)");
            if (!persistent) {
                emitKeyTiles(e);
            }
            e.line("constexpr unsigned FULL = " + (tma ? "1" : "32") + ";  // arrivals that fill a stage: "
                    + (tma ? "the producer's expect_tx" : "the producer warp's lanes"));
            e.block("if (tid == 0)", () -> {
                e.line("lt_mbar_init(LT_QFULL, FULL);");
                e.block("for (int s = 0; s < STAGES; ++s)", () -> {
                    e.line(ropeK ? "lt_mbar_init(LT_KRAW(s), FULL); lt_mbar_init(LT_KFULL(s), 128); lt_mbar_init(LT_VFULL(s), FULL);"
                            : "lt_mbar_init(LT_KFULL(s), FULL); lt_mbar_init(LT_VFULL(s), FULL);");
                    e.line("lt_mbar_init(LT_KEMPTY(s), NC * 128); lt_mbar_init(LT_VEMPTY(s), NC * 128);");
                });
                if (persistent) {
                    e.line("for (int b = 0; b < QBUF; ++b) { lt_mbar_init(LT_QF(b), FULL); lt_mbar_init(LT_QE(b), NC * 128); }");
                }
            });
            e.line("__syncthreads();");
            if (tma) {
                e.block("if (wg == NC)", () -> {
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
                            e.line("const int hi32 = (int) hi, bi32 = (int) bi;");
                            emitQCopy(e, "sQ0", "LT_QFULL");
                            e.block("for (int j = 0; j < nk; ++j)", () -> emitTileCopies(e, "LT_KFULL"));
                            return;
                        }
                        e.line("int it0 = 0, tc = 0;  // the key tiles and query tiles this CTA has done");
                        e.block("for (int tile = blockIdx.x; tile < ntiles; tile += gridDim.x, ++tc)", () -> {
                            emitTileStart(e);
                            e.line("const int hi32 = (int) hi, bi32 = (int) bi;");
                            e.line("const int qb = tc % QBUF;");
                            e.line("if (tc >= QBUF) lt_mbar_wait(LT_QE(qb), ((tc / QBUF) - 1) & 1);  // no consumer reads the buffer's last Q");
                            emitQCopy(e, "sQ0 + qb * NC * QBYTES", "LT_QF(qb)");
                            e.block("for (int j = 0; j < nk; ++j)", () -> emitTileCopies(e, "LT_KFULL"));
                            e.line("it0 += nk;");
                        });
                    });
                    e.line("return;");
                });
            } else {
            e.block("if (wg == NC)", () -> {
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
            });
            }
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
                    emitTileStart(e);
                    emitConsumerTile(e, rope, foldScale);
                    e.line("it0 += nk;");
                });
            } else {
                emitConsumerTile(e, rope, foldScale);
            }
            for (String m : List.of("LT_QFULL", "LT_KFULL", "LT_VFULL", "LT_KEMPTY", "LT_VEMPTY", "LT_KBUF", "LT_VBUF")) {
                e.line("#undef " + m);
            }
            if (ropeK) {
                e.line("#undef LT_KRAW");
            }
            if (persistent) {
                e.line("#undef LT_QF");
                e.line("#undef LT_QE");
            }
        });
        int smem = sharedBytes();
        int br = 64 * nc;
        int slots = smCount * tile.minBlocks();
        boolean causal = spec.causal();
        LaunchRule rule = size -> {
            long qblocks = (size.get(1) + br - 1) / br;
            long tiles = size.get(0) * qblocks;
            return LaunchConfig.linear(persistent ? persistentGrid(tiles, qblocks, slots, causal) : tiles, threads, smem);
        };
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()), "wgmma");
    }

    /** The consumers' work on one query tile: Q, the loop over key tiles, the last P V and the store of O. */
    private void emitConsumerTile(CudaEmitter e, boolean rope, boolean foldScale) {
        boolean pingPong = tile.pingPong();
        e.line("const int wq0 = q0 + 64 * wg;  // the warpgroup's first query row");
        e.line("const int qrow = wq0 + wi * 16 + g;  // this thread's rows: qrow and qrow + 8");
        emitAccumulators(e);
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
            emitQFragments(e);
            e.line(persistent ? "lt_mbar_wait(LT_KFULL(it0 % STAGES), (it0 / STAGES) & 1);" : "lt_mbar_wait(LT_KFULL(0), 0);");
            turnBegin(e);
            emitScores(e, "LT_KBUF(" + ring("0") + ")");
            turnEnd(e, false);
            e.line("lt_wgmma_wait<0>();");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
            e.line(persistent ? "lt_mbar_arrive(LT_KEMPTY(it0 % STAGES));" : "lt_mbar_arrive(LT_KEMPTY(0));");
            e.line("const int k0 = 0;");
            emitMaskAndSoftmax(e, foldScale);
            emitPack(e);
        });
        e.block("for (int kt = 1; kt < nk; ++kt)", () -> {
            String kt = ring("kt"), prev = ring("kt - 1");
            e.line("lt_mbar_wait(LT_KFULL(" + kt + " % STAGES), (" + kt + " / STAGES) & 1);");
            turnBegin(e);
            emitScores(e, "LT_KBUF(" + kt + ")");
            e.line("lt_mbar_wait(LT_VFULL(" + prev + " % STAGES), (" + prev + " / STAGES) & 1);");
            emitPvIssue(e, persistent ? prev : "kt - 1");
            turnEnd(e, false);
            e.line("lt_wgmma_wait<1>();  // S_kt is ready; P V may still run");
            e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
            e.line("lt_mbar_arrive(LT_KEMPTY(" + kt + " % STAGES));");
            e.line("const int k0 = kt * BC;");
            emitMaskAndSoftmax(e, foldScale);
            e.line("lt_wgmma_wait<0>();  // O += P_kt-1 V_kt-1 is done");
            emitOutputFence(e);
            e.line("lt_mbar_arrive(LT_VEMPTY(" + prev + " % STAGES));");
            emitRescale(e);
            emitPack(e);
        });
        if (persistent) {
            e.line("lt_mbar_arrive(LT_QE(tc % QBUF));  // every S GEMM of this tile has completed: its Q buffer may be refilled");
        }
        e.block("if (nk > 0)", () -> {
            String last = ring("nk - 1");
            e.line("lt_mbar_wait(LT_VFULL(" + last + " % STAGES), (" + last + " / STAGES) & 1);");
            turnBegin(e);
            e.line("lt_wgmma_fence();");
            emitPvIssue(e, persistent ? last : "nk - 1");
            turnEnd(e, true);
            e.line("lt_wgmma_wait<0>();");
            emitOutputFence(e);
            if (persistent) {
                e.line("lt_mbar_arrive(LT_VEMPTY(" + last + " % STAGES));  // the next query tile's copies reuse the stage");
            }
        });
        emitEpilogue(e, pack2, vec2);
    }

    /** Persistent CTAs: the query tile's (batch, head), first row, o's base and its key tiles. */
    private void emitTileStart(CudaEmitter e) {
        e.line("const long long bh = tile / qblocks;");
        e.line("const int q0 = (qblocks - 1 - (int) (tile % qblocks)) * BR;  // the head's heaviest causal block first");
        AttentionParams.emitBases(e, "T", false);
        emitKeyTiles(e);
    }

    private static void emitKeyTiles(CudaEmitter e) {
        e.line("int nk = (seq_k + BC - 1) / BC;");
        e.line("if (CAUSAL) nk = min(nk, (q0 + BR + BC - 1) / BC);  // tiles past the last query are fully masked");
    }

    /**
     * RoPE: the producer warpgroup. Thread 0 issues the copies (K into its raw barrier, V into
     * its full one) one tile ahead of the rotation; every thread waits for the K tile before, rotates its 8 chunk
     * pairs of it (rows (ptid / 8) + 16 i, chunk ptid % 8), fences the writes for the tensor
     * cores, and arrives on K's full barrier, which the consumers wait on (count 128).
     */
    private void emitRopeProducer(CudaEmitter e) {
        e.line("const int ptid = tid - NC * 128, c = ptid & 7;");
        e.line("const int hi32 = (int) hi, bi32 = (int) bi;");
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
     * again; the stage is key tile j's place in the CTA's ring ({@link #ring}).
     */
    private void emitTileCopies(CudaEmitter e, String kBarrier) {
        String k = "&tm_k_" + tile.keyTile();
        String v = "&tm_v_" + tile.keyTile();
        String r = ring("j");
        e.line("const unsigned ph = ((" + r + " / STAGES) - 1) & 1;  // the release of tile j - STAGES");
        e.line("if (" + r + " >= STAGES) lt_mbar_wait(LT_KEMPTY(" + r + " % STAGES), ph);");
        e.line("lt_mbar_expect(" + kBarrier + "(" + r + " % STAGES), TBYTES);");
        e.line("lt_tma_load(LT_KBUF(" + r + "), " + k + ", 0, j * BC, hi32, bi32, " + kBarrier + "(" + r + " % STAGES));");
        e.line("lt_tma_load(LT_KBUF(" + r + ") + HALF, " + k + ", 64, j * BC, hi32, bi32, " + kBarrier + "(" + r + " % STAGES));");
        e.line("if (" + r + " >= STAGES) lt_mbar_wait(LT_VEMPTY(" + r + " % STAGES), ph);");
        e.line("lt_mbar_expect(LT_VFULL(" + r + " % STAGES), TBYTES);");
        e.line("lt_tma_load(LT_VBUF(" + r + "), " + v + ", 0, j * BC, hi32, bi32, LT_VFULL(" + r + " % STAGES));");
        e.line("lt_tma_load(LT_VBUF(" + r + ") + HALF, " + v + ", 64, j * BC, hi32, bi32, LT_VFULL(" + r + " % STAGES));");
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

    /** The banner, the kernel's constants (after {@code shape}, its thread and tile line) and the helpers. */
    private void emitHeader(CudaEmitter e, String variant, String shape, String qComment) {
        CudaPrelude.emit(e, "attention" + (spec.causal() ? " (causal)" : "") + ", head_dim 128, Hopper path (" + variant + ")");
        e.line(shape);
        e.line("constexpr int HALF = BC * 128;   // bytes of one 64-column half of a K or V tile");
        e.line("constexpr int QBYTES = 64 * 256, TBYTES = BC * 256;  // " + qComment);
        e.linef("constexpr bool CAUSAL = %s;", spec.causal());
        e.linef("constexpr float SCALE_LOG2 = %s;  // scale * log2(e)",
                ElementwiseRenderer.floatLiteral(spec.scale() * 1.4426950408889634));
        e.line("typedef " + t + " T;");
        e.blank();
        WgmmaHelpers.emitKernelHelpers(e, tile.keyTile(), tile.qInRegisters(), mmaType, pack2, vec2);
    }

    /** The accumulators and softmax state of one warpgroup (and Q's fragments when they stay in registers). */
    private void emitAccumulators(CudaEmitter e) {
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
    private void emitQFragments(CudaEmitter e) {
        if (!tile.qInRegisters()) {
            return;
        }
        e.comment("Q as wgmma A fragments, kept for the whole loop: ldmatrix x4 of rows wi*16.., dims 16kk..");
        e.unrolled("kk", "8", () -> {
            e.line("const int r = wi * 16 + ((lane >> 3) & 1) * 8 + (lane & 7), c = kk * 2 + (lane >> 4);");
            e.line("lt_ldsm_x4(sQ + (c >> 3) * 8192 + r * 128 + (((c & 7) ^ (r & 7)) << 4), qf[kk]);");
        });
    }

    /** Issues O += P V of key tile {@code tile} (BC / 16 k-steps of 16 keys, 2048 bytes of V each) and commits it. */
    private static void emitPvIssue(CudaEmitter e, String tile) {
        e.unrolled("j", "BC / 16", () -> e.line("lt_wgmma_pv(oacc, pa[j], LT_VDESC(LT_VBUF(" + tile + ") + j * 2048), true);"));
        e.line("lt_wgmma_commit();");
    }

    private static void emitOutputFence(CudaEmitter e) {
        e.unrolled("n", "16", () -> e.line("lt_reg_fence(oacc[n]);"));
    }

    /** O *= exp(m_old - m_new), row by row. */
    private static void emitRescale(CudaEmitter e) {
        e.unrolled("n", "16", () -> {
            e.line("oacc[n][0] *= corr[0]; oacc[n][1] *= corr[0];");
            e.line("oacc[n][2] *= corr[1]; oacc[n][3] *= corr[1];");
        });
    }

    /** Issues S = Q K^T (8 k-steps of 16 dims; k-step kk at byte 32 (kk % 4) of half kk / 4) and commits it. */
    private void emitScores(CudaEmitter e, String kbuf) {
        e.line("lt_wgmma_fence();");
        String a = tile.qInRegisters() ? "qf[kk]" : "lt_desc(sQ + (kk >> 2) * 8192 + (kk & 3) * 32, 16, 1024)";
        e.unrolled("kk", "8", () -> e.line("lt_wgmma_qk(s, " + a + ", "
                + "lt_desc(" + kbuf + " + (kk >> 2) * HALF + (kk & 3) * 32, 16, 1024), kk > 0);"));
        e.line("lt_wgmma_commit();");
    }

    /** P as wgmma A fragments: k-step j covers keys 16j..16j+15 = the S n-tiles 2j and 2j+1. */
    private static void emitPack(CudaEmitter e) {
        e.unrolled("j", "BC / 16", () -> {
            e.line("pa[j][0] = lt_pack(s[2 * j][0], s[2 * j][1]);");
            e.line("pa[j][1] = lt_pack(s[2 * j][2], s[2 * j][3]);");
            e.line("pa[j][2] = lt_pack(s[2 * j + 1][0], s[2 * j + 1][1]);");
            e.line("pa[j][3] = lt_pack(s[2 * j + 1][2], s[2 * j + 1][3]);");
        });
    }

    private void emitMaskAndSoftmax(CudaEmitter e, boolean foldScale) {
        if (!foldScale) {
            e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> e.line("s[n][i] *= SCALE_LOG2;")));
        }
        e.line("float corr[2];");
        e.block("if (k0 + BC > seq_k || (CAUSAL && k0 + BC - 1 > wq0))", () -> {
            e.comment("a ragged or diagonal tile: mask keys past seq_k and, causal, keys after the query");
            e.unrolled("n", "BC / 8", () -> e.unrolled("i", "4", () -> {
                e.line("const int col = k0 + n * 8 + 2 * t4 + (i & 1), row = qrow + (i >> 1) * 8;");
                e.line("if (col >= seq_k || (CAUSAL && col > row)) s[n][i] = -LT_INF;");
            }));
        });
        e.unrolled("h", "2", () -> AttentionParams.emitRowSoftmax(e, "", "lt_exp2", "corr[h]", foldScale, false));
    }

    private void emitEpilogue(CudaEmitter e, String pack2, String vec2) {
        e.unrolled("h", "2", () -> AttentionParams.emitRowStore(e, "", "qrow + h * 8", "16", pack2, vec2));
    }
}
