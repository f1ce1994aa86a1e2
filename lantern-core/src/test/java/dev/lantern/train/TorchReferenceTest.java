package dev.lantern.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.tensor.Tensor;
import dev.lantern.train.amp.DynamicLossScaler;
import dev.lantern.train.amp.LossScalerConfig;
import dev.lantern.train.data.SplitMix64;
import dev.lantern.weights.SafetensorsFile;

import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Lantern's optimizers and clip against PyTorch's own results, stored by
 * {@code scripts/train-reference.py} in {@code train/torch-optim.safetensors} (torch is not needed
 * to run this; the file was made by torch 2.13 on an AVX-512 CPU). Both start from the same
 * SplitMix64 draws. SGD's results and AdamW's moments are PyTorch's bit for bit; AdamW's parameters
 * differ only where PyTorch's f32 square root (MKL's, not correctly rounded) does, a few percent of
 * elements in their last bits. A scripted GradScaler run over SGD ends on PyTorch's scales and bits.
 */
class TorchReferenceTest {
    static final int STEPS = 6;
    static SafetensorsFile ref;

    @BeforeAll
    static void load() throws IOException {
        try (InputStream in = TorchReferenceTest.class.getResourceAsStream("/train/torch-optim.safetensors")) {
            ref = SafetensorsFile.of(MemorySegment.ofArray(in.readAllBytes()), "torch-optim.safetensors");
        }
    }

    @AfterAll
    static void close() {
        ref.close();
    }

    static Optimizer make(String optCase, List<Parameter> ps) {
        return switch (optCase) {
            case "adamw" -> new AdamW(ps, new AdamWConfig(1e-2, 0.9, 0.999, 1e-8, 0.1), 2);
            case "adamw_b03" -> new AdamW(ps, new AdamWConfig(3e-3, 0.3, 0.95, 1e-6, 0.0), 2);
            case "sgd" -> new Sgd(ps, new SgdConfig(0.05, 0.9, 0, false, 0.01), 2);
            case "sgd_nesterov" -> new Sgd(ps, new SgdConfig(0.02, 0.8, 0, true, 0), 2);
            case "sgd_damp" -> new Sgd(ps, new SgdConfig(0.1, 0.5, 0.25, false, 0.001), 2);
            case "sgd_plain" -> new Sgd(ps, new SgdConfig(0.1, 0, 0, false, 0), 2);
            default -> throw new IllegalArgumentException(optCase);
        };
    }

    @ParameterizedTest
    @CsvSource({"adamw,1000,exp_avg exp_avg_sq", "adamw_b03,1001,exp_avg exp_avg_sq", "sgd,1002,momentum_buffer",
        "sgd_nesterov,1003,momentum_buffer", "sgd_damp,1004,momentum_buffer", "sgd_plain,1005,''"})
    void optimizerMatchesTorch(String optCase, long seed, String stateKeys) {
        SplitMix64 rng = new SplitMix64(seed);
        List<Parameter> ps = TrainFixtures.params(rng, TrainFixtures.NAMES, TrainFixtures.SHAPES);
        Optimizer opt = make(optCase, ps);
        for (int k = 0; k < STEPS; k++) {
            TrainFixtures.grads(rng, ps);
            opt.step();
        }
        boolean adam = opt instanceof AdamW;
        int[] exact = {0, 0};
        for (Parameter p : ps) {
            for (String key : stateKeys.isBlank() ? new String[0] : stateKeys.split(" ")) {
                // the moments and buffers are PyTorch's bit for bit
                assertBitIdentical(optCase + "." + key + "." + p.name(), opt.state().tensor(key + "." + p.name()));
            }
            if (adam) {
                // the parameter too, but where PyTorch's square root (MKL, up to 0.75 ulp) rounds otherwise
                compare(optCase + ".out." + p.name(), p.value(), 1e-7, exact);
            } else {
                assertBitIdentical(optCase + ".out." + p.name(), p.value());
            }
        }
        if (adam) {
            assertTrue(exact[0] >= 0.9 * exact[1], optCase + ": only " + exact[0] + " of " + exact[1] + " parameters bit-identical");
        }
    }

