package dev.lantern.cli;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.GraphHash;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.Node;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.reference.RefTensor;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code lantern demo}: build a benchmark block, run it on the best device present, check it
 * against the float64 reference, and print device, config, graph hash, op count, median time per
 * forward and relative error.
 */
final class DemoCommand {
    private DemoCommand() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("demo", argv, Set.of("json"), Set.of("config", "dump-ir", "device", "seed", "runs", "amp"));
        if (!a.positional().isEmpty()) {
            throw new UsageException("demo: unexpected argument '" + a.positional().getFirst() + "'");
        }
        BlockConfig cfg = BlockConfig.named(a.get("config", "cpu-small"));
        String device = a.get("device", "auto");
        if (!List.of("auto", "cpu", "cuda").contains(device)) {
            throw new UsageException("demo: --device must be auto, cpu or cuda, found '" + device + "'");
        }
        long seed = a.getLong("demo", "seed", 0);
        int runs = a.getInt("demo", "runs", 20, 1, 100000);

        Model model = TransformerBlock.build(cfg, DType.F32);
        Graph g = model.graph();
        if (a.get("dump-ir", null) != null) {
            Files2.writeAtomically(Path.of(a.get("dump-ir", null)), IrPrinter.print(g));
        }
        Map<String, Tensor> feeds = feeds(model, seed);
        Map<String, RefTensor> ref = ReferenceInterpreter.run(g, feeds);

        EagerExecutor eager = new EagerExecutor();
        Map<String, Tensor> result = null;
        double[] ms = new double[runs];
        for (int i = -2; i < runs; i++) { // two warm-up forwards
            long t0 = System.nanoTime();
            result = eager.run(g, feeds);
            if (i >= 0) {
                ms[i] = (System.nanoTime() - t0) / 1e6;
            }
        }
        String outName = g.outputs().getFirst();
        double relErr = relErr(result.get(outName).toFloats(), ref.get(outName).data());

        Map<String, Object> r = new LinkedHashMap<>();
        r.put("device", "cpu");
        r.put("device_name", Runtime.getRuntime().availableProcessors() + " cores, "
                + jdk.incubator.vector.FloatVector.SPECIES_PREFERRED.vectorBitSize() + "-bit vectors");
        r.put("config", cfg.name());
        r.put("shape", cfg.batch() + "x" + cfg.seq() + "x" + cfg.hidden());
        r.put("dtype", "f32");
        r.put("graph_hash", GraphHash.of(g));
        r.put("ops", g.computeNodes().size());
        r.put("ms", round(median(ms), 4));
        r.put("rel_err", relErr);
        r.put("seed", seed);
        if (a.flag("json")) {
            out.println(Json.write(r));
        } else {
            printTable(out, r);
        }
        return Double.isFinite(relErr) && relErr <= 1e-5 ? 0 : 1;
    }

    /** Weights from the model's initialisers and an input x ~ N(0, 1), all drawn from {@code seed}. */
    static Map<String, Tensor> feeds(Model model, long seed) {
        Map<String, Tensor> f = new LinkedHashMap<>(model.parameters(seed));
        for (Node in : model.graph().inputs()) {
            String name = in.attrs().getString("name", in.name());
            f.put(name, Philox.normal(Tensor.allocate(in.type()), Philox.key(seed, "input." + name), 1f));
        }
        return f;
    }

    static double relErr(float[] out, double[] ref) {
        double num = 0;
        double den = 0;
        for (int i = 0; i < ref.length; i++) {
            double d = out[i] - ref[i];
            num += d * d;
            den += ref[i] * ref[i];
        }
        return Math.sqrt(num / den);
    }

    static double median(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    static double round(double x, int digits) {
        double p = Math.pow(10, digits);
        return Math.round(x * p) / p;
    }

    private static void printTable(PrintStream out, Map<String, Object> r) {
        out.printf("device       %s (%s)%n", r.get("device"), r.get("device_name"));
        out.printf("config       %s (%s), %s%n", r.get("config"), r.get("shape"), r.get("dtype"));
        out.printf("graph hash   %s%n", r.get("graph_hash"));
        out.printf("ops          %s%n", r.get("ops"));
        out.printf("ms           %.3f median per forward%n", (double) r.get("ms"));
        out.printf("rel_err      %.3e (||out - ref|| / ||ref||, float64 reference)%n", (double) r.get("rel_err"));
    }
}
