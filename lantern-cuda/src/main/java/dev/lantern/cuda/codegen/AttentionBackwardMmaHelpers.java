package dev.lantern.cuda.codegen;

/**
 * The device helpers every tensor-core attention backward kernel ({@link AttentionBackwardMmaRenderer})
 * starts with: cp.async copies (with the wait for all but the newest group, for the streamed tiles'
 * two buffers), {@code ldmatrix} x4 plain and transposed, the {@code mma.sync.m16n8k16} f32-accumulating
 * product, the pack of two f32 into one 16-bit pair, the swizzled ROWS x D tile load, and the re-pack of
 * two accumulator tiles into an A fragment. The kernel's constants (D, THREADS, CH) and its element
 * type T are declared before them.
 */
final class AttentionBackwardMmaHelpers {
    private AttentionBackwardMmaHelpers() {}

    /** The helpers, for {@code mmaType} (bf16 or f16), with {@code pack2}/{@code vec2} the pair's intrinsic and type. */
    static void emit(CudaEmitter e, String mmaType, String pack2, String vec2) {
        AttentionParams.emitCpAsync(e, true);
        e.block("__device__ __forceinline__ void lt_ldsm_x4(unsigned addr, unsigned (&r)[4])", () ->
                e.line("asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\" "
                        + ": \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(addr));"));
        e.block("__device__ __forceinline__ void lt_ldsm_x4_t(unsigned addr, unsigned (&r)[4])", () ->
                e.line("asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\\n\" "
                        + ": \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(addr));"));
        e.comment("c += a * b: m16n8k16, A row-major 16x16, B column-major 16x8, f32 accumulators");
        e.block("__device__ __forceinline__ void lt_mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)", () ->
                e.line("asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32." + mmaType + "." + mmaType
                        + ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\" "
                        + ": \"+f\"(c[0]), \"+f\"(c[1]), \"+f\"(c[2]), \"+f\"(c[3]) "
                        + ": \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1));"));
        AttentionParams.emitPack(e, pack2, vec2);
        e.comment("ROWS x D tile of rows row0.. of g (row stride in elements) into swizzled smem at sbase; rows past nrows read as 0");
        e.line("template <int ROWS>");
        e.block("__device__ __forceinline__ void lt_load_tile(unsigned sbase, const T* __restrict__ g, long long stride, "
                + "int row0, int nrows, int tid)", () -> {
            e.unrolled("it", "ROWS * CH / THREADS", () -> {
                e.line("const int i = tid + it * THREADS, r = i / CH, c = i % CH;");
                e.line("const bool ok = row0 + r < nrows;");
                e.line("const T* src = g + (ok ? (long long) (row0 + r) * stride : 0LL) + c * 8;");
                e.line("lt_cp_async16(sbase + (r * D + ((c ^ (r & 7)) << 3)) * 2, src, ok);");
            });
        });
        e.comment("the A fragment of two adjacent 8-column accumulator tiles (k-step over their 16 columns), rounded to T");
        e.block("__device__ __forceinline__ void lt_acc_to_a(const float (&c0)[4], const float (&c1)[4], unsigned (&a)[4])", () -> {
            e.line("a[0] = lt_pack(c0[0], c0[1]);");
            e.line("a[1] = lt_pack(c0[2], c0[3]);");
            e.line("a[2] = lt_pack(c1[0], c1[1]);");
            e.line("a[3] = lt_pack(c1[2], c1[3]);");
        });
        e.blank();
    }
}
