package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every op autodiff emits, fuse-norm's norm_weight_grad and residual norm gradients, and the GEMM transposes a backward
 * graph uses, on the GPU against the float64 reference: seeded random odd and prime shapes (rows 1–299, widths 1–1499,
 * primes, widths under a warp), f32, bf16 and f16 (165 cases, 3 of norm_weight_grad at thousands of rows and past
 * 4096 columns, 21 + 3 of a norm's dx and dw in one fused kernel, both outputs checked, and 3 of scatter_add at 1025 to 16383 ids, where the sort holds several keys a thread), inputs drawn fresh per case (integer ids with repeats and ignored targets). Each case
 * also runs in strict mode (CompileOptions.deterministic) twice, bit-identical. Tolerances
 * (||gpu - ref|| / ||ref||): 2e-5 in f32 (row reductions of up to 1500 f32 terms), 1e-2 in bf16
 * and f16 (one rounding of every output to 8 or 11 bits).
 *
 * <p>The embedding lookup the steps start with (the row-by-row {@code GatherSpec} kernel): on raw
 * buffers ({@link GatherKernelRuns}) over seeded random odd shapes, bit for bit the table's elements,
 * NaN rows for ids out of range, the same at a misaligned offset (the element loop); through a
 * session against the float64 reference exactly (axis 0 and 1, 2-D, negative and i32 ids); and its
 * speed at the training steps' shapes.
 */
@Tag("gpu")
class BackwardOpsGpuTest {
    static final long SEED = Long.getLong("lantern.backwardOps.seed", 16);

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(SEED);
        String[] ops = {"gelu_grad_none", "gelu_grad_tanh", "silu_grad", "relu_grad", "softmax_grad", "rms_norm_grad",
                "layer_norm_grad", "rms_norm_grad_residual", "layer_norm_grad_add", "reduce_rows", "reduce_cols", "reduce_all",
                "reduce_mid_keep", "cross_entropy", "cross_entropy_grad", "scatter_add", "rope_inverse", "matmul_ta", "matmul_tb",
                "matmul_batched_ta", "matmul_broadcast_tb", "norm_weight_grad_rms", "norm_weight_grad_layer", "norm_backward_rms",
                "norm_backward_layer", "norm_backward_rms_residual"};
        for (String op : ops) {
            for (DType t : new DType[] {DType.F32, DType.BF16, DType.F16}) {
                // every shape kind in f32, two in bf16, one in f16: each shape is its own NVRTC compile
                for (int i = 0; i < (t == DType.F32 ? 3 : t == DType.BF16 ? 2 : 1); i++) {
                    int rows = odd(r, 300);
                    // an odd width up to 1499, a prime, a tiny one (1 to 5: under a warp)
                    int cols = i == 0 ? 1 + 2 * r.nextInt(750) : i == 1 ? new int[] {13, 97, 1009}[r.nextInt(3)] : 1 + r.nextInt(5);
                    if (op.contains("layer") && cols < 3) {
                        // a layer norm of 1 or 2 columns is constant (0, or ±1 times w): its dx is 0 mathematically and a
                        // relative error against it measures only rounding; 3 columns is the narrowest meaningful row
                        cols = 3;
                    }
                    all.add(Arguments.of(op, t, rows, cols, r.nextLong()));
                }
            }
        }
        // norm_weight_grad past one row per chunk (many rows) and past one column block (wider than 4096)
        all.add(Arguments.of("norm_weight_grad_rms", DType.BF16, 2049, 4099, r.nextLong()));
        all.add(Arguments.of("norm_weight_grad_layer", DType.F32, 1031, 5003, r.nextLong()));
        all.add(Arguments.of("norm_weight_grad_layer", DType.F16, 1537, 4096, r.nextLong()));
        // a norm's dx and dw in one kernel (NormBackwardSpec) at many rows a chunk: odd widths, the row at 4096 (16 a thread),
        // one past it (the two kernels again)
        all.add(Arguments.of("norm_backward_rms_residual", DType.F32, 3001, 4096, r.nextLong()));
        all.add(Arguments.of("norm_backward_layer", DType.BF16, 2049, 3001, r.nextLong()));
        all.add(Arguments.of("norm_backward_rms", DType.F16, 777, 4097, r.nextLong()));
        // the sorted scatter_add past one key a thread (2, 8 and 16 keys a thread in registers, strides across warps)
        all.add(Arguments.of("scatter_add", DType.F32, 1025, 7, r.nextLong()));
        all.add(Arguments.of("scatter_add", DType.BF16, 6007, 33, r.nextLong()));
        all.add(Arguments.of("scatter_add", DType.F32, 16383, 5, r.nextLong()));
        return all.stream();
    }

    private static int odd(SplittableRandom r, int max) {
        return 1 + 2 * r.nextInt(max / 2);
    }

    /** The graph of one case over %x, %dy (rows, cols), %w (cols), %t (rows) ids, %dl a scalar. */
    static String body(String op, String t, int rows, int cols) {
        String rc = t + "[" + rows + "," + cols + "]";
        String x = "  %x = input {name=\"x\"} : " + rc + "\n";
        String dy = "  %dy = input {name=\"dy\"} : " + rc + "\n";
        String w = "  %w = param {name=\"w\"} : " + t + "[" + cols + "]\n";
        String ids = "  %t = input {name=\"t\"} : i64[" + rows + "]\n";
        String res = "  %res = input {name=\"res\"} : " + rc + "\n";
        return switch (op) {
            case "gelu_grad_none" -> x + dy + "  %y = gelu_grad(%x, %dy) {approximate=\"none\"} : " + rc + "\n";
            case "gelu_grad_tanh" -> x + dy + "  %y = gelu_grad(%x, %dy) {approximate=\"tanh\"} : " + rc + "\n";
            case "silu_grad" -> x + dy + "  %y = silu_grad(%x, %dy) : " + rc + "\n";
            case "relu_grad" -> x + dy + "  %y = relu_grad(%x, %dy) : " + rc + "\n";
            case "softmax_grad" -> x + dy + "  %s = softmax(%x) {scale=0.7} : " + rc + "\n  %y = softmax_grad(%s, %dy) {scale=0.7} : " + rc + "\n";
            case "rms_norm_grad" -> x + w + dy + "  %y = rms_norm_grad(%x, %w, %dy) {eps=1.0E-6} : " + rc + "\n";
            case "layer_norm_grad" -> x + w + dy + "  %y = layer_norm_grad(%x, %w, %dy) {eps=1.0E-5} : " + rc + "\n";
            // the residual form written out, and the add that fuse-norm folds into dx (one kernel, dx + r rounded once)
            case "rms_norm_grad_residual" -> x + w + dy + res + "  %y = rms_norm_grad(%x, %w, %dy, %res) {eps=1.0E-6, residual=true} : "
                    + rc + "\n";
            case "layer_norm_grad_add" -> x + w + dy + res + "  %g = layer_norm_grad(%x, %w, %dy) {eps=1.0E-5} : " + rc + "\n"
                    + "  %y = add(%res, %g) : " + rc + "\n";
            case "reduce_rows" -> x + "  %y = reduce_sum(%x) {axes=[0]} : " + t + "[" + cols + "]\n";
            case "reduce_cols" -> x + "  %y = reduce_sum(%x) {axes=[1]} : " + t + "[" + rows + "]\n";
            case "reduce_all" -> x + "  %y = reduce_sum(%x) {axes=[0,1]} : " + t + "[]\n";
            case "reduce_mid_keep" -> "  %x = input {name=\"x\"} : " + t + "[3," + rows + "," + cols + "]\n"
                    + "  %y = reduce_sum(%x) {axes=[1], keepdims=true} : " + t + "[3,1," + cols + "]\n";
            case "cross_entropy" -> x + ids + "  %y = cross_entropy(%x, %t) : " + t + "[]\n";
            case "cross_entropy_grad" -> x + ids + "  %dl = input {name=\"dl\"} : " + t + "[]\n"
                    + "  %y = cross_entropy_grad(%x, %t, %dl) : " + rc + "\n";
            case "scatter_add" -> x + ids + "  %y = scatter_add(%x, %t) {axis=0, size=" + (rows / 3 + 2) + "} : "
                    + t + "[" + (rows / 3 + 2) + "," + cols + "]\n";
            case "rope_inverse" -> "  %x = input {name=\"x\"} : " + t + "[1,3," + rows + "," + (2 * cols) + "]\n"
                    + "  %y = rope(%x) {base=10000.0, inverse=true, offset=3} : " + t + "[1,3," + rows + "," + (2 * cols) + "]\n";
            case "matmul_ta" -> x + "  %b = input {name=\"b\"} : " + t + "[" + rows + ",37]\n"
                    + "  %y = matmul(%x, %b) {transpose_a=true} : " + t + "[" + cols + ",37]\n";
            case "matmul_tb" -> x + "  %b = input {name=\"b\"} : " + t + "[41," + cols + "]\n"
                    + "  %y = matmul(%x, %b) {transpose_b=true} : " + t + "[" + rows + ",41]\n";
            case "matmul_batched_ta" -> "  %x = input {name=\"x\"} : " + t + "[3," + rows + ",29]\n"
                    + "  %b = input {name=\"b\"} : " + t + "[3," + rows + ",31]\n"
                    + "  %y = matmul(%x, %b) {transpose_a=true} : " + t + "[3,29,31]\n";
            // grouped-query attention's scores: 2 K heads shared by groups of 3 query heads (a broadcast batch dim)
            case "matmul_broadcast_tb" -> "  %x = input {name=\"x\"} : " + t + "[2,3," + rows + ",19]\n"
                    + "  %b = input {name=\"b\"} : " + t + "[2,1," + cols + ",19]\n"
                    + "  %y = matmul(%x, %b) {transpose_b=true} : " + t + "[2,3," + rows + "," + cols + "]\n";
            case "norm_weight_grad_rms" -> x + dy + "  %y = norm_weight_grad(%x, %dy) {eps=1.0E-6, kind=\"rms\"} : " + t + "[" + cols + "]\n";
            case "norm_weight_grad_layer" -> x + dy + "  %y = norm_weight_grad(%x, %dy) {eps=1.0E-5, kind=\"layer\"} : " + t + "[" + cols + "]\n";
            // dw before dx, both returned (autodiff's order): one fused kernel writes dx and dw's partials, then FINISH
            case "norm_backward_rms" -> x + w + dy + "  %dw = norm_weight_grad(%x, %dy) {eps=1.0E-6, kind=\"rms\"} : " + t + "[" + cols + "]\n"
                    + "  %y = rms_norm_grad(%x, %w, %dy) {eps=1.0E-6} : " + rc + "\n";
            case "norm_backward_layer" -> x + w + dy + "  %dw = norm_weight_grad(%x, %dy) {eps=1.0E-5, kind=\"layer\"} : " + t + "[" + cols
                    + "]\n  %y = layer_norm_grad(%x, %w, %dy) {eps=1.0E-5} : " + rc + "\n";
            case "norm_backward_rms_residual" -> x + w + dy + res + "  %dw = norm_weight_grad(%x, %dy) {eps=1.0E-6, kind=\"rms\"} : " + t
                    + "[" + cols + "]\n  %y = rms_norm_grad(%x, %w, %dy, %res) {eps=1.0E-6, residual=true} : " + rc + "\n";
            default -> throw new IllegalArgumentException(op);
        };
    }

    /**
     * A case's inputs into {@code in} and its parameters into {@code params}, drawn from {@code r} in node order: ids
     * with repeats (cross-entropy targets ignored, -100, one time in 7), norm weights near 1, the scalar dl 0.75, the
     * rest N(0, 4). {@link NormBackwardProbe} draws its cases' the same way.
     */
    static void draw(Graph g, String op, int rows, int cols, SplittableRandom r, Map<String, Tensor> in, Map<String, Tensor> params) {
        for (Node n : g.nodes()) {
            if (n.op() != dev.lantern.ir.Op.INPUT && n.op() != dev.lantern.ir.Op.PARAM) {
                continue;
            }
            String name = n.attrs().getString("name", n.name());
            Tensor v = Tensor.allocate(n.type().dtype(), n.type().shape());
            for (long i = 0; i < v.numel(); i++) {
                v.set(i, switch (name) {
                    case "t" -> op.startsWith("cross") && i > 0 && r.nextInt(7) == 0 ? -100 : r.nextInt(op.equals("scatter_add") ? rows / 3 + 2 : cols);
                    case "w" -> (float) (1 + 0.3 * r.nextGaussian());
                    case "dl" -> 0.75f;
                    default -> (float) (2 * r.nextGaussian());
                });
            }
            (n.op() == dev.lantern.ir.Op.PARAM ? params : in).put(name, v);
        }
    }

    @ParameterizedTest(name = "{0} {1} {2}x{3}")
    @MethodSource("cases")
    void matchesTheFloat64Reference(String op, DType dtype, int rows, int cols, long seed) {
        Gpu.device();
        String t = dtype.name().toLowerCase(Locale.ROOT);
        boolean both = op.startsWith("norm_backward");
        Graph g = IrParser.parse("graph @case {\n" + body(op, t, rows, cols) + (both ? "  return %y, %dw\n}\n" : "  return %y\n}\n"));
        Map<String, Tensor> in = new HashMap<>();
        Map<String, Tensor> params = new HashMap<>();
        draw(g, op, rows, cols, new SplittableRandom(seed), in, params);
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(in);
        var refs = ReferenceInterpreter.run(g, all);
        double tol = dtype == DType.F32 ? 2e-5 : 1e-2;
        String what = op + " " + dtype + " " + rows + "x" + cols + " (seed " + seed + ")";
        for (boolean strict : new boolean[] {false, true}) {
            Program p = Lantern.compile(g, CompileOptions.defaults().withTarget("cuda").withDeterministic(strict));
            try (Session s = p.load(Device.cuda(0), Weights.of(params), RunMode.COMPILED)) {
                var firstRun = s.run(in);
                var second = strict ? s.run(in) : null;
                for (String out : both ? List.of("y", "dw") : List.of("y")) {
                    double[] first = firstRun.get(out).toDoubles();
                    double e = Accuracy.relErr(first, refs.get(out).data());
                    assertTrue(e <= tol, what + " " + out + (strict ? " strict" : "") + ": rel err " + e + " > " + tol);
                    if (strict) {
                        assertArrayEquals(first, second.get(out).toDoubles(), what + " " + out + ": strict mode, two runs differ");
                    }
                }
            }
        }
    }

    /**
     * add(rms_norm_grad(x, w, dy), r) in f32: the fused step's residual form (one kernel) and the eager
     * step's add (two) agree bit for bit, at odd and prime widths (seeded random inputs).
     */
    @org.junit.jupiter.api.Test
    void theResidualFormIsTheEagerAddBitForBitInF32() {
        Gpu.device();
        SplittableRandom r = new SplittableRandom(SEED);
        for (int[] rc : new int[][] {{7, 1009}, {33, 13}, {5, 3}, {3, 4099}}) {
            String t = "f32[" + rc[0] + "," + rc[1] + "]";
            Graph g = IrParser.parse("graph @case {\n  %x = input {name=\"x\"} : " + t + "\n  %dy = input {name=\"dy\"} : " + t
                    + "\n  %res = input {name=\"res\"} : " + t + "\n  %w = param {name=\"w\"} : f32[" + rc[1] + "]\n"
                    + "  %g = rms_norm_grad(%x, %w, %dy) {eps=1.0E-6} : " + t + "\n  %y = add(%g, %res) : " + t + "\n  return %y\n}\n");
            Map<String, Tensor> in = new HashMap<>();
            for (String name : List.of("x", "dy", "res")) {
                Tensor v = Tensor.allocate(DType.F32, dev.lantern.ir.Shape.of(rc[0], rc[1]));
                for (long i = 0; i < v.numel(); i++) {
                    v.set(i, (float) (2 * r.nextGaussian()));
                }
                in.put(name, v);
            }
            Tensor w = Tensor.allocate(DType.F32, dev.lantern.ir.Shape.of(rc[1]));
            for (long i = 0; i < w.numel(); i++) {
                w.set(i, (float) (1 + 0.3 * r.nextGaussian()));
            }
            Program p = Lantern.compile(g, CompileOptions.defaults().withTarget("cuda"));
            assertTrue(p.model().graph().nodes().stream().anyMatch(n -> n.attrs().getBool("residual", false)), "fuse-norm folds the add");
            try (Session fused = p.load(Device.cuda(0), Weights.of(Map.of("w", w)), RunMode.COMPILED);
                    Session eager = p.load(Device.cuda(0), Weights.of(Map.of("w", w)), RunMode.EAGER)) {
                assertArrayEquals(eager.run(in).get("y").toDoubles(), fused.run(in).get("y").toDoubles(), rc[0] + "x" + rc[1]);
            }
        }
    }

    /** A target or id from the caller outside its range fails as on the CPU, before the upload (the kernels never read through it). */
    @org.junit.jupiter.api.Test
    void badTargetsAndIdsAreTypedErrors() {
        Gpu.device();
        for (String op : new String[] {"cross_entropy", "scatter_add"}) {
            Graph g = IrParser.parse("graph @case {\n" + body(op, "f32", 5, 13) + "  return %y\n}\n");
            Tensor x = Tensor.allocate(DType.F32, dev.lantern.ir.Shape.of(5, 13));
            Tensor t = Tensor.allocate(DType.I64, dev.lantern.ir.Shape.of(5));
            t.set(3, op.equals("cross_entropy") ? 13 : 5 / 3 + 2 + 4);
            Program p = Lantern.compile(g, CompileOptions.defaults().withTarget("cuda"));
            try (Session s = p.load(Device.cuda(0), Weights.of(Map.of()), RunMode.COMPILED)) {
                dev.lantern.ir.IndexOutOfRangeException e = org.junit.jupiter.api.Assertions.assertThrows(
                        dev.lantern.ir.IndexOutOfRangeException.class, () -> s.run(Map.of("x", x, "t", t)));
                assertTrue(e.getMessage().contains("position 3"), e.getMessage());
            }
        }
    }

    static Stream<Arguments> gatherCases() {
        List<Arguments> all = new ArrayList<>();
        SplittableRandom r = new SplittableRandom(SEED);
        // {outer, count, rows, inner}: the LLaMA-shaped lookup's width, a wide row in blocks with outer > 1,
        // narrow vector rows sharing a CTA, odd widths, one-element rows, a prime count
        long[][] shapes = {{1, 211, 97, 2048}, {3, 37, 11, 4104}, {2, 97, 5, 24}, {1, 13, 7, 129}, {2, 101, 3, 1}, {1, 2, 1, 1000}};
        for (long[] sh : shapes) {
            for (DType t : new DType[] {DType.F32, DType.BF16, DType.F16}) {
                all.add(Arguments.of(sh[0], sh[1], sh[2], sh[3], t, r.nextBoolean() ? DType.I64 : DType.I32, r.nextLong()));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "gather {4} ids {5} [{0}] {1} of {2}x{3}")
    @MethodSource("gatherCases")
    void gatherKernelCopiesRowsBitForBit(long outer, long count, long rows, long inner, DType dtype, DType idsType, long seed) {
        Gpu.device();
        SplittableRandom r = new SplittableRandom(seed);
        long[] ids = new long[(int) count];
        for (int k = 0; k < count; k++) {
            // in range, negative from the end, and one in five out of range either way (computed ids can be anything)
            ids[k] = switch (r.nextInt(10)) {
                case 0 -> rows + r.nextInt(3);
                case 1 -> -rows - 1 - r.nextInt(3);
                case 2, 3 -> -1 - r.nextInt((int) rows);
                default -> r.nextInt((int) rows);
            };
        }
        dev.lantern.cuda.codegen.GatherSpec spec = new dev.lantern.cuda.codegen.GatherSpec("lt_gather_case", outer, count, rows, inner, dtype,
                idsType);
        for (int offset : new int[] {0, 1}) { // aligned, and one element off: the element loop
            org.junit.jupiter.api.Assertions.assertEquals("", GatherKernelRuns.check(spec, ids, offset, r.nextLong()));
        }
    }

    @org.junit.jupiter.api.Test
    void gatherThroughASessionMatchesTheReference() {
        Gpu.device();
        String[] graphs = {
            // axis 0, 2-D i64 ids with negatives, f32 rows of 2048 (16-byte vectors)
            "  %x = input {name=\"x\"} : f32[97,2048]\n  %t = input {name=\"t\"} : i64[3,37]\n"
                    + "  %y = gather(%x, %t) {axis=0} : f32[3,37,2048]\n",
            // axis 1 (outer 3), i32 ids, bf16 rows of 129 (element by element)
            "  %x = input {name=\"x\"} : bf16[3,11,129]\n  %t = input {name=\"t\"} : i32[41]\n"
                    + "  %y = gather(%x, %t) {axis=1} : bf16[3,41,129]\n",
            // axis 1 of a 4-D table, f16 rows of 8 x 3
            "  %x = input {name=\"x\"} : f16[2,13,8,3]\n  %t = input {name=\"t\"} : i64[5]\n"
                    + "  %y = gather(%x, %t) {axis=1} : f16[2,5,8,3]\n"};
        long[] tableRows = {97, 11, 13}; // the gathered axis's length in each
        SplittableRandom r = new SplittableRandom(SEED);
        for (int c = 0; c < graphs.length; c++) {
            String body = graphs[c];
            long rows = tableRows[c];
            Graph g = IrParser.parse("graph @gather {\n" + body + "  return %y\n}\n");
            Map<String, Tensor> in = new HashMap<>();
            for (Node n : g.nodes()) {
                if (n.op() != dev.lantern.ir.Op.INPUT) {
                    continue;
                }
                String name = n.attrs().getString("name", n.name());
                Tensor v = Tensor.allocate(n.type().dtype(), n.type().shape());
                for (long i = 0; i < v.numel(); i++) {
                    v.set(i, name.equals("t") ? r.nextInt((int) (2 * rows)) - rows : (float) (2 * r.nextGaussian()));
                }
                in.put(name, v);
            }
            double[] ref = ReferenceInterpreter.run(g, in).get("y").data();
            Program p = Lantern.compile(g, CompileOptions.defaults().withTarget("cuda"));
            try (Session s = p.load(Device.cuda(0), Weights.of(Map.of()), RunMode.COMPILED)) {
                assertArrayEquals(ref, s.run(in).get("y").toDoubles(), body);
            }
        }
    }

    /**
     * The training steps' lookups at speed: the decoder block's 16 384 ids of 4096 f32 (268 MB read
     * and 268 MB written; the element-by-element kernel ran at ~140 GB/s, 1.83 ms) and the
     * LLaMA-shaped model's 2048 ids of 2048 f32 out of 32 000 (17 + 17 MB). Loose bounds, figures printed.
     */
    @org.junit.jupiter.api.Test
    void gatherRunsNearMemorySpeedAtTheStepsShapes() {
        Gpu.device();
        dev.lantern.cuda.codegen.GatherSpec block = new dev.lantern.cuda.codegen.GatherSpec("lt_gather_block", 1, 16384, 64, 4096, DType.F32,
                DType.I64);
        dev.lantern.cuda.codegen.GatherSpec llama = new dev.lantern.cuda.codegen.GatherSpec("lt_gather_llama", 1, 2048, 32000, 2048, DType.F32,
                DType.I64);
        double blockMs = GatherKernelRuns.medianMillis(block, 20);
        double llamaMs = GatherKernelRuns.medianMillis(llama, 20);
        double blockGbs = 2.0 * block.numel() * 4 / (blockMs * 1e6);
        double llamaGbs = 2.0 * llama.numel() * 4 / (llamaMs * 1e6);
        System.out.printf(Locale.ROOT, "[gather] decoder block 16384x4096 f32: %.3f ms, %.0f GB/s; LLaMA 2048x2048 f32: %.4f ms, %.0f GB/s%n",
                blockMs, blockGbs, llamaMs, llamaGbs);
        assertTrue(blockGbs >= 1000, "decoder block's gather at " + blockGbs + " GB/s (" + blockMs + " ms)");
        assertTrue(llamaMs <= 0.1, "LLaMA-shaped gather takes " + llamaMs + " ms");
    }
}
