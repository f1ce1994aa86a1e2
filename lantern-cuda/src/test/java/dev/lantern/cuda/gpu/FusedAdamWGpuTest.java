package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.engine.FusedAdamW;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamW;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.Parameter;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fused multi-tensor AdamW kernel ({@link FusedAdamW}: one launch per step over five
 * parameters of 1 to 65537 elements in flat buffers) against the CPU's {@link AdamW} on the same
 * seeded weights and gradients (gradients from 2^-14 to 2^3 in size), 6 steps: parameters, both
 * moments and the bf16/f16 low copy bit-identical. Two configurations: PyTorch's defaults with
 * weight decay, and beta1 = 0.3 (lerp's other branch) without.
 */
@Tag("gpu")
class FusedAdamWGpuTest {
    static final int[] SIZES = {1, 37, 1000, 4099, 65537};

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (AdamWConfig c : new AdamWConfig[] {new AdamWConfig(1e-2, 0.9, 0.999, 1e-8, 0.01), new AdamWConfig(3e-3, 0.3, 0.99, 1e-6, 0)}) {
            for (DType low : new DType[] {null, DType.BF16, DType.F16}) {
                all.add(Arguments.of(c, low));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0} low {1}")
    @MethodSource("cases")
    void oneLaunchPerStepMatchesTheCpuBitForBit(AdamWConfig config, DType low) {
        CudaDevice dev = Gpu.device();
        SplittableRandom r = new SplittableRandom(16);
        List<Parameter> params = new ArrayList<>();
        int total = 0;
        for (int i = 0; i < SIZES.length; i++) {
            Tensor v = Tensor.allocate(DType.F32, Shape.of(SIZES[i]));
            for (long k = 0; k < v.numel(); k++) {
                v.set(k, (float) r.nextGaussian());
            }
            params.add(low == null ? Parameter.of("p" + i, v) : Parameter.mixed("p" + i, v, low));
            total += SIZES[i];
        }
        AdamW cpu = new AdamW(params, config, 2);
        CudaStream s = dev.newStream(false);
        try (FusedAdamW gpu = new FusedAdamW(dev, config, low);
             CudaStorage p = dev.allocate(4L * total); CudaStorage g = dev.allocate(4L * total);
             CudaStorage m = dev.allocate(4L * total); CudaStorage v = dev.allocate(4L * total);
             CudaStorage lowCopy = dev.allocate(2L * total)) {
            Gpu.upload(s, flat(params, Parameter::value, total), p);
            Gpu.upload(s, new float[total], m);
            Gpu.upload(s, new float[total], v);
            for (int step = 0; step < 6; step++) {
                for (Parameter q : params) {
                    for (long k = 0; k < q.numel(); k++) {
                        q.grad().set(k, (float) (Math.scalb(1.0 + r.nextDouble(), -14 + r.nextInt(18)) * (r.nextBoolean() ? 1 : -1)));
                    }
                }
                Gpu.upload(s, flat(params, Parameter::grad, total), g);
                gpu.step(s, p.address(), g.address(), m.address(), v.address(), lowCopy.address(), total);
                cpu.step();
            }
            assertBits(flat(params, Parameter::value, total), Gpu.download(s, p, total), "parameters");
            var state = cpu.state().tensors();
            assertBits(flat(params, q -> state.get("exp_avg." + q.name()), total), Gpu.download(s, m, total), "exp_avg");
            assertBits(flat(params, q -> state.get("exp_avg_sq." + q.name()), total), Gpu.download(s, v, total), "exp_avg_sq");
            if (low != null) {
                short[] dl = downloadShorts(dev, s, lowCopy, total);
                int at = 0;
                for (Parameter q : params) {
                    for (long k = 0; k < q.numel(); k++, at++) {
                        assertEquals(q.low().segment().getAtIndex(ValueLayout.JAVA_SHORT, k), dl[at], "low copy " + low + " at " + at);
                    }
                }
            }
            assertEquals(6, gpu.steps());
        } finally {
            s.close();
        }
    }

    private static float[] flat(List<Parameter> params, java.util.function.Function<Parameter, Tensor> f, int total) {
        float[] out = new float[total];
        int at = 0;
        for (Parameter q : params) {
            Tensor t = f.apply(q);
            MemorySegment.copy(t.segment(), ValueLayout.JAVA_FLOAT, 0, out, at, (int) t.numel());
            at += (int) t.numel();
        }
        return out;
    }

    private static void assertBits(float[] want, float[] got, String what) {
        for (int i = 0; i < want.length; i++) {
            if (Float.floatToRawIntBits(want[i]) != Float.floatToRawIntBits(got[i])) {
                throw new AssertionError(what + " differ first at " + i + ": cpu " + want[i] + ", gpu " + got[i]);
            }
        }
    }

    private static short[] downloadShorts(CudaDevice dev, CudaStream s, CudaStorage src, int n) {
        try (CudaStorage pinned = dev.allocatePinned(2L * n)) {
            s.copy(src, 0, pinned, 0, 2L * n);
            s.synchronize();
            short[] out = new short[n];
            MemorySegment.copy(pinned.hostSegment(), ValueLayout.JAVA_SHORT, 0, out, 0, n);
            return out;
        }
    }
}