    @Test
    void scaledSgdRunMatchesGradScaler() {
        // GradScaler's scripted run (no floor): the same scales after every update, the same skips, so
        // SGD ends on the same bits
        String[][] script = {{}, {}, {}, {"b"}, {}, {"w", "big"}, {"big"}, {"w"}, {}, {"b", "big"}, {"w"}, {"b"}};
        SplitMix64 init = new SplitMix64(1006);
        List<Parameter> ps = TrainFixtures.params(init, TrainFixtures.NAMES, TrainFixtures.SHAPES);
        Sgd opt = new Sgd(ps, new SgdConfig(0.05, 0.9, 0, false, 0), 2);
        DynamicLossScaler scaler = new DynamicLossScaler(new LossScalerConfig(8f, 2f, 0.5f, 3, 0x1p-20f, 0));
        SplitMix64 rng = new SplitMix64(2006);
        float[] scales = new float[script.length];
        for (int k = 0; k < script.length; k++) {
            float scale = scaler.scale();
            for (Parameter p : ps) {
                TrainFixtures.fill(rng, p.grad(), -14, 3);
                for (long e = 0; e < p.numel(); e++) {
                    p.grad().set(e, p.grad().get(e) * scale);
                }
                if (List.of(script[k]).contains(p.name())) {
                    p.grad().set(p.numel() - 1, Float.POSITIVE_INFINITY);
                }
            }
            scaler.step(opt, 0);
            scales[k] = scaler.scale();
        }
        assertArrayEquals(ref.tensor("scaler.scales").toFloatArray(), scales);
        assertEquals(7, scaler.skippedSteps());
        for (Parameter p : ps) {
            assertBitIdentical("scaler.out." + p.name(), p.value());
            assertBitIdentical("scaler.momentum_buffer." + p.name(), opt.state().tensor("momentum_buffer." + p.name()));
        }
    }

    @Test
    void clipMatchesTorch() {
        for (String c : new String[] {"clip", "noclip"}) {
            SplitMix64 rng = new SplitMix64(c.equals("clip") ? 77 : 78);
            List<Parameter> ps = TrainFixtures.params(new SplitMix64(0), TrainFixtures.NAMES, TrainFixtures.SHAPES);
            for (Parameter p : ps) {
                TrainFixtures.fill(rng, p.grad(), -6, 0);
            }
            float total = GradClip.clipGradNorm(new MultiTensor(ps, 2), c.equals("clip") ? 0.5 : 1e6);
            float torchTotal = ref.tensor(c + ".total").toFloatArray()[0];
            assertEquals(torchTotal, total, 2 * Math.ulp(torchTotal), c + " total norm");
            int[] exact = {0, 0};
            for (Parameter p : ps) {
                compare(c + ".clipped." + p.name(), p.grad(), 0, exact);
            }
        }
    }

    static void assertBitIdentical(String name, Tensor got) {
        float[] want = ref.tensor(name).toFloatArray();
        float[] have = got.toFloats();
        assertEquals(want.length, have.length, name);
        for (int i = 0; i < want.length; i++) {
            int at = i;
            assertEquals(Float.floatToRawIntBits(want[i]), Float.floatToRawIntBits(have[i]),
                    () -> name + "[" + at + "]: torch " + want[at] + ", lantern " + have[at]);
        }
    }

    /** Within {@code abs} plus 4 ulps of PyTorch's value; counts the bit-identical elements. */
    static void compare(String name, Tensor got, double abs, int[] exact) {
        float[] want = ref.tensor(name).toFloatArray();
        float[] have = got.toFloats();
        assertEquals(want.length, have.length, name);
        for (int i = 0; i < want.length; i++) {
            int at = i;
            assertEquals(want[i], have[i], abs + 4 * Math.ulp(want[i]), () -> name + "[" + at + "]");
            if (Float.floatToRawIntBits(want[i]) == Float.floatToRawIntBits(have[i])) {
                exact[0]++;
            }
            exact[1]++;
        }
    }
}
