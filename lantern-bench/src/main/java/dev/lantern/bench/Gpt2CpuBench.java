package dev.lantern.bench;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.bench.cpu.CpuMachine;
import dev.lantern.cpu.CpuConfig;
import dev.lantern.engine.CompileOptions;
import dev.lantern.onnx.OnnxModel;
import dev.lantern.tensor.Npy;
import dev.lantern.tensor.Tensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static dev.lantern.bench.cpu.CpuMachine.str;

/**
 * The whole-model CPU race of issue 14: the GPT-2-small-shaped ONNX model of {@code scripts/bench/make_gpt2_small.py},
 * Lantern (compiled mode) against ONNX Runtime's Java API (all graph optimisations, intra-op threads = Lantern's
 * {@code lantern.cpu.threads}, one inter-op thread), in one JVM on the same file and the same token ids.
 * Each batch: both sides warmed alike, then timed interleaved run by run, the order swapped every round so that
 * neither always runs second on a warm cache; medians. Lantern's logits are checked against ORT's (relative
 * L2 error, in double); past {@link #MAX_REL_ERR} the figure is marked invalid.
 *
 * <p>Arguments: {@code DIR MODEL_FILE OUT_JSON COMMIT [RUNS] [WARMUPS]}; {@code scripts/bench/gpt2-cpu} passes them.
 */
public final class Gpt2CpuBench {
    static final double MAX_REL_ERR = 1e-4;
    static final int SEQ = 128;
    static final int[] BATCHES = {1, 8};

    private Gpt2CpuBench() {}

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        String modelFile = args[1];
        Path out = Path.of(args[2]);
        String commit = args[3];
        int runs = args.length > 4 ? Integer.parseInt(args[4]) : 10;
        int warmups = args.length > 5 ? Integer.parseInt(args[5]) : 5;
        int threads = CpuConfig.THREADS;

        String loadStart = CpuMachine.loadAverage();
        // The model as exported first: whether Lantern imports it is part of the finding.
        String exportedError = modelFile.equals("model.onnx") ? null : importError(dir.resolve("model.onnx"));

        OrtEnvironment env = OrtEnvironment.getEnvironment();
        OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
        opts.setIntraOpNumThreads(threads);
        opts.setInterOpNumThreads(1);
        opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
        Path model = dir.resolve(modelFile);
        OnnxModel lantern = OnnxModel.open(model, CompileOptions.defaults());

        List<String> rows = new ArrayList<>();
        boolean allValid = true;
        try (OrtSession ort = env.createSession(model.toString(), opts)) {
            for (int batch : BATCHES) {
                Tensor ids = Npy.read(dir.resolve("input_ids_b" + batch + ".npy"));
                long[] shape = {batch, SEQ};
                if (!Arrays.equals(Arrays.stream(ids.shape().dims()).asLongStream().toArray(), shape)) {
                    throw new IllegalStateException("input_ids_b" + batch + ".npy has shape " + ids.shape() + ", not " + Arrays.toString(shape));
                }
                Row r = race(lantern, ort, env, ids, shape, runs, warmups);
                allValid &= r.valid();
                System.err.printf(Locale.ROOT, "# batch %d seq %d: Lantern %.2f ms, ORT %.2f ms, Lantern/ORT throughput %.3f, rel err %.2e%s%n",
                        batch, SEQ, r.lanternMs(), r.ortMs(), r.ortMs() / r.lanternMs(), r.relErr(), r.valid() ? "" : " (INVALID)");
                rows.add(r.json(batch));
            }
        }

