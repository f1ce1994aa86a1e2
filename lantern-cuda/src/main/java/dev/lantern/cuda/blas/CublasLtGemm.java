package dev.lantern.cuda.blas;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.ffi.ContextHealth;
import dev.lantern.cuda.ffi.CublasLt;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * A planned cuBLASLt GEMM for one {@link GemmSpec}: descriptors built once, heuristic
 * candidates fetched once, then {@link #run} per call with pointers.
 *
 * <p>Row-major without ORDER_ROW: a row-major (r×c) matrix is the column-major (c×r) one
 * with the same bytes, so D = op(A)·op(B) row-major is computed as the column-major
 * Dᵀ = op(B)ᵀ·op(A)ᵀ, i.e. cuBLASLt's "A" is our B and its "B" is our A. The bias epilogue
 * then adds along cuBLASLt's rows, which are our columns: one bias per output column.
 */
public final class CublasLtGemm implements AutoCloseable {
    private final CudaDevice device;
    private final CublasLt lt;
    private final ContextHealth generation;
    private final long handle;
    private final GemmSpec spec;
    private final long desc;
    private final long aLayout; // cuBLASLt's A = our B
    private final long bLayout; // cuBLASLt's B = our A
    private final long cLayout;
    private final long dLayout;
    private final List<CublasLt.Heuristic> candidates;
    private boolean closed;

    private CublasLtGemm(CudaDevice device, CublasLt lt, ContextHealth generation, long handle, GemmSpec s,
                         long maxWorkspaceBytes, int requested, boolean deterministic) {
        this.device = device;
        this.lt = lt;
        this.generation = generation;
        this.handle = handle;
        this.spec = s;
        device.makeCurrent(generation);
        desc = lt.matmulDescCreate(CublasLt.CUBLAS_COMPUTE_32F, CublasLt.CUDA_R_32F);
        lt.matmulDescSetInt(desc, CublasLt.MATMUL_DESC_TRANSA, s.transB() ? CublasLt.CUBLAS_OP_T : CublasLt.CUBLAS_OP_N);
        lt.matmulDescSetInt(desc, CublasLt.MATMUL_DESC_TRANSB, s.transA() ? CublasLt.CUBLAS_OP_T : CublasLt.CUBLAS_OP_N);
        lt.matmulDescSetInt(desc, CublasLt.MATMUL_DESC_EPILOGUE, s.epilogue().cublas);
        if (s.epilogue().hasBias()) {
            lt.matmulDescSetInt(desc, CublasLt.MATMUL_DESC_BIAS_DATA_TYPE, s.biasType().cuda);
        }
        if (s.epilogue().hasAux()) {
            // laid out as D: cuBLASLt's column-major (n x m), our rows ldd apart; its dtype is D's (the default)
            lt.matmulDescSetLong(desc, CublasLt.MATMUL_DESC_EPILOGUE_AUX_LD, s.ldd());
        }
        // our B: stored (k×n) row-major = col-major (n×k), ld n; or (n×k) row-major = col-major (k×n), ld k
        aLayout = s.transB() ? layout(s.abType(), s.k(), s.n(), s.k(), (long) s.k() * s.n())
                : layout(s.abType(), s.n(), s.k(), s.n(), (long) s.k() * s.n());
        // our A: stored (m×k) = col-major (k×m), ld k; or (k×m) = col-major (m×k), ld m
        bLayout = s.transA() ? layout(s.abType(), s.m(), s.k(), s.m(), (long) s.m() * s.k())
                : layout(s.abType(), s.k(), s.m(), s.k(), (long) s.m() * s.k());
        cLayout = layout(s.cdType(), s.n(), s.m(), s.ldd(), (long) s.m() * s.ldd());
        dLayout = layout(s.cdType(), s.n(), s.m(), s.ldd(), (long) s.m() * s.ldd());
        long pref = lt.preferenceCreate();
        try {
            lt.preferenceSetLong(pref, CublasLt.PREF_MAX_WORKSPACE_BYTES, maxWorkspaceBytes);
            if (deterministic) {
                // strict mode: only algorithms that reduce over K inside one CTA (no split-K, whose
                // partial sums are combined in an order the launch does not fix)
                lt.preferenceSetInt(pref, CublasLt.PREF_REDUCTION_SCHEME_MASK, 0);
            }
            List<CublasLt.Heuristic> found = lt.algoGetHeuristic(handle, desc, aLayout, bLayout, cLayout, dLayout, pref, requested);
            // and checked per algo, so that a heuristic that ignored the mask cannot slip one through
            candidates = deterministic ? found.stream().filter(h -> lt.algoConfig(h.algo(), CublasLt.ALGO_CONFIG_SPLITK_NUM) <= 1).toList()
                    : found;
        } finally {
            lt.preferenceDestroy(pref);
        }
    }

    private long layout(GemmSpec.DataType t, long rows, long cols, long ld, long batchStride) {
        long l = lt.matrixLayoutCreate(t.cuda, rows, cols, ld);
        if (spec.batch() > 1) {
            lt.matrixLayoutSetInt(l, CublasLt.LAYOUT_BATCH_COUNT, spec.batch());
            lt.matrixLayoutSetLong(l, CublasLt.LAYOUT_STRIDED_BATCH_OFFSET, batchStride);
        }
        return l;
    }

    /**
     * Plans {@code spec} on {@code device} with a cuBLASLt handle owned by the caller
     * ({@link CublasLtHandle}), asking the heuristic for up to {@code requested} algorithms
     * that fit in {@code maxWorkspaceBytes}.
     */
    public static CublasLtGemm plan(CublasLtHandle handle, GemmSpec spec, long maxWorkspaceBytes, int requested) {
        return plan(handle, spec, maxWorkspaceBytes, requested, false);
    }

    /**
     * As {@link #plan(CublasLtHandle, GemmSpec, long, int)}; {@code deterministic} (strict mode)
     * keeps only candidates without split-K (reduction scheme NONE, SPLITK_NUM ≤ 1). With no such
     * candidate the list is empty and {@link #run} lets cuBLASLt choose, which is refused in
     * strict mode by the caller.
     */
    public static CublasLtGemm plan(CublasLtHandle handle, GemmSpec spec, long maxWorkspaceBytes, int requested, boolean deterministic) {
        return new CublasLtGemm(handle.device(), handle.lt(), handle.generation(), handle.handle(), spec,
                maxWorkspaceBytes, requested, deterministic);
    }

    public GemmSpec spec() {
        return spec;
    }

    /**
     * Neighbours of the first {@code top} heuristic candidates that cuBLASLt accepts for this
     * problem within {@code maxWorkspaceBytes}: the same kernel with another thread-block cluster
     * (1x1, 2x1, 1x2, 2x2) or the other CTA swizzling, each at most once and none equal to a
     * heuristic candidate. The heuristic ranks by a model of an unthrottled GPU; these are for
     * timing under sustained load (probes).
     */
    public List<CublasLt.Heuristic> neighbours(int top, long maxWorkspaceBytes) {
        device.makeCurrent(generation);
        Set<String> seen = new HashSet<>();
        candidates.forEach(h -> seen.add(HexFormat.of().formatHex(h.algo())));
        List<CublasLt.Heuristic> out = new ArrayList<>();
        for (CublasLt.Heuristic h : candidates.subList(0, Math.min(top, candidates.size()))) {
            long swizzle = lt.algoConfig(h.algo(), CublasLt.ALGO_CONFIG_CTA_SWIZZLING);
            for (int cluster : new int[]{CublasLt.CLUSTER_SHAPE_1x1x1, CublasLt.CLUSTER_SHAPE_2x1x1,
                    CublasLt.CLUSTER_SHAPE_1x2x1, CublasLt.CLUSTER_SHAPE_2x2x1}) {
                for (long sw : new long[]{swizzle, 1 - Math.min(1, swizzle)}) {
                    byte[] algo;
                    try {
                        algo = lt.withAlgoConfig(lt.withAlgoConfig(h.algo(), CublasLt.ALGO_CONFIG_CLUSTER_SHAPE_ID, cluster),
                                CublasLt.ALGO_CONFIG_CTA_SWIZZLING, sw);
                    } catch (RuntimeException e) {
                        continue; // an attribute this algo does not take
                    }
                    CublasLt.Heuristic checked = lt.algoCheck(handle, desc, aLayout, bLayout, cLayout, dLayout, algo);
                    if (checked != null && checked.workspaceBytes() <= maxWorkspaceBytes
                            && seen.add(HexFormat.of().formatHex(checked.algo()))) {
                        out.add(checked);
                    }
                }
            }
        }
        return out;
    }

    /** Tile, stages, cluster and swizzle of {@code algo}, for logs: {@code t23 s12 c3 w0}. */
    public String describe(byte[] algo) {
        return "t" + lt.algoConfig(algo, CublasLt.ALGO_CONFIG_TILE_ID) + " s" + lt.algoConfig(algo, CublasLt.ALGO_CONFIG_STAGES_ID)
                + " c" + lt.algoConfig(algo, CublasLt.ALGO_CONFIG_CLUSTER_SHAPE_ID) + " w" + lt.algoConfig(algo, CublasLt.ALGO_CONFIG_CTA_SWIZZLING)
                + " k" + lt.algoConfig(algo, CublasLt.ALGO_CONFIG_SPLITK_NUM);
    }


    /** Heuristic candidates, best first (possibly empty: then {@link #run} lets cuBLASLt choose). */
    public List<CublasLt.Heuristic> candidates() {
        return candidates;
    }

    /**
     * Runs on {@code stream} with the best candidate. Pointers are device addresses; {@code c}
     * may equal {@code d} (in-place residual) and is ignored when beta is 0; {@code bias} is
     * read only when the epilogue has one, and is the auxiliary matrix (D's shape and layout) when
     * the epilogue has that instead (GELU_AUX writes it, DGELU reads it).
     */
    public void run(CudaStream stream, long a, long b, long c, long d, long bias, float alpha, float beta,
                    long workspace, long workspaceBytes) {
        run(stream, a, b, c, d, bias, alpha, beta, workspace, workspaceBytes, 0);
    }

    /** As {@link #run}, with heuristic candidate {@code candidate} (for a timed sweep). */
    public void run(CudaStream stream, long a, long b, long c, long d, long bias, float alpha, float beta,
                    long workspace, long workspaceBytes, int candidate) {
        runAlgo(stream, a, b, c, d, bias, alpha, beta, workspace, workspaceBytes,
                candidates.isEmpty() ? null : candidates.get(candidate).algo());
    }

    /** As {@link #run}, with an explicit algo (a {@link #neighbours} entry; null: cuBLASLt chooses). */
    public void runAlgo(CudaStream stream, long a, long b, long c, long d, long bias, float alpha, float beta,
                        long workspace, long workspaceBytes, byte[] algo) {
        device.makeCurrent(generation);
        if (spec.epilogue().hasBias()) {
            // the attribute is read at each cublasLtMatmul, so setting it per call is cheap and safe
            lt.matmulDescSetLong(desc, CublasLt.MATMUL_DESC_BIAS_POINTER, bias);
        } else if (spec.epilogue().hasAux()) {
            lt.matmulDescSetLong(desc, CublasLt.MATMUL_DESC_EPILOGUE_AUX_POINTER, bias);
        }
        lt.matmul(handle, desc, alpha, b, aLayout, a, bLayout, beta, c == 0 ? d : c, cLayout, d, dLayout, algo,
                workspace, workspaceBytes, stream.handle());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        lt.matrixLayoutDestroy(aLayout);
        lt.matrixLayoutDestroy(bLayout);
        lt.matrixLayoutDestroy(cLayout);
        lt.matrixLayoutDestroy(dLayout);
        lt.matmulDescDestroy(desc);
    }
}
