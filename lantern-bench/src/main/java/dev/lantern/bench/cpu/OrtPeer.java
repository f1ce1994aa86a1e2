package dev.lantern.bench.cpu;

import ai.onnxruntime.NodeInfo;
import ai.onnxruntime.OnnxJavaType;
import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtException;
import ai.onnxruntime.OrtSession;
import ai.onnxruntime.TensorInfo;
import dev.lantern.ir.LanternException;
import dev.lantern.tensor.Tensor;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.LongBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ONNX Runtime's Java API as a peer of {@code lantern bench cpu}: all graph optimisations, the given
 * intra-op thread count (Lantern's), one inter-op thread (as {@code Gpt2CpuBench} runs it). Its inputs
 * are Lantern's, matched by name or else by position (a block exported by PyTorch names its input
 * differently), with any symbolic dimension taken from Lantern's input; a float input whose size
 * differs from Lantern's is an error, not a silent substitute.
 */
public final class OrtPeer implements AutoCloseable {
    private final OrtEnvironment env = OrtEnvironment.getEnvironment();
    private final OrtSession session;
    private final Map<String, OnnxTensor> feeds = new LinkedHashMap<>();

    public OrtPeer(Path file, int threads, Map<String, Tensor> lanternInputs) {
        try {
            OrtSession.SessionOptions opts = new OrtSession.SessionOptions();
            opts.setIntraOpNumThreads(threads);
            opts.setInterOpNumThreads(1);
            // NOTE: ORT's intra-op workers spin after a forward by default; interleaved with Lantern's
            // forwards on a 2-core machine, that spinning took a core from Lantern's next forward (cpu-small,
            // 2 threads: Lantern 4.6 ms beside a spinning ORT, 1.9 ms beside a non-spinning one, 2.1 ms alone;
            // ORT's own time 2.07 ms either way). -Dlantern.bench.ortSpin=true restores ORT's default.
            if (!Boolean.parseBoolean(System.getProperty("lantern.bench.ortSpin", "false"))) {
                opts.addConfigEntry("session.intra_op.allow_spinning", "0");
            }
            opts.setOptimizationLevel(OrtSession.SessionOptions.OptLevel.ALL_OPT);
            session = env.createSession(file.toString(), opts);
            List<Tensor> byPosition = new ArrayList<>(lanternInputs.values());
            int pos = 0;
            for (Map.Entry<String, NodeInfo> e : session.getInputInfo().entrySet()) {
                Tensor l = lanternInputs.containsKey(e.getKey()) ? lanternInputs.get(e.getKey())
                        : pos < byPosition.size() ? byPosition.get(pos) : null;
                pos++;
                if (l == null || !(e.getValue().getInfo() instanceof TensorInfo info)) {
                    throw new LanternException(file + ": input " + e.getKey() + " has no Lantern input to match");
                }
                feeds.put(e.getKey(), tensor(file, e.getKey(), info, l));
            }
        } catch (OrtException e) {
            close();
            throw new LanternException("ONNX Runtime refuses " + file + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            close(); // the feeds made so far and the session are native memory
            throw e;
        }
    }

    private OnnxTensor tensor(Path file, String name, TensorInfo info, Tensor l) throws OrtException {
        long[] shape = info.getShape().clone();
        long[] ls = Arrays.stream(l.shape().dims()).asLongStream().toArray();
        if (shape.length != ls.length) {
            throw new LanternException(file + ": input " + name + " has rank " + shape.length + ", Lantern's " + ls.length);
        }
        for (int i = 0; i < shape.length; i++) {
            if (shape[i] < 0) {
                shape[i] = ls[i];
            } else if (shape[i] != ls[i]) {
                throw new LanternException(file + ": input " + name + " is " + Arrays.toString(info.getShape())
                        + ", Lantern's " + Arrays.toString(ls) + " (export the block at the shape benchmarked)");
            }
        }
        double[] v = l.toDoubles();
        if (info.type == OnnxJavaType.INT64) {
            LongBuffer b = ByteBuffer.allocateDirect(v.length * 8).order(ByteOrder.nativeOrder()).asLongBuffer();
            for (double d : v) {
                b.put((long) d);
            }
            return OnnxTensor.createTensor(env, b.rewind(), shape);
        }
        if (info.type == OnnxJavaType.FLOAT) {
            FloatBuffer b = ByteBuffer.allocateDirect(v.length * 4).order(ByteOrder.nativeOrder()).asFloatBuffer();
            for (double d : v) {
                b.put((float) d);
            }
            return OnnxTensor.createTensor(env, b.rewind(), shape);
        }
        throw new LanternException(file + ": input " + name + " is " + info.type + "; the peer feeds int64 and float inputs");
    }

    /** One forward, outputs dropped. */
    public void run() {
        try {
            session.run(feeds).close();
        } catch (OrtException e) {
            throw new IllegalStateException("ONNX Runtime forward failed: " + e.getMessage(), e);
        }
    }

    /** The first output of one forward as doubles (for the agreement check). */
    public double[] firstOutput() {
        try (OrtSession.Result r = session.run(feeds)) {
            FloatBuffer o = ((OnnxTensor) r.get(0)).getFloatBuffer();
            double[] d = new double[o.remaining()];
            for (int i = 0; i < d.length; i++) {
                d[i] = o.get(i);
            }
            return d;
        } catch (OrtException e) {
            throw new IllegalStateException("ONNX Runtime forward failed: " + e.getMessage(), e);
        }
    }

    public String version() {
        return env.getVersion();
    }

    @Override
    public void close() {
        feeds.values().forEach(OnnxTensor::close);
        if (session != null) {
            try {
                session.close();
            } catch (OrtException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