        StringBuilder j = new StringBuilder("{\n");
        field(j, "date", str(LocalDate.now(ZoneOffset.UTC).toString()));
        field(j, "commit", str(commit));
        field(j, "benchmark", str("gpt2-small CPU: Lantern (compiled) vs ONNX Runtime Java"));
        field(j, "model", str(modelFile));
        field(j, "model_shape", str("GPT-2 small: 12 layers, hidden 768, 12 heads, MLP 3072, vocab 50257, n_positions 1024, f32, random init"));
        field(j, "exported_model_lantern_error", exportedError == null ? "null" : str(exportedError));
        field(j, "machine", "{\"cpu\": " + str(CpuMachine.cpuModel()) + ", \"cores\": " + CpuMachine.cores() + "}");
        field(j, "jdk", str(CpuMachine.jdk()));
        field(j, "vector_bits", String.valueOf(CpuMachine.vectorBits()));
        field(j, "ort_version", str(env.getVersion()));
        field(j, "threads", "{\"lantern\": " + threads + ", \"ort_intra_op\": " + threads + ", \"ort_inter_op\": 1}");
        field(j, "ort_optimization", str("ALL_OPT"));
        field(j, "seq", String.valueOf(SEQ));
        field(j, "warmup_runs", String.valueOf(warmups));
        field(j, "timed_runs", String.valueOf(runs));
        field(j, "timing", str("interleaved run by run, order swapped each round; medians of wall time per forward"));
        field(j, "loadavg_start", str(loadStart));
        field(j, "loadavg_end", str(CpuMachine.loadAverage()));
        field(j, "max_rel_err", String.valueOf(MAX_REL_ERR));
        field(j, "valid", String.valueOf(allValid));
        j.append("  \"batches\": [\n    ").append(String.join(",\n    ", rows)).append("\n  ]\n}\n");
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, j.toString(), StandardCharsets.UTF_8);
        System.out.print(j);
    }

    /** Medians (the figures) and minima (less sensitive to other load on a shared machine) in ms. */
    record Row(double lanternMs, double ortMs, double lanternMinMs, double ortMinMs, double relErr, boolean valid) {
        String json(int batch) {
            double tokens = (double) batch * SEQ;
            return String.format(Locale.ROOT, "{\"batch\": %d, \"seq\": %d, \"lantern_ms\": %.3f, \"ort_ms\": %.3f, "
                            + "\"ratio_ort_over_lantern\": %.4f, \"lantern_tokens_per_s\": %.1f, \"ort_tokens_per_s\": %.1f, "
                            + "\"lantern_min_ms\": %.3f, \"ort_min_ms\": %.3f, \"rel_err\": %.3e, \"valid\": %b}",
                    batch, SEQ, lanternMs, ortMs, ortMs / lanternMs, tokens / lanternMs * 1e3, tokens / ortMs * 1e3, lanternMinMs, ortMinMs, relErr, valid);
        }
    }

    private static Row race(OnnxModel lantern, OrtSession ort, OrtEnvironment env, Tensor ids, long[] shape, int runs, int warmups)
            throws OrtException {
        OnnxModel.Compiled c = lantern.compile(Map.of("input_ids", shape));
        String out = c.program().outputNames().getFirst();
        double[] ids64 = ids.toDoubles();
        LongBuffer lb = ByteBuffer.allocateDirect(ids64.length * 8).order(ByteOrder.nativeOrder()).asLongBuffer();
        for (double d : ids64) {
            lb.put((long) d);
        }
        lb.rewind();
        double[] lt = new double[runs];
        double[] ot = new double[runs];
        Map<String, Tensor> lIn = Map.of("input_ids", ids);
        try (Weights w = c.weights(); Session s = c.program().load(Device.cpu(), w, RunMode.COMPILED);
             OnnxTensor ortIds = OnnxTensor.createTensor(env, lb, shape)) {
            Map<String, OnnxTensor> oIn = Map.of("input_ids", ortIds);
            for (int i = 0; i < warmups; i++) {
                s.run(lIn);
                ort.run(oIn).close();
            }
            for (int i = 0; i < runs; i++) {
                boolean lanternFirst = i % 2 == 0;
                if (lanternFirst) {
                    lt[i] = timeLantern(s, lIn);
                }
                long t0 = System.nanoTime();
                ort.run(oIn).close();
                ot[i] = (System.nanoTime() - t0) / 1e6;
                if (!lanternFirst) {
                    lt[i] = timeLantern(s, lIn);
                }
            }
            // agreement, on one more forward of each
            Tensor logits = s.run(lIn).get(out);
            double rel;
            try (OrtSession.Result r = ort.run(oIn)) {
                FloatBuffer o = ((OnnxTensor) r.get(0)).getFloatBuffer();
                if (o.remaining() != logits.numel()) {
                    throw new IllegalStateException("ORT gives " + o.remaining() + " logits, Lantern " + logits.numel());
                }
                double num = 0;
                double den = 0;
                for (int i = 0; i < logits.numel(); i++) {
                    double d = (double) logits.get(i) - o.get(i);
                    num += d * d;
                    den += (double) o.get(i) * o.get(i);
                }
                rel = Math.sqrt(num / den);
            }
            return new Row(median(lt), median(ot), Arrays.stream(lt).min().orElseThrow(), Arrays.stream(ot).min().orElseThrow(), rel,
                    rel <= MAX_REL_ERR);
        }
    }

    private static double timeLantern(Session s, Map<String, Tensor> in) {
        long t0 = System.nanoTime();
        s.run(in);
        return (System.nanoTime() - t0) / 1e6;
    }

    /** Lantern's import error on {@code file} at batch 1, or null when it imports and compiles. */
    private static String importError(Path file) {
        try {
            OnnxModel.open(file, CompileOptions.defaults()).compile(Map.of("input_ids", new long[] {1, SEQ}));
            return null;
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static void field(StringBuilder j, String name, String json) {
        j.append("  ").append(str(name)).append(": ").append(json).append(",\n");
    }
}
