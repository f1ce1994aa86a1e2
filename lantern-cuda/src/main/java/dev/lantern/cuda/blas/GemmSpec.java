package dev.lantern.cuda.blas;

/**
 * A row-major (batched) GEMM: for each batch b,
 * {@code D[b] (m×n) = alpha · op(A[b]) (m×k) · op(B[b]) (k×n) + beta · C[b] (+ epilogue(bias[n]))}.
 * A is stored (m×k), or (k×m) when {@code transA}; B is stored (k×n), or (n×k) when
 * {@code transB} (a linear layer's weight). Batches are contiguous: A[b] starts m·k elements
 * after A[b-1], and so on. Accumulation and alpha/beta are f32. C and D rows are {@code ldd}
 * elements apart ({@code ldd ≥ n}; {@code n} unless the lowering pads D's rows to 16 bytes, which
 * cuBLASLt's fast kernels need: see GemmLowerer).
 */
public record GemmSpec(int m, int n, int k, int batch, boolean transA, boolean transB,
                       DataType abType, DataType cdType, Epilogue epilogue, DataType biasType, int ldd) {
    public GemmSpec {
        if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) {
            throw new IllegalArgumentException("GEMM sizes must be positive: m=" + m + " n=" + n + " k=" + k
                    + " batch=" + batch);
        }
        if (epilogue.hasBias() && biasType == null) {
            throw new IllegalArgumentException("epilogue " + epilogue + " needs a bias type");
        }
        if (epilogue.hasAux() && (ldd % 8 != 0 || batch != 1 || cdType == DataType.F32)) {
            throw new IllegalArgumentException("epilogue " + epilogue + " needs one 16-bit D with rows a multiple of 8 elements apart"
                    + " (cuBLASLt's auxiliary matrix): batch " + batch + ", ldd " + ldd + ", " + cdType);
        }
        if (ldd < n) {
            throw new IllegalArgumentException("GEMM leading dimension of D " + ldd + " is less than n=" + n);
        }
    }

    /** Dense C and D (rows n elements apart). */
    public GemmSpec(int m, int n, int k, int batch, boolean transA, boolean transB,
                    DataType abType, DataType cdType, Epilogue epilogue, DataType biasType) {
        this(m, n, k, batch, transA, transB, abType, cdType, epilogue, biasType, n);
    }

    /** This GEMM with D's rows {@code ldd} elements apart. */
    public GemmSpec withLdd(int ldd) {
        return new GemmSpec(m, n, k, batch, transA, transB, abType, cdType, epilogue, biasType, ldd);
    }

    /** As the record would print it, with {@code ldd} only where rows are padded (so dense GEMMs read as before). */
    @Override
    public String toString() {
        return "GemmSpec[m=" + m + ", n=" + n + ", k=" + k + ", batch=" + batch + ", transA=" + transA + ", transB=" + transB
                + ", abType=" + abType + ", cdType=" + cdType + ", epilogue=" + epilogue + ", biasType=" + biasType
                + (ldd != n ? ", ldd=" + ldd : "") + "]";
    }

    /** Elements of D (and C) the GEMM spans: batch · m · ldd, the padding included. */
    public long dElements() {
        return (long) batch * m * ldd;
    }

    /** A plain GEMM with no epilogue. */
    public static GemmSpec of(int m, int n, int k, DataType ab, DataType cd) {
        return new GemmSpec(m, n, k, 1, false, false, ab, cd, Epilogue.NONE, null);
    }

    /** cudaDataType values (library_types.h) with element sizes. */
    public enum DataType {
        F32(0, 4), F16(2, 2), BF16(14, 2);

        public final int cuda;
        public final int bytes;

        DataType(int cuda, int bytes) {
            this.cuda = cuda;
            this.bytes = bytes;
        }
    }

    /** cublasLtEpilogue_t values; bias is per output column (length n). */
    public enum Epilogue {
        NONE(1, false, false), RELU(2, false, false), BIAS(4, true, false), RELU_BIAS(6, true, false), GELU(32, false, false),
        GELU_BIAS(36, true, false),
        /** GELU(tanh) of the product into D, and the product itself (GELU's input) into the auxiliary matrix: a training forward. */
        GELU_AUX(32 | 128, false, true),
        /** The product times GELU(tanh)'s derivative at the auxiliary matrix (GELU's input): its backward, dy · gelu'(x). */
        DGELU(64 | 128, false, true);

        public final int cublas;
        private final boolean bias;
        private final boolean aux;

        Epilogue(int cublas, boolean bias, boolean aux) {
            this.cublas = cublas;
            this.bias = bias;
            this.aux = aux;
        }

        public boolean hasBias() {
            return bias;
        }

        /** Whether the epilogue reads or writes an auxiliary matrix shaped and laid out as D (rows {@code ldd} apart). */
        public boolean hasAux() {
            return aux;
        }
    }
}
