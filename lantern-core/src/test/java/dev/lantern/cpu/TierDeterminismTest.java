package dev.lantern.cpu;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The determinism mode's premise on the CPU: the same inputs give bit-identical outputs whatever
 * the JIT tier. The kernels' checksum in a child JVM that only interprets ({@code -Xint}) must
 * equal the checksum here after C2 has compiled everything.
 */
class TierDeterminismTest {
    @Test
    void interpretedAndCompiledKernelsAgreeBitForBit() throws Exception {
        long warm = 0;
        for (int i = 0; i < 300; i++) {
            warm = checksum();
        }
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(java, "-Xint", "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), TierDeterminismTest.class.getName())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM timed out");
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.contains("checksum " + Long.toHexString(warm)), "interpreted run differs from compiled: " + out + " vs " + Long.toHexString(warm));
    }

    public static void main(String[] args) {
        System.out.println("checksum " + Long.toHexString(checksum()));
    }

    /** Exp-, tanh- and reduction-heavy kernels on small seeded inputs, hashed over the output bits. */
    static long checksum() {
        long seed = 2718;
        Tensor x = Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 2, 9, 40)), seed, 2f);
        Tensor w = Philox.normal(Tensor.allocate(DType.F32, Shape.of(40)), seed + 1, 1f);
        Tensor k = Philox.normal(Tensor.allocate(DType.F32, Shape.of(3, 2, 11, 40)), seed + 2, 1f);
        long h = 17;
        for (UnaryFn f : UnaryFn.values()) {
            Tensor o = Tensor.allocate(DType.F32, x.shape());
            Elementwise.unary(f, View.of(x), View.of(o));
            h = mix(h, o);
        }
        Tensor o = Tensor.allocate(DType.F32, x.shape());
        Softmax.run(View.of(x), View.of(o), 0.7f, true);
        h = mix(h, o);
        Norm.layerNorm(View.of(x), View.of(x), View.of(w), View.of(w), 1e-5f, View.of(o), null);
        h = mix(h, o);
        Norm.rmsNorm(View.of(x), null, View.of(w), 1e-6f, View.of(o), null);
        h = mix(h, o);
        Attention.run(View.of(x), View.of(k), View.of(k), View.of(o), 0.3f, true);
        h = mix(h, o);
        // the two-GEMM attention (engine.cpu): its score softmax once used lanewise(EXP), whose bits change with the tier
        // (rows of up to 70 scores, so that its vector loop runs at any vector width)
        Tensor hq = Philox.normal(Tensor.allocate(DType.F32, Shape.of(1, 2, 70, 16)), seed + 3, 2f);
        Tensor ho = Tensor.allocate(DType.F32, hq.shape());
        dev.lantern.engine.cpu.HeadAttention.run(View.of(hq), View.of(hq), View.of(hq), View.of(ho), 0.3f, false, null, null);
        h = mix(h, ho);
        Tensor c = Tensor.allocate(DType.F32, Shape.of(3, 2, 9, 11));
        Gemm.matmul(View.of(x), View.of(k), View.of(c), false, true, GemmEpilogue.biasGelu(View.of(w).slice(0, 0, 11), true));
        return mix(h, c);
    }

    private static long mix(long h, Tensor t) {
        for (float f : t.toFloats()) {
            h = h * 0x100000001B3L ^ Float.floatToRawIntBits(f);
        }
        return h;
    }

}
