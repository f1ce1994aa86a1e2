package dev.lantern.cuda.codegen;

/**
 * The device helpers the wgmma attention kernels call (inline PTX): mbarriers, the named barriers
 * of the ping-pong turn, tensor-memory-access copies, RoPE in shared memory, and the wgmma
 * instructions with their descriptors. {@link AttentionWgmmaRenderer} writes the kernels; this
 * class writes what they call, each piece only where a kernel uses it.
 */
final class WgmmaHelpers {
    private WgmmaHelpers() {}

    /** mbarrier init, arrive and the parity wait. */
    static void emitMbarriers(CudaEmitter e) {
        e.line("__device__ __forceinline__ void lt_mbar_init(unsigned a, unsigned n) { asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" :: \"r\"(a), \"r\"(n) : \"memory\"); }");
        e.line("__device__ __forceinline__ void lt_mbar_arrive(unsigned a) { asm volatile(\"{\\n.reg .b64 st;\\nmbarrier.arrive.shared::cta.b64 st, [%0];\\n}\\n\" :: \"r\"(a) : \"memory\"); }");
        e.block("__device__ __forceinline__ void lt_mbar_wait(unsigned a, unsigned parity)", () -> {
            e.comment("until the phase of this parity has completed");
            e.line("unsigned done;");
            e.line("do { asm volatile(\"{\\n.reg .pred p;\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\nselp.u32 %0, 1, 0, p;\\n}\\n\" "
                    + ": \"=r\"(done) : \"r\"(a), \"r\"(parity) : \"memory\"); } while (!done);");
        });
    }

    /** Ping-pong: the two consumers pass the GEMM-issue turn on named barriers 1 and 2. */
    static void emitTurnBarriers(CudaEmitter e) {
        e.comment("named barriers 1 and 2 (256 threads: both consumer warpgroups) pass the GEMM-issue turn");
        e.comment("(immediate ids: a register id makes ptxas reserve all 16 barriers)");
        e.line("template <int ID> __device__ __forceinline__ void lt_bar_sync() { asm volatile(\"bar.sync %0, 256;\\n\" :: \"n\"(ID) : \"memory\"); }");
        e.line("template <int ID> __device__ __forceinline__ void lt_bar_arrive() { asm volatile(\"bar.arrive %0, 256;\\n\" :: \"n\"(ID) : \"memory\"); }");
    }

    /** TMA: the tensor map type passed by value, expect_tx and the 4-d box copy. */
    static void emitTma(CudaEmitter e) {
        e.comment("a CUDA tensor map (CUtensorMap), built on the host by cuTensorMapEncodeTiled, passed by value");
        e.line("struct __align__(64) LtTensorMap { unsigned long long opaque[16]; };");
        e.line("__device__ __forceinline__ void lt_mbar_expect(unsigned a, unsigned bytes) { asm volatile(\"{\\n.reg .b64 st;\\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\\n}\\n\" :: \"r\"(a), \"r\"(bytes) : \"memory\"); }");
        e.comment("one box (64 columns x rows, SW128) of a (d, s, h, b) tensor into smem; completes on the mbarrier");
        e.block("__device__ __forceinline__ void lt_tma_load(unsigned dst, const LtTensorMap* map, int d, int s, int h, int b, unsigned bar)", () ->
                e.line("asm volatile(\"cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\\n\" "
                        + ":: \"r\"(dst), \"l\"(reinterpret_cast<unsigned long long>(map)), \"r\"(d), \"r\"(s), \"r\"(h), \"r\"(b), \"r\"(bar) : \"memory\");"));
    }

