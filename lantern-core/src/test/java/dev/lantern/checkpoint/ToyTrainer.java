package dev.lantern.checkpoint;

import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A deterministic stand-in for {@code lantern train}, run by {@link CrashHarness} in a child JVM:
 * three f32 "weight" tensors, an f32 "moment" and an i64 "data position", updated each step from a
 * {@link SplitMix64} stream (a fixed pseudo-gradient, a momentum step, a loss scale that halves and
 * grows like AMP's scaler), checkpointed every N steps through {@link CheckpointStore}.
 *
 * <p>{@code ToyTrainer --checkpoint-dir D --checkpoint-every N --steps S [--resume] [--size E]}
 * speaks the harness's line protocol on stdout (flushed line by line):
 * {@code start <step>} (0 fresh, else the restored step), {@code phase <PHASE> <step>} for each
 * write phase, {@code checkpoint <step> <state-sha256>} after each commit, {@code done <step>
 * <state-sha256>} at the end, and {@code skipped <step> <file>} for a corrupt checkpoint passed over.
 */
public final class ToyTrainer {
    private final float[][] w;
    private final float[] moment;
    private long position;
    private float scale = 65536f;
    private final SplitMix64 rng;
    private long step;

    ToyTrainer(int size, long seed) {
        rng = new SplitMix64(seed);
        w = new float[3][size];
        for (float[] t : w) {
            for (int i = 0; i < size; i++) {
                t[i] = rng.nextFloat() - 0.5f;
            }
        }
        moment = new float[size];
    }

    /** One step: a pseudo-gradient from the stream, momentum, a scaler that halves on a drawn "overflow". */
    void step() {
        int n = moment.length;
        boolean overflow = rng.nextLong() % 17 == 0;
        if (overflow) {
            scale /= 2; // the step is skipped, as AMP's scaler skips one with inf gradients
        } else {
            for (int i = 0; i < n; i++) {
                float g = (rng.nextFloat() - 0.5f) * 1e-2f + w[0][i] * w[1][i] * 1e-3f;
                moment[i] = moment[i] * 0.9f + g;
                w[0][i] -= 1e-2f * moment[i];
                w[1][i] = w[1][i] * 0.999f + w[2][(i + 1) % n] * 1e-3f;
                w[2][i] += w[0][i] * 1e-4f;
            }
            scale = step % 50 == 49 ? scale * 2 : scale;
        }
        position += 8 + (rng.nextLong() & 3);
        step++;
    }

    Checkpoint checkpoint() {
        Map<String, StoredTensor> t = new LinkedHashMap<>();
        long[] shape = {moment.length};
        for (int i = 0; i < w.length; i++) {
            t.put("w" + i, StoredTensor.f32(shape, w[i]));
        }
        t.put("moment", StoredTensor.f32(shape, moment));
        t.put("data_position", StoredTensor.i64(new long[] {1}, new long[] {position}));
        return new Checkpoint(step, t, Map.of("rng_state", Long.toString(rng.state()), "loss_scale", Float.toString(scale),
                "step", Long.toString(step)));
    }

    static ToyTrainer restore(Checkpoint c, int size) {
        ToyTrainer t = new ToyTrainer(size, 0);
        for (int i = 0; i < t.w.length; i++) {
            t.w[i] = floats(c.tensors().get("w" + i));
        }
        System.arraycopy(floats(c.tensors().get("moment")), 0, t.moment, 0, size);
        t.position = c.tensors().get("data_position").data().get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 0);
        t.scale = Float.parseFloat(c.metadata().get("loss_scale"));
        t.rng.setState(Long.parseLong(c.metadata().get("rng_state")));
        t.step = c.step();
        return t;
    }

    private static float[] floats(StoredTensor s) {
        return s.data().toArray(java.lang.foreign.ValueLayout.JAVA_FLOAT_UNALIGNED);
    }

    /** SHA-256 over every bit of the state, weights to RNG. */
    String stateHash() {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            ByteBuffer b = ByteBuffer.allocate(moment.length * 16 + 32).order(ByteOrder.LITTLE_ENDIAN);
            for (float[] t : w) {
                b.asFloatBuffer().put(t);
                b.position(b.position() + t.length * 4);
            }
            b.asFloatBuffer().put(moment);
            b.position(b.position() + moment.length * 4);
            b.putLong(position).putFloat(scale).putLong(rng.state()).putLong(step);
            sha.update(b.flip());
            return HexFormat.of().formatHex(sha.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public static void main(String[] args) {
        Map<String, String> a = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--resume")) {
                a.put("resume", "true");
            } else {
                a.put(args[i].substring(2), args[++i]);
            }
        }
        // line by line: the harness reads each line as it is printed, to kill right after a phase
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true);
        Path dir = Path.of(a.get("checkpoint-dir"));
        int every = Integer.parseInt(a.get("checkpoint-every"));
        long steps = Long.parseLong(a.get("steps"));
        int size = Integer.parseInt(a.getOrDefault("size", "4096"));
        CheckpointStore.Options opts = CheckpointStore.Options.defaults().withKeepLast(2)
                .withListener((p, s) -> out.println("phase " + p + " " + s));
        try (CheckpointStore store = CheckpointStore.open(dir, opts)) {
            ToyTrainer t = new ToyTrainer(size, 42);
            if (a.containsKey("resume")) {
                try {
                    CheckpointStore.Restored r = store.restoreLatest();
                    r.skipped().forEach(c -> out.println("skipped " + c.step() + " " + c.file()));
                    t = restore(r.checkpoint(), size);
                } catch (CheckpointException e) {
                    if (e.kind() != CheckpointException.Kind.NONE_COMMITTED) {
                        throw e;
                    }
                }
            }
            out.println("start " + t.step + " " + t.stateHash());
            while (t.step < steps) {
                t.step();
                if (t.step % every == 0) {
                    store.write(t.checkpoint());
                    out.println("checkpoint " + t.step + " " + t.stateHash());
                }
            }
            out.println("done " + t.step + " " + t.stateHash());
        }
        out.flush();
    }
}
