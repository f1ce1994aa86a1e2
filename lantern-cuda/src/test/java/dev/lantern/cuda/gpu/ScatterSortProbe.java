package dev.lantern.cuda.gpu;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Shape;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The sorted scatter_add alone (its one-CTA radix sort and the per-row sums; no cuBLASLt), so that
 * compute-sanitizer's memcheck and racecheck can run it (scripts/gpu-sanitize): ids from 33 to
 * 16 384 (one round of 32 a warp to sixteen, warps with no ids), some negative, into tables of 64,
 * 300 and 70 000 rows (one, two and three digit passes), with widths that take the 16-byte sum
 * (a multiple of 4 f32 columns) and widths that do not; each result bit for bit the float64
 * reference's sums rounded once. Then, unless {@code --no-timing}, the step's shape (16 384 ids into
 * 64 rows of 4 096, f32 and bf16; a tenth of the ids on row 0, as the decoder's separator token)
 * timed on the device ({@code CudaSession.timeMs}: the two kernels) and per kernel.
 * Exits 1 when a sum is off.
 */
public final class ScatterSortProbe {
    private ScatterSortProbe() {}

    public static void main(String[] args) {
        StringBuilder bad = new StringBuilder();
        SplittableRandom r = new SplittableRandom(23);
        try (CudaDevice gpu = CudaDevice.open(0)) {
            int[][] cases = {{33, 64}, {1000, 64}, {4097, 64}, {16384, 64}, {1025, 300}, {16384, 300}, {4097, 70_000}, {16384, 70_000}};
            for (int c = 0; c < cases.length; c++) {
                int count = cases[c][0];
                int rows = cases[c][1];
                int cols = c % 2 == 0 ? 4 * (1 + r.nextInt(10)) : 3 + 4 * r.nextInt(10);
                Graph g = IrParser.parse("graph @scatter {\n"
                        + "  %x = input {name=\"x\"} : f32[" + count + "," + cols + "]\n"
                        + "  %t = input {name=\"t\"} : i64[" + count + "]\n"
                        + "  %y = scatter_add(%x, %t) {axis=0, size=" + rows + "} : f32[" + rows + "," + cols + "]\n"
                        + "  return %y\n}\n");
                Tensor x = Tensor.allocate(DType.F32, Shape.of(count, cols));
                Tensor t = Tensor.allocate(DType.I64, Shape.of(count));
                for (long i = 0; i < x.numel(); i++) {
                    x.set(i, (float) r.nextGaussian());
                }
                for (int i = 0; i < count; i++) {
                    t.set(i, r.nextInt(10) == 0 ? -1 - r.nextInt(rows) : r.nextInt(rows));
                }
                Map<String, Tensor> in = Map.of("x", x, "t", t);
                RefTensor ref = ReferenceInterpreter.run(g, in).get("y");
                try (CudaSession s = CudaSession.open(gpu, g, Map.of(), CudaSession.Options.compiled())) {
                    s.setInputs(in);
                    s.forward();
                    double[] got = s.output("y").toDoubles();
                    int off = 0;
                    for (int i = 0; i < got.length; i++) {
                        off += got[i] == (double) (float) ref.data()[i] ? 0 : 1;
                    }
                    String line = count + " ids into " + rows + "x" + cols + ": " + off + " of " + got.length + " sums differ from float64 rounded once";
                    System.out.println("[scatter-sort-probe] " + line);
                    if (off != 0) {
                        bad.append(line).append('\n');
                    }
                }
            }
            if (args.length == 0 || !args[0].equals("--no-timing")) {
                for (DType t : new DType[] {DType.F32, DType.BF16}) {
                    System.out.println("[scatter-sort-probe] " + timeStepShape(gpu, t, r));
                }
            }
        }
        System.out.println(bad.isEmpty() ? "scatter sort probe: OK" : "scatter sort probe: FAILED\n" + bad);
        if (!bad.isEmpty()) {
            System.exit(1);
        }
    }

    /** The embedding gradient of the decoder step: 16 384 ids into 64 rows of 4 096, forwards timed by the host. */
    private static String timeStepShape(CudaDevice gpu, DType t, SplittableRandom r) {
        int count = 16384;
        int rows = 64;
        int cols = 4096;
        String ty = t == DType.F32 ? "f32" : "bf16";
        Graph g = IrParser.parse("graph @scatter {\n"
                + "  %x = input {name=\"x\"} : " + ty + "[" + count + "," + cols + "]\n"
                + "  %t = input {name=\"t\"} : i64[" + count + "]\n"
                + "  %y = scatter_add(%x, %t) {axis=0, size=" + rows + "} : " + ty + "[" + rows + "," + cols + "]\n"
                + "  return %y\n}\n");
        Tensor x = Tensor.allocate(t, Shape.of(count, cols));
        Tensor ids = Tensor.allocate(DType.I64, Shape.of(count));
        for (long i = 0; i < x.numel(); i++) {
            x.set(i, (float) r.nextGaussian());
        }
        for (int i = 0; i < count; i++) {
            ids.set(i, r.nextInt(10) == 0 ? 0 : r.nextInt(rows));
        }
        try (CudaSession s = CudaSession.open(gpu, g, Map.of(), CudaSession.Options.compiled())) {
            s.setInputs(Map.of("x", x, "t", ids));
            double ms = s.timeMs(s::forward, 3, 20);
            StringBuilder per = new StringBuilder();
            for (CudaSession.StepTime st : s.profile(2, 5)) {
                per.append(String.format(java.util.Locale.ROOT, "; %s %.3f ms", st.op(), st.ms()));
            }
            return String.format(java.util.Locale.ROOT, "%d ids into %dx%d %s: %.3f ms device-timed%s", count, rows, cols, ty, ms, per);
        }
    }
}
