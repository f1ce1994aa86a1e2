package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/** The argument list shared by both attention kernels, and their stride arithmetic. */
final class AttentionParams {
    private AttentionParams() {
    }

    static List<KernelParam> of(String t, AttentionSpec spec) {
        List<KernelParam> p = new ArrayList<>();
        p.add(new KernelParam("const " + t + "* __restrict__", "q"));
        p.add(new KernelParam("const " + t + "* __restrict__", "k"));
        p.add(new KernelParam("const " + t + "* __restrict__", "v"));
        p.add(new KernelParam(t + "* __restrict__", "o"));
        p.add(new KernelParam("int", "heads"));
        p.add(new KernelParam("int", "seq_q"));
        p.add(new KernelParam("int", "seq_k"));
        for (String x : List.of("q", "k", "v", "o")) {
            for (String axis : List.of("b", "h", "s")) {
                p.add(new KernelParam("long long", x + "_s" + axis));
            }
        }
        if (spec.masked()) { // after o's strides: the tensor maps' arguments keep their places
            p.add(new KernelParam("const " + t + "* __restrict__", "amask"));
            for (String axis : List.of("b", "h", "s")) {
                p.add(new KernelParam("long long", "amask_s" + axis));
            }
        }
        if (spec.lse()) { // the saved row log-sum-exp, f32 (b, h, s) contiguous
            p.add(new KernelParam("float* __restrict__", "lse"));
        }
        return p;
    }

    static String signature(String name, List<KernelParam> params, String bounds) {
        return "extern \"C\" __global__ void " + bounds + " " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
    }

    /**
     * Pointers to this (batch, head)'s matrices: {@code bh} = batch * heads + head; k and v those of
     * K/V head {@link #kvHead} (head / group with grouped-query attention).
     */
    static void emitBases(CudaEmitter e, String t, AttentionSpec spec) {
        emitBases(e, t, true, spec);
    }

    /** As {@link #emitBases(CudaEmitter, String, AttentionSpec)}; without {@code inputs} only o's and the mask's (tensor maps address q, k, v). */
    static void emitBases(CudaEmitter e, String t, boolean inputs, AttentionSpec spec) {
        int group = spec.group();
        e.line("const long long bi = bh / heads, hi = bh % heads;");
        if (spec.masked()) {
            e.line("const " + t + "* __restrict__ amb = amask + bi * amask_sb + hi * amask_sh;");
        }
        if (group > 1) {
            e.linef("const long long hkv = hi / %d;  // grouped-query attention: the K/V head this query head reads", group);
        }
        if (!inputs) {
            e.line(t + "* __restrict__ ob = o + bi * o_sb + hi * o_sh;");
            return;
        }
        String kv = kvHead(group);
        e.line("const " + t + "* __restrict__ qb = q + bi * q_sb + hi * q_sh;");
        e.line("const " + t + "* __restrict__ kb = k + bi * k_sb + " + kv + " * k_sh;");
        e.line("const " + t + "* __restrict__ vb = v + bi * v_sb + " + kv + " * v_sh;");
        e.line(t + "* __restrict__ ob = o + bi * o_sb + hi * o_sh;");
    }

    /**
     * {@code MASK_MUL}: what a mask value is multiplied by to join the scores where the kernel adds
     * it: 1/scale to raw scores (the scale folded into the exp2), log2(e) to scores already scaled
     * by scale·log2(e).
     */
    static void emitMaskConstant(CudaEmitter e, AttentionSpec spec, boolean rawScores) {
        if (spec.masked()) {
            e.linef("constexpr float MASK_MUL = %s;  // mask to the scores' domain",
                    ElementwiseRenderer.floatLiteral(rawScores ? 1.0 / spec.scale() : 1.4426950408889634));
        }
    }

