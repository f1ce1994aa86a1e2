package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/**
 * grad_kv writing dS and dq from dS in one launch ({@link AttentionBackwardSpec.Kind#GRAD_KV_DQ}),
 * the tiles passed through a ring of slots instead of a buffer for the whole batch: no launch
 * boundary between the two kernels, and a few (batch, K/V head) units of tiles in memory at a time.
 *
 * <pre>
 * unit u = (batch, K/V head); its grad_kv CTAs ({@link AttentionBackwardWgmmaRenderer}, GRAD_KV_DS's body)
 * write dS of the group's query heads into slot u % RING; its dq CTAs ({@link AttentionDqFromDsRenderer}'s
 * body, one warpgroup a CTA) read them there.
 * blocks, in order: [grad_kv of unit j][dq of unit j - LAG] for j = 0 .. units + LAG - 1
 *   (grad_kv past the last unit and dq before the first exit at once)
 * dq of u waits until the kblocks grad_kv CTAs of u have set their flags (sync[u][r], then dq's after them);
 * grad_kv of u waits until the dq CTAs of u - RING have set theirs, whose slot it takes.
 * </pre>
 * Each wait is on CTAs with lower indices, LAG or more groups earlier, which the GPU dispatched
 * before (CTAs start in index order, as single-pass scans rely on too) and which wait on none
 * after themselves: no wait can go round. LAG covers a few waves of the CTAs resident on the
 * GPU at once ({@link #lag}), so that by the time a dq CTA starts its unit's grad_kv CTAs have
 * usually ended; RING is 2 · LAG. A CTA's flag is set by a release store after its tiles are
 * written (each thread's fence, the CTA's barrier, then the store) and read with acquire loads by
 * the waiting CTA's first warp, then its barrier; tiles are read with ld.global.cg (L2, not the
 * SM's L1). No atomics: one flag a CTA ({@link #syncInts} ints, zero at launch: the lowering zeroes
 * them just before). The summation orders are the two kernels' own, so the results are bit for bit
 * those of GRAD_KV_DS then DQ_DS, and strict mode takes it.
 */
final class AttentionBackwardRingRenderer {
    private final AttentionBackwardSpec spec;
    private final CudaTarget target;
    private final String t;

    AttentionBackwardRingRenderer(AttentionBackwardSpec spec, CudaTarget target) {
        if (spec.kind() != AttentionBackwardSpec.Kind.GRAD_KV_DQ) {
            throw new CodegenException(spec.name() + ": the ring kernel renders GRAD_KV_DQ, got " + spec.kind());
        }
        this.spec = spec;
        this.target = target;
        this.t = CudaPrelude.cType(spec.dtype());
        this.dqStages = Integer.getInteger("lantern.attention.backward.dqStages", DQ_STAGES);
        if (dqStages < 2 || AttentionDqFromDsRenderer.stagedSharedBytes(dqStages, 1) > target.sharedBytesPerBlock()) {
            throw new CodegenException(spec.name() + ": lantern.attention.backward.dqStages must be 2 or more and fit in shared memory, got " + dqStages);
        }
    }

    /**
     * Buffers of dq's K tiles and dS fragments ({@code lantern.attention.backward.dqStages}): 3 or more
     * take {@link AttentionDqFromDsRenderer#emitStagedBody}; 2 the register-prefetch body of DQ_DS.
     */
    static final int DQ_STAGES = 4;
    private final int dqStages;

    /** CTAs of one unit: grad_kv's (64 keys each) and dq's (64 query rows of each query head of the group). */
    static long stride(AttentionBackwardSpec spec) {
        return (spec.seqK() + 63) / 64 + spec.group() * ((spec.seqQ() + 63) / 64);
    }

    /**
     * Groups between a unit's grad_kv CTAs and its dq CTAs: the CTAs resident at once (two an SM)
     * times {@code lantern.attention.backward.ringWaves} (WAVES by default), so that a unit's longest
     * grad_kv CTA (causal: its first key block walks every query tile) has usually ended when its dq
     * CTAs start, and they do not hold multiprocessors waiting.
     */
    static int lag(AttentionBackwardSpec spec, CudaTarget target) {
        long resident = 2L * target.smCount() * Integer.getInteger("lantern.attention.backward.ringWaves", WAVES);
        return (int) ((resident + stride(spec) - 1) / stride(spec)) + 2;
    }

    /** Waves of resident CTAs between a unit's grad_kv and dq CTAs by default. */
    static final int WAVES = 4;

    /** Slots of the ring: units whose dS tiles are in memory at once. */
    static int ring(AttentionBackwardSpec spec, CudaTarget target) {
        return 2 * lag(spec, target);
    }

    /** The flags: one int for each grad_kv and dq CTA of every unit. */
    static long syncInts(AttentionBackwardSpec spec) {
        return spec.batch() * spec.kvHeads() * stride(spec);
    }

    /** Bytes of the ring's dS tiles: min(RING, units) slots of the group's query heads. */
    public static long ringBytes(AttentionBackwardSpec spec, CudaTarget target) {
        long slots = Math.min(ring(spec, target), spec.batch() * spec.kvHeads());
        return slots * spec.group() * AttentionBackwardSpec.dsTilesPerHead(spec.seqQ(), spec.seqK(), spec.causal())
                * AttentionBackwardSpec.DS_TILE_BYTES;
    }

