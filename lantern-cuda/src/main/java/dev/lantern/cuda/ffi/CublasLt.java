package dev.lantern.cuda.ffi;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import dev.lantern.cuda.ffi.NativeLibrary.Fn;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * cuBLASLt ({@code libcublasLt.so.13}): handle, matmul/layout/preference descriptors,
 * heuristic algorithm choice and {@code cublasLtMatmul}. Handles are carried as {@code long}.
 * Enum values below are cublasLt.h's / library_types.h's (CUDA 13.0).
 */
public final class CublasLt {
    // cublasComputeType_t
    public static final int CUBLAS_COMPUTE_32F = 68;
    // cudaDataType_t
    public static final int CUDA_R_32F = 0;
    public static final int CUDA_R_16F = 2;
    public static final int CUDA_R_16BF = 14;
    // cublasOperation_t
    public static final int CUBLAS_OP_N = 0;
    public static final int CUBLAS_OP_T = 1;
    // cublasLtMatmulDescAttributes_t
    public static final int MATMUL_DESC_COMPUTE_TYPE = 0;
    public static final int MATMUL_DESC_SCALE_TYPE = 1;
    public static final int MATMUL_DESC_TRANSA = 3;
    public static final int MATMUL_DESC_TRANSB = 4;
    public static final int MATMUL_DESC_EPILOGUE = 7;
    public static final int MATMUL_DESC_BIAS_POINTER = 8;
    public static final int MATMUL_DESC_BIAS_DATA_TYPE = 26;
    /** The epilogue's auxiliary matrix (GELU_AUX writes the GELU input there, DGELU reads it): a device pointer. */
    public static final int MATMUL_DESC_EPILOGUE_AUX_POINTER = 11;
    /** The auxiliary matrix's leading dimension in elements (int64; a multiple of 8, at least D's rows). */
    public static final int MATMUL_DESC_EPILOGUE_AUX_LD = 12;
    // cublasLtEpilogue_t
    public static final int EPILOGUE_DEFAULT = 1;
    public static final int EPILOGUE_RELU = 2;
    public static final int EPILOGUE_BIAS = 4;
    public static final int EPILOGUE_RELU_BIAS = 6;
    public static final int EPILOGUE_GELU = 32;
    public static final int EPILOGUE_GELU_BIAS = 36;
    public static final int EPILOGUE_GELU_AUX = 32 | 128;
    public static final int EPILOGUE_DGELU = 64 | 128;
    // cublasLtMatrixLayoutAttribute_t
    public static final int LAYOUT_TYPE = 0;
    public static final int LAYOUT_ORDER = 1;
    public static final int LAYOUT_BATCH_COUNT = 5;
    public static final int LAYOUT_STRIDED_BATCH_OFFSET = 6;
    // cublasLtOrder_t
    public static final int ORDER_COL = 0;
    public static final int ORDER_ROW = 1;
    // cublasLtMatmulPreferenceAttributes_t
    public static final int PREF_MAX_WORKSPACE_BYTES = 1;
    /** uint32 mask of cublasLtReductionScheme_t bits allowed; 0 allows only REDUCTION_SCHEME_NONE (no split-K). */
    public static final int PREF_REDUCTION_SCHEME_MASK = 3;
    // cublasLtMatmulAlgoConfigAttributes_t (all uint32 but INNER_SHAPE_ID and CLUSTER_SHAPE_ID, uint16)
    public static final int ALGO_CONFIG_ID = 0;
    public static final int ALGO_CONFIG_TILE_ID = 1;
    public static final int ALGO_CONFIG_SPLITK_NUM = 2;
    public static final int ALGO_CONFIG_REDUCTION_SCHEME = 3;
    public static final int ALGO_CONFIG_CTA_SWIZZLING = 4;
    public static final int ALGO_CONFIG_STAGES_ID = 6;
    public static final int ALGO_CONFIG_INNER_SHAPE_ID = 7;
    public static final int ALGO_CONFIG_CLUSTER_SHAPE_ID = 8;
    // cublasLtClusterShape_t
    public static final int CLUSTER_SHAPE_1x1x1 = 2;
    public static final int CLUSTER_SHAPE_2x1x1 = 3;
    public static final int CLUSTER_SHAPE_1x2x1 = 5;
    public static final int CLUSTER_SHAPE_2x2x1 = 6;

    /** cublasLtMatmulHeuristicResult_t: algo (uint64[8]), size_t workspaceSize, status, float waves, int[4]. */
    static final long HEURISTIC_RESULT_BYTES = 96;
    static final long ALGO_BYTES = 64;

