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
 * The sorted scatter_add alone (its one-CTA sort and the per-row sums; no cuBLASLt), so that
 * compute-sanitizer's memcheck and racecheck can run it (scripts/gpu-sanitize): ids from 33 to
 * 16 384 (1 to 16 keys a thread, strides within a thread, a warp and across warps), some negative and
 * some out of range, into 64 rows; each result bit for bit the float64 reference's sums rounded once.
 * Exits 1 when one is off.
 */
public final class ScatterSortProbe {
    private ScatterSortProbe() {}

    public static void main(String[] args) {
        StringBuilder bad = new StringBuilder();
        SplittableRandom r = new SplittableRandom(23);
        try (CudaDevice gpu = CudaDevice.open(0)) {
            for (int count : new int[] {33, 1000, 4097, 16384}) {
                int rows = 64;
                int cols = 3 + r.nextInt(40);
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
        }
        System.out.println(bad.isEmpty() ? "scatter sort probe: OK" : "scatter sort probe: FAILED\n" + bad);
        if (!bad.isEmpty()) {
            System.exit(1);
        }
    }
}
