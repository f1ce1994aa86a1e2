package dev.lantern.train;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.data.SplitMix64;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Seeded inputs for the optimizer tests, drawn as {@code scripts/train-reference.py} draws them:
 * m * 2^e with m uniform on a 2^-23 grid in [-1, 1) and e uniform in [lo, hi], exact in f32, so
 * that Java and the script start from the same bits.
 */
public final class TrainFixtures {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private TrainFixtures() {}

    /** Parameter names and shapes of the torch reference file. */
    public static final String[] NAMES = {"w", "b", "big"};
    /** Shapes matching {@link #NAMES}. */
    public static final Shape[] SHAPES = {Shape.of(37), Shape.of(4, 9), Shape.of(700)};

    /** Fills a new f32 tensor of {@code shape} with draws from {@code rng}. */
    public static Tensor draw(SplitMix64 rng, Shape shape, int loExp, int hiExp) {
        Tensor t = Tensor.allocate(DType.F32, shape);
        fill(rng, t, loExp, hiExp);
        return t;
    }

    /** Overwrites {@code t} (f32) with draws from {@code rng}. */
    public static void fill(SplitMix64 rng, Tensor t, int loExp, int hiExp) {
        float[] v = new float[Math.toIntExact(t.numel())];
        for (int i = 0; i < v.length; i++) {
            long x = rng.nextLong();
            double m = ((x >>> 40) - (1L << 23)) * 0x1.0p-23;
            int e = loExp + (int) ((x & 0xFF) % (hiExp - loExp + 1));
            v[i] = (float) Math.scalb(m, e);
        }
        MemorySegment.copy(v, 0, t.segment(), F32, 0, v.length);
    }

    /** Parameters named and shaped as given, values drawn in [-2, 2), zero gradients. */
    public static List<Parameter> params(SplitMix64 rng, String[] names, Shape[] shapes) {
        List<Parameter> ps = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            ps.add(Parameter.of(names[i], draw(rng, shapes[i], -1, 1)));
        }
        return ps;
    }

    /** Overwrites every gradient with draws of magnitude 2^-14 to 2^3. */
    public static void grads(SplitMix64 rng, List<Parameter> ps) {
        for (Parameter p : ps) {
            fill(rng, p.grad(), -14, 3);
        }
    }

    /** The elements as doubles. */
    public static double[] doubles(Tensor t) {
        return t.toDoubles();
    }

    /** Whether two f32 tensors hold the same bits. */
    public static boolean sameBits(Tensor a, Tensor b) {
        return a.numel() == b.numel() && a.segment().asSlice(0, a.numel() * 4).mismatch(b.segment().asSlice(0, b.numel() * 4)) == -1;
    }
}