    /**
     * RoPE: the theta table, 16-byte shared loads and stores, the rotation of one chunk pair, and
     * the angles. A thread always rotates the same 8 frequencies (its chunk) of rows r0 + 16 i, so
     * it takes sin and cos once per tile at its first row (fast sincos after reducing the angle to
     * [-pi, pi]: 2 pi = 6.28125 + 1.9353072e-3, the first part exact) and steps 16 rows by a
     * rotation it computed once (cos and sin of 16 theta): the special-function units stay free
     * for the softmax's exp2, which already keeps them busy.
     */
    static void emitRope(CudaEmitter e, String theta, double base) {
        RopeRenderer.emitThetas(e, theta, base, 128);
        e.line("#define LT_THETA " + theta);
        e.line("__device__ __forceinline__ uint4 lt_lds128(unsigned a) { uint4 v; asm volatile(\"ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\\n\" "
                + ": \"=r\"(v.x), \"=r\"(v.y), \"=r\"(v.z), \"=r\"(v.w) : \"r\"(a) : \"memory\"); return v; }");
        e.line("__device__ __forceinline__ void lt_sts128(unsigned a, uint4 v) { asm volatile(\"st.shared.v4.b32 [%0], {%1, %2, %3, %4};\\n\" "
                + ":: \"r\"(a), \"r\"(v.x), \"r\"(v.y), \"r\"(v.z), \"r\"(v.w) : \"memory\"); }");
        e.comment("rotate-half RoPE of the 8 pairs (x_i, x_i+64) in the 16-byte chunks at a and a + half (the same");
        e.comment("swizzled place in both 64-column halves), by the angles whose cos and sin are cs and sn");
        e.block("__device__ __forceinline__ void lt_rope_chunk(unsigned a, unsigned half, const float (&cs)[8], const float (&sn)[8])", () -> {
            e.line("uint4 ra = lt_lds128(a), rb = lt_lds128(a + half);");
            e.line("T* xa = reinterpret_cast<T*>(&ra);");
            e.line("T* xb = reinterpret_cast<T*>(&rb);");
            e.unrolled("x", "8", () -> {
                e.line("const float u = lt_f32(xa[x]), w = lt_f32(xb[x]);");
                e.line("xa[x] = lt_from<T>(u * cs[x] - w * sn[x]);");
                e.line("xb[x] = lt_from<T>(w * cs[x] + u * sn[x]);");
            });
            e.line("lt_sts128(a, ra);");
            e.line("lt_sts128(a + half, rb);");
        });
        e.comment("cos and sin of pos * theta_(8c + x), x < 8");
        e.block("__device__ __forceinline__ void lt_rope_angles(float pos, int c, float (&cs)[8], float (&sn)[8])", () ->
                e.unrolled("x", "8", () -> {
                    e.line("const float ang = pos * LT_THETA[c * 8 + x], turns = rintf(ang * 0.15915494f);");
                    e.line("__sincosf(fmaf(-turns, 1.9353072e-3f, fmaf(-turns, 6.28125f, ang)), &sn[x], &cs[x]);");
                }));
        e.comment("advance the angles by 16 rows: (cs, sn) rotated by (cd, sd) = cos, sin of 16 theta");
        e.block("__device__ __forceinline__ void lt_rope_step(float (&cs)[8], float (&sn)[8], const float (&cd)[8], const float (&sd)[8])", () ->
                e.unrolled("x", "8", () -> {
                    e.line("const float c2 = cs[x] * cd[x] - sn[x] * sd[x];");
                    e.line("sn[x] = sn[x] * cd[x] + cs[x] * sd[x];");
                    e.line("cs[x] = c2;");
                }));
        e.comment("the 16-row step of a thread's 8 frequencies (the same reduced fast sincos: 16 theta <= 16 rad)");
        e.block("__device__ __forceinline__ void lt_rope_steps(int c, float (&cd)[8], float (&sd)[8])", () ->
                e.line("lt_rope_angles(16.f, c, cd, sd);"));
    }

