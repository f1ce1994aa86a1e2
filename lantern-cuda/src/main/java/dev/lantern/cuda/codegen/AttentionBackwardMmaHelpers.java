package dev.lantern.cuda.codegen;

/**
 * The device helpers every tensor-core attention backward kernel ({@link AttentionBackwardMmaRenderer})
 * starts with: the mma.sync attention kernels' own ({@link AttentionParams#emitMmaHelpers}, with the
 * wait for all but the newest cp.async group, for the streamed tiles' two buffers), and the re-pack of
 * two accumulator tiles into an A fragment. The kernel's constants (D, THREADS, CH) and its element
 * type T are declared before them.
 */
final class AttentionBackwardMmaHelpers {
    private AttentionBackwardMmaHelpers() {}

    /** The helpers, for {@code mmaType} (bf16 or f16), with {@code pack2}/{@code vec2} the pair's intrinsic and type. */
    static void emit(CudaEmitter e, String mmaType, String pack2, String vec2) {
        AttentionParams.emitMmaHelpers(e, true, mmaType, pack2, vec2);
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