    /**
     * Adds the mask to the thread's score elements {@code s} at (row, col) (declared by the caller's
     * {@code pos} line), rows and keys in range only: the ragged masking after it sets the rest to -inf.
     */
    static void emitMaskAdd(CudaEmitter e, AttentionSpec spec, String s, String pos) {
        if (spec.masked()) {
            e.comment("the additive mask, read per element (a (b, 1, 1, t) padding mask stays in L1)");
            e.block("", () -> {
                e.line(pos);
                e.line("if (row < seq_q && col < seq_k) " + s + " += lt_f32(amb[row * amask_ss + col]) * MASK_MUL;");
            });
        }
    }

    /** The variable {@link #emitBases} declares for the K/V head: {@code hi} itself without groups. */
    static String kvHead(int group) {
        return group > 1 ? "hkv" : "hi";
    }

    /**
     * The name of the tensor map over {@code which} ("q", "k", "v") in boxes of {@code rows} rows:
     * {@code tm_<which>_<rows>}, and {@code _g<group>} on k and v with grouped-query attention, so
     * that {@code TensorMaps} encodes them over heads / group heads.
     */
    static String tensorMap(String which, int rows, int group) {
        return "tm_" + which + "_" + rows + (group > 1 && !which.equals("q") ? "_g" + group : "");
    }

    /** cp.async helpers: a 16-byte copy that zero-fills past the end, commit, and waits. */
    static void emitCpAsync(CudaEmitter e, boolean waitOne) {
        e.block("__device__ __forceinline__ void lt_cp_async16(unsigned dst, const void* src, bool valid)", () -> {
            e.comment("src-size 0 zero-fills the 16 bytes: rows past the sequence end read as zeros");
            e.line("asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" :: \"r\"(dst), \"l\"(src), "
                    + "\"r\"(valid ? 16 : 0));");
        });
        e.line("__device__ __forceinline__ void lt_cp_commit() { asm volatile(\"cp.async.commit_group;\\n\" ::); }");
        e.line("__device__ __forceinline__ void lt_cp_wait_all() { asm volatile(\"cp.async.wait_group 0;\\n\" ::: \"memory\"); }");
        if (waitOne) {
            e.line("__device__ __forceinline__ void lt_cp_wait_one() { asm volatile(\"cp.async.wait_group 1;\\n\" ::: \"memory\"); }");
        }
        e.line("template <int N> __device__ __forceinline__ void lt_cp_wait_n() { asm volatile(\"cp.async.wait_group %0;\\n\" :: \"n\"(N) : \"memory\"); }");
    }

    /** {@code lt_pack(lo, hi)}: two f32 rounded into one register of two 16-bit values. */
    static void emitPack(CudaEmitter e, String pack2, String vec2) {
        e.block("__device__ __forceinline__ unsigned lt_pack(float lo, float hi)", () -> {
            e.line(vec2 + " h = " + pack2 + "(lo, hi);");
            e.line("return *reinterpret_cast<unsigned*>(&h);");
        });
    }

