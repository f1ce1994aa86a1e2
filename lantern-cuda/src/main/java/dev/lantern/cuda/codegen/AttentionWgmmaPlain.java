package dev.lantern.cuda.codegen;

import java.util.List;

/**
 * The wgmma attention kernel without a producer ({@code consumers = 0}): one warpgroup of 128
 * threads per CTA owns 64 query rows and issues its own cp.async copies of Q, K and V between
 * its GEMMs, with one or two K and V stages and CTA-wide barriers to hand buffers over. The
 * schedule is the one in {@link AttentionWgmmaRenderer}'s summary.
 */
final class AttentionWgmmaPlain {
    private final AttentionWgmmaRenderer kernel;
    private final AttentionWgmmaMath m;
    private final AttentionSpec spec;
    private final CudaTarget.WgmmaTile tile;
    private final String t;

    AttentionWgmmaPlain(AttentionWgmmaRenderer kernel) {
        this.kernel = kernel;
        this.m = kernel.math();
        this.spec = kernel.spec();
        this.tile = kernel.tile();
        this.t = kernel.elementType();
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        int threads = 128;
        kernel.emitHeader(e, "wgmma, one warpgroup, key tile " + tile.keyTile() + ", " + tile.stages() + " K and V stage(s), "
                        + tile.minBlocks() + " CTA(s) per SM" + (tile.qInRegisters() ? ", Q in registers" : ""),
                String.format("constexpr int THREADS = 128, BR = 64, BC = %d, STAGES = %d;", tile.keyTile(), tile.stages()),
                "Q; one K or V tile");
        List<KernelParam> params = AttentionParams.of(t, spec);
        boolean foldScale = spec.scale() > 0;
        boolean two = tile.stages() == 2;
        e.block(AttentionParams.signature(spec.name(), params,
                "__launch_bounds__(" + threads + ", " + tile.minBlocks() + ")"), () -> {
            e.line("extern __shared__ __align__(1024) unsigned char lt_smem[];");
            e.line("const int tid = threadIdx.x, lane = tid & 31, wi = tid >> 5;");
            e.line("const int qblocks = (seq_q + BR - 1) / BR;");
            e.line("const long long bh = blockIdx.x / qblocks;");
            e.line("const int q0 = (qblocks - 1 - (int) (blockIdx.x % qblocks)) * BR;  // heaviest causal block first");
            AttentionParams.emitBases(e, "T", spec);
            e.line("const unsigned sbase = ((unsigned) __cvta_generic_to_shared(lt_smem) + 1023u) & ~1023u;");
            e.line("const unsigned sQ = sbase, sK0 = sQ + QBYTES, sV0 = sK0 + STAGES * TBYTES;  // stage s at + s * TBYTES");
            e.line("#define LT_KBUF(j) (sK0 + (STAGES == 2 ? ((j) & 1) * TBYTES : 0))");
            e.line("#define LT_VBUF(j) (sV0 + (STAGES == 2 ? ((j) & 1) * TBYTES : 0))");
            e.line("int nk = (seq_k + BC - 1) / BC;");
            e.line("if (CAUSAL) nk = min(nk, (q0 + BR + BC - 1) / BC);  // tiles past the last query are fully masked");
            e.line("const int g = lane >> 2, t4 = lane & 3;");
            e.line("const int wq0 = q0;  // the warpgroup's first query row");
            e.line("const int qrow = q0 + wi * 16 + g;  // this thread's rows: qrow and qrow + 8");
            m.emitAccumulators(e);
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
                m.emitQFragments(e);
                m.emitScores(e, "LT_KBUF(0)");
                e.line("lt_wgmma_wait<0>();");
                e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
                if (!two) {
                    e.line("__syncthreads();  // every warp's S_0 is done: K's buffer is free");
                    e.line("if (nk > 1) lt_load_tile<BC>(LT_KBUF(1), kb, k_ss, BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                }
                e.line("const int k0 = 0;");
                m.emitMaskAndSoftmax(e, foldScale);
                m.emitPack(e);
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
                m.emitScores(e, "LT_KBUF(kt)");
                e.line("lt_wgmma_fence();");
                m.emitPvIssue(e, "kt - 1");
                e.line("lt_wgmma_wait<1>();  // S_kt is ready; P V may still run");
                e.unrolled("n", "BC / 8", () -> e.line("lt_reg_fence(s[n]);"));
                if (!two) {
                    e.line("__syncthreads();  // every warp's S_kt is done: K's buffer is free");
                    e.line("if (kt + 1 < nk) lt_load_tile<BC>(LT_KBUF(kt + 1), kb, k_ss, (kt + 1) * BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                }
                e.line("const int k0 = kt * BC;");
                m.emitMaskAndSoftmax(e, foldScale);
                e.line("lt_wgmma_wait<0>();  // O += P_kt-1 V_kt-1 is done");
                m.emitOutputFence(e);
                m.emitRescale(e);
                if (!two) {
                    e.line("__syncthreads();  // every warp's P V is done: V's buffer is free");
                    e.line("lt_load_tile<BC>(LT_VBUF(kt), vb, v_ss, kt * BC, seq_k, tid);");
                    e.line("lt_cp_commit();");
                }
                m.emitPack(e);
            });
            e.block("if (nk > 0)", () -> {
                e.comment("epilogue: O += P V of the last tile");
                e.line("lt_cp_wait_all();");
                e.line("lt_async_fence();");
                e.line("__syncthreads();");
                e.line("lt_wgmma_fence();");
                m.emitPvIssue(e, "nk - 1");
                e.line("lt_wgmma_wait<0>();");
                m.emitOutputFence(e);
            });
            m.emitEpilogue(e);
            e.line("#undef LT_KBUF");
            e.line("#undef LT_VBUF");
        });
        int smem = kernel.sharedBytes();
        LaunchRule rule = size -> LaunchConfig.linear(size.get(0) * ((size.get(1) + 63) / 64), threads, smem);
        return new CudaKernelSource(spec.name(), e.text(), params, rule,
                ProblemSize.of(spec.batch() * spec.heads(), spec.seqQ(), spec.seqK()), "wgmma");
    }
}
