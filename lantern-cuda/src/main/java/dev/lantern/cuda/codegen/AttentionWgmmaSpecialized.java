package dev.lantern.cuda.codegen;

import java.util.List;

/**
 * The warp-specialised wgmma attention kernel: {@code NC} consumer warpgroups (64 query rows each,
 * BR = 64 NC) and one producer warp (with TMA and two consumers: a producer warpgroup that gives
 * its registers to the consumers through setmaxnreg) that alone issues the copies of Q, K and V.
 * Stages are handed over through mbarriers: the producer waits for its own copies, makes them
 * visible to the tensor cores (proxy fence) and arrives on the stage's "full" barrier; each
 * consumer thread arrives on the stage's "empty" barrier once the wgmma that read it has
 * completed. No CTA-wide barrier after the set-up, so consumers never wait on each other.
 *
 * <p>This class writes the set-up (constants, parameters, the barrier and tile layout in shared
 * memory, the barriers' initialisation) and the launch rule, then the producer's branch
 * ({@link AttentionWgmmaProducer}) and the consumers' ({@link AttentionWgmmaConsumer}).
 */
final class AttentionWgmmaSpecialized {
    private final AttentionWgmmaRenderer kernel;
    private final AttentionSpec spec;
    private final CudaTarget.WgmmaTile tile;
    private final String t;
    private final boolean persistent;

    AttentionWgmmaSpecialized(AttentionWgmmaRenderer kernel) {
        this.kernel = kernel;
        this.spec = kernel.spec();
        this.tile = kernel.tile();
        this.t = kernel.elementType();
        this.persistent = kernel.persistent();
    }

    CudaKernelSource render() {
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
        kernel.emitHeader(e, "wgmma, " + nc + " consumer warpgroup(s) + a producer warp, key tile " + tile.keyTile() + ", "
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
        List<KernelParam> params = new java.util.ArrayList<>(AttentionParams.of(t, spec));
        if (tma) {
            params.add(new KernelParam("const __grid_constant__ LtTensorMap", AttentionParams.tensorMap("q", 64, spec.group())));
            params.add(new KernelParam("const __grid_constant__ LtTensorMap", AttentionParams.tensorMap("k", tile.keyTile(), spec.group())));
            params.add(new KernelParam("const __grid_constant__ LtTensorMap", AttentionParams.tensorMap("v", tile.keyTile(), spec.group())));
        }
        boolean foldScale = spec.scale() > 0;
        AttentionWgmmaProducer producer = new AttentionWgmmaProducer(kernel, realloc, producerRegs, ropeK);
        AttentionWgmmaConsumer consumer = new AttentionWgmmaConsumer(kernel, rope, foldScale, realloc, consumerRegs);
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
                AttentionParams.emitBases(e, "T", !tma, spec);  // with TMA the tensor maps address Q, K and V
            }
            emitSharedLayout(e, tma, ropeK);
            producer.emit(e);
            consumer.emit(e);
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
        int smem = kernel.sharedBytes();
        int br = 64 * nc;
        int slots = kernel.smCount() * tile.minBlocks();
        boolean causal = spec.causal();
        LaunchRule rule = size -> {
            long qblocks = (size.get(1) + br - 1) / br;
            long tiles = size.get(0) * qblocks;
            long grid = persistent ? AttentionWgmmaRenderer.persistentGrid(tiles, qblocks, slots, causal) : tiles;
            return LaunchConfig.linear(grid, threads, smem);
        };
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()), "wgmma");
    }

    /**
     * The mbarriers (8 bytes each, in the 128 bytes before the 1024-aligned tiles), Q's buffers and
     * the K and V stages, their macros, the key tiles of a non-persistent CTA, and the barriers'
     * initialisation by thread 0 followed by the one CTA-wide barrier.
     */
    private void emitSharedLayout(CudaEmitter e, boolean tma, boolean ropeK) {
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
            AttentionWgmmaRenderer.emitKeyTiles(e);
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
    }
}