    private static final Map<Integer, String> STATUS = Map.of(
            0, "CUBLAS_STATUS_SUCCESS", 1, "CUBLAS_STATUS_NOT_INITIALIZED", 3, "CUBLAS_STATUS_ALLOC_FAILED",
            7, "CUBLAS_STATUS_INVALID_VALUE", 8, "CUBLAS_STATUS_ARCH_MISMATCH", 11, "CUBLAS_STATUS_MAPPING_ERROR",
            13, "CUBLAS_STATUS_EXECUTION_FAILED", 14, "CUBLAS_STATUS_INTERNAL_ERROR",
            15, "CUBLAS_STATUS_NOT_SUPPORTED", 16, "CUBLAS_STATUS_LICENSE_ERROR");

    private static final FunctionDescriptor SET_ATTR =
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG);

    private final NativeLibrary lib;
    private final Fn cublasLtGetVersion;
    private final Fn cublasLtCreate;
    private final Fn cublasLtDestroy;
    private final Fn cublasLtMatmulDescCreate;
    private final Fn cublasLtMatmulDescSetAttribute;
    private final Fn cublasLtMatmulDescDestroy;
    private final Fn cublasLtMatrixLayoutCreate;
    private final Fn cublasLtMatrixLayoutSetAttribute;
    private final Fn cublasLtMatrixLayoutDestroy;
    private final Fn cublasLtMatmulPreferenceCreate;
    private final Fn cublasLtMatmulPreferenceSetAttribute;
    private final Fn cublasLtMatmulPreferenceDestroy;
    private final Fn cublasLtMatmulAlgoGetHeuristic;
    private final Fn cublasLtMatmulAlgoConfigGetAttribute;
    private final Fn cublasLtMatmulAlgoConfigSetAttribute;
    private final Fn cublasLtMatmulAlgoCheck;
    private final Fn cublasLtMatmul;

    public CublasLt(NativeLibrary lib) {
        this.lib = lib;
        cublasLtGetVersion = lib.fn(FunctionDescriptor.of(JAVA_LONG), "cublasLtGetVersion");
        cublasLtCreate = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS), "cublasLtCreate");
        cublasLtDestroy = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG), "cublasLtDestroy");
        cublasLtMatmulDescCreate = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                "cublasLtMatmulDescCreate");
        cublasLtMatmulDescSetAttribute = lib.fn(SET_ATTR, "cublasLtMatmulDescSetAttribute");
        cublasLtMatmulDescDestroy = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG), "cublasLtMatmulDescDestroy");
        cublasLtMatrixLayoutCreate = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_LONG,
                JAVA_LONG, JAVA_LONG), "cublasLtMatrixLayoutCreate");
        cublasLtMatrixLayoutSetAttribute = lib.fn(SET_ATTR, "cublasLtMatrixLayoutSetAttribute");
        cublasLtMatrixLayoutDestroy = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG),
                "cublasLtMatrixLayoutDestroy");
        cublasLtMatmulPreferenceCreate = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS),
                "cublasLtMatmulPreferenceCreate");
        cublasLtMatmulPreferenceSetAttribute = lib.fn(SET_ATTR, "cublasLtMatmulPreferenceSetAttribute");
        cublasLtMatmulPreferenceDestroy = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG),
                "cublasLtMatmulPreferenceDestroy");
        // (handle, op, Adesc, Bdesc, Cdesc, Ddesc, pref, requested, results*, returned*)
        cublasLtMatmulAlgoGetHeuristic = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, ADDRESS, ADDRESS),
                "cublasLtMatmulAlgoGetHeuristic");
        // (algo*, attr, buf*, size, written*) and (algo*, attr, buf*, size)
        cublasLtMatmulAlgoConfigGetAttribute = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS,
                JAVA_LONG, ADDRESS), "cublasLtMatmulAlgoConfigGetAttribute");
        cublasLtMatmulAlgoConfigSetAttribute = lib.fn(FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS,
                JAVA_LONG), "cublasLtMatmulAlgoConfigSetAttribute");
        // (handle, op, Adesc, Bdesc, Cdesc, Ddesc, algo*, result*)
        cublasLtMatmulAlgoCheck = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG, JAVA_LONG, ADDRESS, ADDRESS), "cublasLtMatmulAlgoCheck");
        // (handle, desc, alpha*, A, Adesc, B, Bdesc, beta*, C, Cdesc, D, Ddesc, algo*, ws, wsBytes, stream)
        cublasLtMatmul = lib.fn(FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG,
                JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, ADDRESS,
                JAVA_LONG, JAVA_LONG, JAVA_LONG), "cublasLtMatmul");
    }

    public LibraryProbe probe() {
        return lib.probe();
    }

    public static String statusName(int status) {
        String s = STATUS.get(status);
        return s != null ? s : "cublasStatus_t(" + status + ")";
    }

    private static void check(Fn fn, int status) {
        if (status != 0) {
            throw new CudaException(fn.name(), status, statusName(status), null);
        }
    }

    /** e.g. 130100 for 13.1.0. */
    public long version() {
        try {
            return (long) cublasLtGetVersion.handle().invokeExact();
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public long create() {
        return outHandle(cublasLtCreate);
    }

    public void destroy(long handle) {
        destroyWith(cublasLtDestroy, handle);
    }

    public long matmulDescCreate(int computeType, int scaleType) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cublasLtMatmulDescCreate,
                    (int) cublasLtMatmulDescCreate.handle().invokeExact(out, computeType, scaleType));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    public void matmulDescSetInt(long desc, int attribute, int value) {
        setAttr(cublasLtMatmulDescSetAttribute, desc, attribute, value, false);
    }

    /** For pointer (BIAS_POINTER) and 64-bit attributes. */
    public void matmulDescSetLong(long desc, int attribute, long value) {
        setAttr(cublasLtMatmulDescSetAttribute, desc, attribute, value, true);
    }

    public void matmulDescDestroy(long desc) {
        destroyWith(cublasLtMatmulDescDestroy, desc);
    }

    /** Column-major by default; rows/cols/ld in elements. */
    public long matrixLayoutCreate(int dataType, long rows, long cols, long ld) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(cublasLtMatrixLayoutCreate,
                    (int) cublasLtMatrixLayoutCreate.handle().invokeExact(out, dataType, rows, cols, ld));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** ORDER and BATCH_COUNT are int32 attributes. */
    public void matrixLayoutSetInt(long layout, int attribute, int value) {
        setAttr(cublasLtMatrixLayoutSetAttribute, layout, attribute, value, false);
    }

    /** STRIDED_BATCH_OFFSET is int64 (elements). */
    public void matrixLayoutSetLong(long layout, int attribute, long value) {
        setAttr(cublasLtMatrixLayoutSetAttribute, layout, attribute, value, true);
    }

    public void matrixLayoutDestroy(long layout) {
        destroyWith(cublasLtMatrixLayoutDestroy, layout);
    }

    public long preferenceCreate() {
        return outHandle(cublasLtMatmulPreferenceCreate);
    }

    /** MAX_WORKSPACE_BYTES is uint64. */
    public void preferenceSetLong(long pref, int attribute, long value) {
        setAttr(cublasLtMatmulPreferenceSetAttribute, pref, attribute, value, true);
    }

    /** REDUCTION_SCHEME_MASK is uint32. */
    public void preferenceSetInt(long pref, int attribute, int value) {
        setAttr(cublasLtMatmulPreferenceSetAttribute, pref, attribute, value, false);
    }

    public void preferenceDestroy(long pref) {
        destroyWith(cublasLtMatmulPreferenceDestroy, pref);
    }

    /** One heuristic candidate: the opaque 64-byte algo, the workspace it needs, its expected waves. */
    public record Heuristic(byte[] algo, long workspaceBytes, float waves) {}

    /** Up to {@code requested} candidates, best first; empty when no algorithm fits. */
    public List<Heuristic> algoGetHeuristic(long handle, long op, long a, long b, long c, long d,
                                            long pref, int requested) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment results = arena.allocate(HEURISTIC_RESULT_BYTES * requested, 8);
            MemorySegment count = arena.allocate(JAVA_INT);
            int status = (int) cublasLtMatmulAlgoGetHeuristic.handle().invokeExact(handle, op, a, b, c, d, pref,
                    requested, results, count);
            if (status == 15) { // CUBLAS_STATUS_NOT_SUPPORTED: no algorithm for this problem
                return List.of();
            }
            check(cublasLtMatmulAlgoGetHeuristic, status);
            List<Heuristic> out = new ArrayList<>();
            for (int i = 0; i < count.get(JAVA_INT, 0); i++) {
                MemorySegment r = results.asSlice(i * HEURISTIC_RESULT_BYTES, HEURISTIC_RESULT_BYTES);
                if (r.get(JAVA_INT, 72) != 0) {
                    continue; // this candidate's own state is not SUCCESS
                }
                out.add(new Heuristic(r.asSlice(0, ALGO_BYTES).toArray(JAVA_BYTE), r.get(JAVA_LONG, 64),
                        r.get(JAVA_FLOAT, 76)));
            }
            return out;
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private static int configBytes(int attribute) {
        return attribute == ALGO_CONFIG_CLUSTER_SHAPE_ID || attribute == ALGO_CONFIG_INNER_SHAPE_ID ? 2 : 4;
    }

    /** One configuration attribute of an algo ({@code ALGO_CONFIG_*}), unsigned. */
    public long algoConfig(byte[] algo, int attribute) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment algoSeg = arena.allocateFrom(JAVA_BYTE, algo);
            MemorySegment buf = arena.allocate(8, 8);
            MemorySegment written = arena.allocate(JAVA_LONG);
            check(cublasLtMatmulAlgoConfigGetAttribute, (int) cublasLtMatmulAlgoConfigGetAttribute.handle()
                    .invokeExact(algoSeg, attribute, buf, (long) configBytes(attribute), written));
            return configBytes(attribute) == 2 ? Short.toUnsignedLong(buf.get(JAVA_SHORT, 0))
                    : Integer.toUnsignedLong(buf.get(JAVA_INT, 0));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** A copy of {@code algo} with one configuration attribute changed (not yet checked: {@link #algoCheck}). */
    public byte[] withAlgoConfig(byte[] algo, int attribute, long value) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment algoSeg = arena.allocateFrom(JAVA_BYTE, algo);
            MemorySegment buf = arena.allocate(8, 8);
            if (configBytes(attribute) == 2) {
                buf.set(JAVA_SHORT, 0, (short) value);
            } else {
                buf.set(JAVA_INT, 0, (int) value);
            }
            check(cublasLtMatmulAlgoConfigSetAttribute, (int) cublasLtMatmulAlgoConfigSetAttribute.handle()
                    .invokeExact(algoSeg, attribute, buf, (long) configBytes(attribute)));
            return algoSeg.toArray(JAVA_BYTE);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /** Whether {@code algo} can run this problem: its workspace and waves, or null when it cannot. */
    public Heuristic algoCheck(long handle, long op, long a, long b, long c, long d, byte[] algo) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment algoSeg = arena.allocateFrom(JAVA_BYTE, algo);
            MemorySegment r = arena.allocate(HEURISTIC_RESULT_BYTES, 8);
            int status = (int) cublasLtMatmulAlgoCheck.handle().invokeExact(handle, op, a, b, c, d, algoSeg, r);
            if (status != 0 || r.get(JAVA_INT, 72) != 0) {
                return null;
            }
            return new Heuristic(algo.clone(), r.get(JAVA_LONG, 64), r.get(JAVA_FLOAT, 76));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    /**
     * D = alpha * op(A) op(B) + beta * C (+ epilogue), with f32 alpha/beta (scale type 32F).
     * {@code algo} may be null to let cuBLASLt choose internally.
     */
    public void matmul(long handle, long desc, float alpha, long a, long aDesc, long b, long bDesc, float beta,
                       long c, long cDesc, long d, long dDesc, byte[] algo, long workspace, long workspaceBytes,
                       long stream) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment alphaSeg = arena.allocateFrom(JAVA_FLOAT, alpha);
            MemorySegment betaSeg = arena.allocateFrom(JAVA_FLOAT, beta);
            MemorySegment algoSeg = algo == null ? MemorySegment.NULL : arena.allocateFrom(JAVA_BYTE, algo);
            int status = (int) cublasLtMatmul.handle().invokeExact(handle, desc, alphaSeg, a, aDesc, b, bDesc,
                    betaSeg, c, cDesc, d, dDesc, algoSeg, workspace, workspaceBytes, stream);
            check(cublasLtMatmul, status);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private long outHandle(Fn fn) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment out = a.allocate(JAVA_LONG);
            check(fn, (int) fn.handle().invokeExact(out));
            return out.get(JAVA_LONG, 0);
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private static void destroyWith(Fn fn, long handle) {
        try {
            check(fn, (int) fn.handle().invokeExact(handle));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }

    private static void setAttr(Fn fn, long obj, int attribute, long value, boolean wide) {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = wide ? a.allocateFrom(JAVA_LONG, value) : a.allocateFrom(JAVA_INT, (int) value);
            check(fn, (int) fn.handle().invokeExact(obj, attribute, buf, buf.byteSize()));
        } catch (Throwable t) {
            throw CudaDriver.rethrow(t);
        }
    }
}
