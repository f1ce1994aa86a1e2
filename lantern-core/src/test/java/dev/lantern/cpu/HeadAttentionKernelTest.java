package dev.lantern.cpu;

import dev.lantern.engine.cpu.HeadAttention;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.reference.Accuracy;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link HeadAttentionKernel} against a float64 attention written out here, on seeded random
 * inputs: odd and prime sizes (rows not a multiple of MR, keys not a multiple of NR, value widths
 * over two panels, d ≠ e), causal blocks skipped, an additive mask, rope, grouped K/V heads and a
 * permuted output.
 */
class HeadAttentionKernelTest {
    @ParameterizedTest(name = "h={0} hk={1} s={2} t={3} d={4} e={5} causal={6} rope={7} mask={8}")
    @CsvSource({"4,2,53,53,18,41,true,true,true", "3,3,130,67,72,70,false,false,true", "2,1,1,97,16,5,false,true,false",
            "2,2,37,37,64,64,true,false,false", "1,1,131,131,8,97,true,true,true", "2,2,9,200,24,24,false,false,false"})
    void matchesFloat64(int h, int hk, int s, int t, int d, int e, boolean causal, boolean rope, boolean masked) {
        int b = 2;
        Random rnd = new Random(31L * s + 7L * t + d + e);
        double[] q = random(rnd, b * h * s * d);
        double[] k = random(rnd, b * hk * t * d);
        double[] v = random(rnd, b * hk * t * e);
        double[] m = masked ? random(rnd, b * s * t) : null; // (b, 1, s, t), broadcast over heads
        float scale = (float) (1 / Math.sqrt(d));
        float[][] tables = rope ? HeadAttention.ropeTables(Math.max(s, t), d, 10000) : null;
        // out stored as (b, s, h, e) and written through its (b, h, s, e) permutation
        Tensor out = Tensor.allocate(DType.F32, Shape.of(b, s, h, e));
        View outView = View.of(out).permute(0, 2, 1, 3);
        View mask = masked ? View.of(tensor(m, Shape.of(b, 1, s, t))) : null;
        HeadAttention.run(View.of(tensor(q, Shape.of(b, h, s, d))), View.of(tensor(k, Shape.of(b, hk, t, d))),
                View.of(tensor(v, Shape.of(b, hk, t, e))), mask, outView, scale, causal,
                rope ? tables[0] : null, rope ? tables[1] : null);

        double[] ref = new double[b * s * h * e];
        for (int bi = 0; bi < b; bi++) {
            for (int hi = 0; hi < h; hi++) {
                int kh = hi / (h / hk);
                double[][] qr = rows(q, (bi * h + hi) * s, s, d, rope ? tables : null);
                double[][] kr = rows(k, (bi * hk + kh) * t, t, d, rope ? tables : null);
                for (int i = 0; i < s; i++) {
                    int valid = causal ? Math.min(t, i + 1) : t;
                    double[] p = new double[valid];
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j < valid; j++) {
                        double dot = 0;
                        for (int c = 0; c < d; c++) {
                            dot += qr[i][c] * kr[j][c];
                        }
                        p[j] = dot * scale + (masked ? m[(bi * s + i) * t + j] : 0);
                        max = Math.max(max, p[j]);
                    }
                    double sum = 0;
                    for (int j = 0; j < valid; j++) {
                        p[j] = Math.exp(p[j] - max);
                        sum += p[j];
                    }
                    for (int c = 0; c < e; c++) {
                        double acc = 0;
                        for (int j = 0; j < valid; j++) {
                            acc += p[j] / sum * v[((bi * hk + kh) * t + j) * e + c];
                        }
                        ref[((bi * s + i) * h + hi) * e + c] = acc;
                    }
                }
            }
        }
        double rel = Accuracy.relErr(out.toDoubles(), ref);
        assertTrue(rel <= 1e-5, "relative error " + rel);
    }

    /** Rows [row0, row0+n) of width d of x, rotated (rotate-half, position = row index) when tables is not null. */
    private static double[][] rows(double[] x, int row0, int n, int d, float[][] tables) {
        double[][] r = new double[n][d];
        int half = d / 2;
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < d; c++) {
                r[i][c] = (float) x[(row0 + i) * d + c];
            }
            if (tables != null) {
                double[] y = r[i].clone();
                for (int c = 0; c < half; c++) {
                    double cos = tables[0][i * half + c];
                    double sin = tables[1][i * half + c];
                    r[i][c] = y[c] * cos - y[c + half] * sin;
                    r[i][c + half] = y[c + half] * cos + y[c] * sin;
                }
            }
        }
        return r;
    }

    private static double[] random(Random rnd, int n) {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) rnd.nextGaussian();
        }
        return a;
    }

    private static Tensor tensor(double[] a, Shape shape) {
        Tensor t = Tensor.allocate(DType.F32, shape);
        for (int i = 0; i < a.length; i++) {
            t.set(i, (float) a[i]);
        }
        return t;
    }
}