    List<KernelParam> params() {
        List<KernelParam> params = new ArrayList<>(AttentionBackwardGeneralRenderer.params(spec, t));
        params.add(new KernelParam(t + "* __restrict__", "ds"));
        params.add(new KernelParam("long long", "plane"));
        params.add(new KernelParam(t + "* __restrict__", "dq_out"));
        params.add(new KernelParam("int*", "sync"));
        return params;
    }

    CudaKernelSource render() {
        AttentionBackwardSpec kvSpec = as(AttentionBackwardSpec.Kind.GRAD_KV_DS);
        AttentionBackwardWgmmaRenderer kv = new AttentionBackwardWgmmaRenderer(kvSpec, target);
        AttentionDqFromDsRenderer dq = new AttentionDqFromDsRenderer(as(AttentionBackwardSpec.Kind.DQ_DS), target, 1);
        int lag = lag(spec, target);
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "attention backward grad_kv and dq in one launch, dS through a ring of " + ring(spec, target) + " slots"
                + (spec.causal() ? " (causal)" : "") + ", head_dim 128, Hopper path (wgmma, one warpgroup a CTA)");
        kv.emitDefinitions(e);
        e.linef("constexpr int W = 1, LAG = %d, RING = %d;  // dq's warpgroups a CTA; the ring (AttentionBackwardRingRenderer)", lag, ring(spec, target));
        e.comment("warp 0 waits (acquire loads, GPU scope) until the n flags from f are all set, then the CTA");
        e.block("__device__ __forceinline__ void lt_ring_wait(const int* f, int n)", () -> {
            e.block("if (threadIdx.x < 32)", () -> e.block("for (;;)", () -> {
                e.line("bool set = true;");
                e.block("for (int i = threadIdx.x; i < n; i += 32)", () -> {
                    e.line("int v;");
                    e.line("asm volatile(\"ld.acquire.gpu.global.b32 %0, [%1];\" : \"=r\"(v) : \"l\"(f + i) : \"memory\");");
                    e.line("set &= v != 0;");
                });
                e.line("if (__all_sync(0xffffffffu, set)) break;");
                e.line("__nanosleep(200);");
            }));
            e.line("__syncthreads();");
        });
        e.comment("every thread's writes (and reads) before, then the CTA's own flag set with a release store: no atomics");
        e.block("__device__ __forceinline__ void lt_ring_signal(int* f)", () -> {
            e.line("__threadfence();");
            e.line("__syncthreads();");
            e.line("if (threadIdx.x == 0) asm volatile(\"st.release.gpu.global.b32 [%0], %1;\" :: \"l\"(f), \"r\"(1) : \"memory\");");
        });
        List<KernelParam> params = params();
        e.block(AttentionParams.signature(spec.name(), params, "__launch_bounds__(THREADS, 2)"), () -> {
            e.line("const int kblocks = (seq_k + BM - 1) / BM, qblocks = (seq_q + BM - 1) / BM;");
            e.line("const int stride = kblocks + GROUP * qblocks;  // CTAs of a unit");
            e.line("const long long units = gridDim.x / stride - LAG;");
            e.line("const long long j = blockIdx.x / stride;");
            e.line("const int r = (int) (blockIdx.x % stride);");
            e.block("if (r < kblocks)", () -> {
                e.line("if (j >= units) return;");
                e.line("int* const dqFlags = sync + units * kblocks;  // after grad_kv's: [unit][GROUP * qblocks]");
                e.line("if (j >= RING) lt_ring_wait(dqFlags + (j - RING) * GROUP * qblocks, GROUP * qblocks);  // the slot's last readers are done");
                e.block("", () -> {
                    e.line("const long long lt_blk = j * kblocks + r;");
                    kv.emitGradKvBody(e, "lt_blk", "(bh % RING)");
                });
                e.line("lt_ring_signal(sync + j * kblocks + r);");
            });
            e.block("else", () -> {
                e.line("if (j < LAG) return;");
                e.line("const long long u = j - LAG;");
                e.line("lt_ring_wait(sync + u * kblocks, kblocks);  // every grad_kv CTA of the unit wrote its tiles");
                e.block("", () -> {
                    e.line("const long long lt_blk = u * GROUP * qblocks + (r - kblocks);");
                    String slot = "(bh / GROUP) % RING * GROUP + bh % GROUP";
                    if (dqStages >= 3) {
                        dq.emitStagedBody(e, "lt_blk", slot, "dq_out", dqStages);
                    } else {
                        dq.emitBody(e, "lt_blk", slot, "__ldcg", "dq_out");
                    }
                });
                e.line("lt_ring_signal(sync + units * kblocks + u * GROUP * qblocks + (r - kblocks));");
            });
        });
        e.line("#undef LT_KDESC");
        e.line("#undef LT_KOFF");
        e.line("#undef LT_VDESC");
        int smem = Math.max(kv.sharedBytes(), dqStages >= 3 ? AttentionDqFromDsRenderer.stagedSharedBytes(dqStages, 1)
                : AttentionDqFromDsRenderer.sharedBytes());
        long stride = stride(spec);
        LaunchRule rule = size -> LaunchConfig.linear((size.get(0) + lag) * stride, 128, smem);
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.kvHeads(), spec.seqQ(), spec.seqK()), "wgmma");
    }

    private AttentionBackwardSpec as(AttentionBackwardSpec.Kind kind) {
        return new AttentionBackwardSpec(spec.name(), kind, spec.batch(), spec.heads(), spec.group(), spec.seqQ(), spec.seqK(), spec.headDim(),
                spec.causal(), spec.scale(), spec.dtype(), spec.masked());
    }
}