    /**
     * The online softmax of one row of a score tile, for the thread's half-row h (inside the
     * caller's loop over h, and over mt when there are several row tiles): the running max of
     * the quad, the correction {@code corr} of the old max, the exponentials in place and the
     * per-thread partial sum. {@code sel} selects the row tile in s, mrow and lrow ("[mt]", or ""
     * with one tile); {@code exp} is the exp2 to call; {@code corr} names the correction, declared
     * here when it is a plain name ("corr") and assigned when it is an element ("corr[h]");
     * {@code explainFold} adds the comment on the folded scale. Rescaling O is the caller's.
     */
    static void emitRowSoftmax(CudaEmitter e, String sel, String exp, String corr, boolean foldScale, boolean explainFold) {
        String s = "s" + sel;
        e.comment("row qrow + " + (sel.isEmpty() ? "" : "16 mt + ") + "8 h: this thread holds " + s
                + "[n][2h..2h+1]; its quad holds the row");
        e.line("float mx = mrow" + sel + "[h];");
        e.unrolled("n", "BC / 8", () -> e.line("mx = fmaxf(mx, fmaxf(" + s + "[n][2 * h], " + s + "[n][2 * h + 1]));"));
        e.line("mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));");
        e.line("mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));");
        e.line("const float muse = mx == -LT_INF ? 0.f : mx;  // all masked so far: keep exp2 finite");
        String def = corr.contains("[") ? corr + " = " : "const float " + corr + " = ";
        if (foldScale) {
            if (explainFold) {
                e.comment("scores are raw here (scale > 0 keeps the max): exp2(s * scale*log2e - max * scale*log2e)");
            }
            e.line(def + exp + "((mrow" + sel + "[h] - muse) * SCALE_LOG2);");
            e.line("const float mneg = -muse * SCALE_LOG2;");
        } else {
            e.line(def + exp + "(mrow" + sel + "[h] - muse);");
        }
        e.line("mrow" + sel + "[h] = mx;");
        e.line("float ls = 0.f;");
        e.unrolled("n", "BC / 8", () -> {
            for (String x : new String[] {s + "[n][2 * h]", s + "[n][2 * h + 1]"}) {
                e.line(x + " = " + exp + (foldScale ? "(fmaf(" + x + ", SCALE_LOG2, mneg));" : "(" + x + " - muse);"));
            }
            e.line("ls += " + s + "[n][2 * h] + " + s + "[n][2 * h + 1];");
        });
        e.line("lrow" + sel + "[h] = lrow" + sel + "[h] * " + corr + " + ls;  // per-thread partial; the quad sum comes at the end");
    }

    /**
     * The quad sum of one row's softmax denominator and the store of O / l from the accumulators,
     * for the thread's row {@code row} (inside the caller's loop over h): {@code sel} selects the
     * row tile in lrow and oacc ("[mt]", or "" with one tile), {@code n8} is the number of
     * 8-column accumulator groups. With {@link AttentionSpec#lse} the quad's first thread also
     * writes the row's lse from its max (raw scores when the scale is folded into the exp2, else
     * in the log2 domain) and sum.
     */
    static void emitRowStore(CudaEmitter e, AttentionSpec spec, String sel, String row, String n8, String pack2, String vec2) {
        e.line("float l = lrow" + sel + "[h];");
        e.line("l += __shfl_xor_sync(0xffffffffu, l, 1);");
        e.line("l += __shfl_xor_sync(0xffffffffu, l, 2);");
        e.line("const float inv = l > 0.f ? 1.f / l : 0.f;");
        e.line("const int row = " + row + ";");
        if (spec.lse()) {
            String max = "mrow" + sel + "[h]" + (spec.scale() > 0 ? " * SCALE_LOG2" : "");
            e.comment("the saved lse = ln(sum) + max, from log2: a row that sees no key has l = 0 and lse = -inf");
            e.line("if (t4 == 0 && row < seq_q) lse[bh * seq_q + row] = l > 0.f ? (" + max + " + log2f(l)) * 0.6931471805599453f : -LT_INF;");
        }
        e.block("if (row < seq_q)", () -> e.unrolled("n", n8, () ->
                e.line("*reinterpret_cast<" + vec2 + "*>(ob + row * o_ss + n * 8 + 2 * t4) = "
                        + pack2 + "(oacc" + sel + "[n][2 * h] * inv, oacc" + sel + "[n][2 * h + 1] * inv);")));
    }

    /**
     * The device helpers of the mma.sync attention kernels, forward and backward: cp.async copies
     * ({@code waitOne}: with the wait for all but the newest group), {@code ldmatrix} x4 plain and
     * transposed, the {@code mma.sync.m16n8k16} f32-accumulating product for {@code mmaType}, the
     * pack of two f32 into one 16-bit pair, and the swizzled ROWS x D tile load (rows past nrows read
     * as 0). The kernel's constants (D, THREADS, CH) and element type T are declared before them.
     */
    static void emitMmaHelpers(CudaEmitter e, boolean waitOne, String mmaType, String pack2, String vec2) {
        emitCpAsync(e, waitOne);
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
        emitPack(e, pack2, vec2);
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
    }
}