    /**
     * What every wgmma attention kernel calls: cp.async, the wgmma fence, commit and wait, register
     * fences, shared-memory descriptors, the S and P V wgmmas for {@code keyTile} keys (with Q's
     * fragments from registers when {@code qInRegisters}), lt_pack and lt_load_tile
     */
    static void emitKernelHelpers(CudaEmitter e, int keyTile, boolean qInRegisters, String mmaType, String pack2,
                                  String vec2) {
        AttentionParams.emitCpAsync(e, true);
        e.line("__device__ __forceinline__ void lt_wgmma_fence() { asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\"); }");
        e.line("__device__ __forceinline__ void lt_wgmma_commit() { asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\"); }");
        e.line("template <int N> __device__ __forceinline__ void lt_wgmma_wait() { asm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" :: \"n\"(N) : \"memory\"); }");
        e.comment("2^x on the SFU without exp2f's denormal handling (softmax terms below 2^-126 flush to 0)");
        e.line("__device__ __forceinline__ float lt_exp2(float x) { float y; asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); return y; }");
        e.line("__device__ __forceinline__ void lt_async_fence() { asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\"); }");
        e.comment("keeps the compiler from moving accumulator reads or writes across a wgmma wait");
        e.line("__device__ __forceinline__ void lt_reg_fence(float (&r)[4]) { asm volatile(\"\" : \"+f\"(r[0]), \"+f\"(r[1]), "
                + "\"+f\"(r[2]), \"+f\"(r[3]) :: \"memory\"); }");
        e.comment("shared-memory matrix descriptor: start, leading and stride byte offsets (16-byte units), 128-byte swizzle");
        e.block("__device__ __forceinline__ unsigned long long lt_desc(unsigned addr, unsigned lbo, unsigned sbo)", () ->
                e.line("return (unsigned long long) ((addr & 0x3FFFF) >> 4) | ((unsigned long long) (lbo >> 4) << 16) "
                        + "| ((unsigned long long) (sbo >> 4) << 32) | (1ull << 62);"));
        e.comment("V as the N-major B operand: 64-column halves HALF bytes apart (leading), 8-key groups 1024 apart (stride)");
        e.line("#define LT_VDESC(addr) lt_desc((addr), HALF, 1024)");
        if (qInRegisters) {
            e.line(wgmmaAsm("lt_wgmma_qk", "float (&d)[BC / 8][4], const unsigned (&a)[4], unsigned long long db, bool acc",
                    keyTile, mmaType, true, false));
            e.block("__device__ __forceinline__ void lt_ldsm_x4(unsigned addr, unsigned (&r)[4])", () ->
                    e.line("asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\" "
                            + ": \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(addr));"));
        } else {
            e.line(wgmmaAsm("lt_wgmma_qk", "float (&d)[BC / 8][4], unsigned long long da, unsigned long long db, bool acc",
                    keyTile, mmaType, false, false));
        }
        e.line(wgmmaAsm("lt_wgmma_pv", "float (&d)[16][4], const unsigned (&a)[4], unsigned long long db, bool acc",
                128, mmaType, true, true));
        AttentionParams.emitPack(e, pack2, vec2);
        e.comment("ROWS x 128 tile of rows row0.. of g (row stride in elements) into smem at sbase as [2][ROWS][64], SW128.");
        e.comment("Thread tid copies 16-byte chunk c = tid % 16 of rows tid / 16 + STEP k: one 64-bit product for its first row, then");
        e.comment("a pointer step per copy (with STEP a multiple of 8 the swizzle, row & 7, is the same for all its rows); only a tile");
        e.comment("that runs past nrows tests its rows");
        e.line("template <int ROWS, int NT = THREADS>");
        e.block("__device__ __forceinline__ void lt_load_tile(unsigned sbase, const T* __restrict__ g, long long stride, "
                + "int row0, int nrows, int tid)", () -> {
            e.line("constexpr int STEP = NT / 16;");
            e.line("const int r0 = tid >> 4, c = tid & 15;");
            e.line("const char* src = reinterpret_cast<const char*>(g + (long long) (row0 + r0) * stride + c * 8);");
            e.line("const long long step = STEP * stride * (long long) sizeof(T);");
            e.block("if (row0 + ROWS <= nrows)", () -> e.unrolled("it", "ROWS * 16 / NT", () -> {
                e.line("const int r = r0 + it * STEP, sw = STEP % 8 == 0 ? (r0 & 7) : (r & 7);");
                e.line("lt_cp_async16(sbase + (c >> 3) * (ROWS * 128) + r * 128 + (((c & 7) ^ sw) << 4), src + it * step, true);");
            }));
            e.block("else", () -> e.unrolled("it", "ROWS * 16 / NT", () -> {
                e.line("const int r = r0 + it * STEP, sw = STEP % 8 == 0 ? (r0 & 7) : (r & 7);");
                e.line("const bool ok = row0 + r < nrows;");
                e.line("lt_cp_async16(sbase + (c >> 3) * (ROWS * 128) + r * 128 + (((c & 7) ^ sw) << 4), ok ? src + it * step : "
                        + "reinterpret_cast<const char*>(g), ok);");
            }));
        });
        e.blank();
    }

    /**
     * One wgmma as an inline-asm function. {@code n}: the N of m64nNk16 (accumulator registers
     * d[n/8][4]); {@code registerA}: A from four registers (P), else from a descriptor (Q).
     */
    static String wgmmaAsm(String name, String params, int n, String mmaType, boolean registerA, boolean transB) {
        int regs = n / 2;
        int accArg = registerA ? regs + 5 : regs + 2;
        StringBuilder s = new StringBuilder();
        s.append("__device__ __forceinline__ void ").append(name).append('(').append(params).append(") {\n");
        s.append("    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %").append(accArg)
                .append(", 0;\\nwgmma.mma_async.sync.aligned.m64n").append(n).append("k16.f32.").append(mmaType)
                .append('.').append(mmaType).append(" {");
        for (int i = 0; i < regs; i++) {
            s.append(i == 0 ? "" : ", ").append('%').append(i);
        }
        if (registerA) {
            s.append("}, {%").append(regs).append(", %").append(regs + 1).append(", %").append(regs + 2)
                    .append(", %").append(regs + 3).append("}, %").append(regs + 4).append(", p, 1, 1, ")
                    .append(transB ? 1 : 0).append(";\\n}\\n\"\n");
        } else {
            s.append("}, %").append(regs).append(", %").append(regs + 1).append(", p, 1, 1, 0, ")
                    .append(transB ? 1 : 0).append(";\\n}\\n\"\n");
        }
        s.append("        : ");
        for (int i = 0; i < regs; i++) {
            s.append(i == 0 ? "" : ", ").append("\"+f\"(d[").append(i / 4).append("][").append(i % 4).append("])");
        }
        s.append("\n        : ");
        if (registerA) {
            s.append("\"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), \"r\"((int) acc)");
        } else {
            s.append("\"l\"(da), \"l\"(db), \"r\"((int) acc)");
        }
        s.append(");\n}");
        return s.toString();
    }
}
