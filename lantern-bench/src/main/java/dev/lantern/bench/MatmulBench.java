package dev.lantern.bench;

import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import dev.lantern.cpu.CpuConfig;
import dev.lantern.cpu.Gemm;
import dev.lantern.cpu.GemmEpilogue;
import dev.lantern.cpu.View;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * f32 GEMM, Lantern's CPU kernel against ONNX Runtime's MLAS, on the same inputs in the same JVM.
 * Shapes are M×K×N: Y (M, N) = A (M, K) · B (K, N), row-major. Both sides write into a
 * preallocated output (ORT through pinned outputs), so neither pays an allocation per call, and
 * both use every core (ORT intra-op threads = Lantern's pool = availableProcessors; for a diagnosis,
 * -Dbench.ort.threads and -Dlantern.cpu.threads change them).
 * GFLOP/s = 2·M·K·N / time; scripts/bench-cpu turns JMH's times into that summary.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class MatmulBench {
    /** M×K×N. */
    @Param({"1024x1024x1024", "2048x1024x4096"})
    public String shape;

    private int m;
    private int k;
    private int n;
    private Tensor a;
    private Tensor b;
    private Tensor c;
    private OrtEnvironment env;
    private OrtSession session;
    private OnnxTensor ortA;
    private OnnxTensor ortB;
    private OnnxTensor ortY;
    private Map<String, OnnxTensor> ortIn;
    private Map<String, OnnxTensor> ortOut;

    @Setup(Level.Trial)
    public void setup() throws OrtException {
        String[] d = shape.split("x");
        m = Integer.parseInt(d[0]);
        k = Integer.parseInt(d[1]);
        n = Integer.parseInt(d[2]);
        a = Philox.normal(Tensor.allocate(DType.F32, Shape.of(m, k)), Philox.key(1, "A"), 1f);
        b = Philox.normal(Tensor.allocate(DType.F32, Shape.of(k, n)), Philox.key(1, "B"), 1f);
        c = Tensor.allocate(DType.F32, Shape.of(m, n));

        env = OrtEnvironment.getEnvironment();
        OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
        opts.setIntraOpNumThreads(Integer.getInteger("bench.ort.threads", Runtime.getRuntime().availableProcessors()));
        opts.setInterOpNumThreads(1);
        opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
        session = env.createSession(OnnxMatMul.model(m, k, n), opts);
        ortA = OnnxTensor.createTensor(env, direct(a.toFloats()), new long[] {m, k});
        ortB = OnnxTensor.createTensor(env, direct(b.toFloats()), new long[] {k, n});
        ortY = OnnxTensor.createTensor(env, direct(new float[m * n]), new long[] {m, n});
        ortIn = Map.of("A", ortA, "B", ortB);
        ortOut = Map.of("Y", ortY);
        checkAgreement();
    }

    @Benchmark
    public Tensor lantern() {
        Gemm.matmul(View.of(a), View.of(b), View.of(c), false, false, GemmEpilogue.NONE);
        return c;
    }

    @Benchmark
    public OnnxTensor onnxruntime() throws OrtException {
        session.run(ortIn, ortOut).close(); // closing the result leaves the pinned output alone
        return ortY;
    }

    /** Both sides must compute the same product, or the race means nothing. */
    private void checkAgreement() throws OrtException {
        lantern();
        onnxruntime();
        FloatBuffer y = ortY.getFloatBuffer();
        double num = 0;
        double den = 0;
        for (int i = 0; i < m * n; i++) {
            double diff = c.get(i) - y.get(i);
            num += diff * diff;
            den += (double) y.get(i) * y.get(i);
        }
        double rel = Math.sqrt(num / den);
        if (!(rel < 1e-5)) {
            throw new IllegalStateException("Lantern and ONNX Runtime disagree on " + shape + ": relative difference " + rel);
        }
        System.err.printf("# %s: Lantern vs ORT relative difference %.2e; Lantern threads %d, vector %s%n",
                shape, rel, CpuConfig.THREADS, CpuConfig.VECTOR);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws OrtException {
        ortA.close();
        ortB.close();
        ortY.close();
        session.close();
    }

    private static FloatBuffer direct(float[] values) {
        FloatBuffer f = ByteBuffer.allocateDirect(values.length * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
        f.put(values).rewind();
        return f;
    }
}
