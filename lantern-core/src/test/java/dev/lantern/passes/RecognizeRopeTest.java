package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * Hugging Face's rotary embedding as an exporter writes it (x·cos + rotate_half(x)·sin with constant
 * tables computed in f32 as PyTorch does) becomes the rope op with the base read from the tables;
 * a table that is not the rope op's, by one entry or by its layout, is left as it is.
 */
class RecognizeRopeTest {
    /** An HF table [1, 1, s, d] computed in f32 as transformers does: inv_freq, p·inv_freq, then cos or sin. */
    static Tensor hfTable(int s, int d, double base, int offset, double scaling, boolean cos) {
        return RecognizeCase.table(new int[] {1, 1, s, d}, k -> {
            int p = k / d % s + offset;
            int i = k % d % (d / 2);
            float invFreq = (float) (1.0 / (float) Math.pow(base, (float) (2 * i) / d));
            float angle = (float) p * invFreq;
            return (float) ((cos ? Math.cos(angle) : Math.sin(angle)) * scaling);
        });
    }

    /** rope applied to x [2, HEADS, S, D] in the exported form, with either operand order. */
    static RecognizeCase exported(int s, int d, Tensor cos, Tensor sin, boolean swapped) {
        String x = "f32[2,4," + s + "," + d + "]";
        String half = "f32[2,4," + s + "," + d / 2 + "]";
        return RecognizeCase.of(("""
                  %x = input {name="x"} : X
                  %c = param {name="cos"} : f32[1,1,S,D]
                  %0 = mul(%x, %c) : X
                  %1 = slice(%x) {axis=3, end=H, start=0} : HALF
                  %2 = slice(%x) {axis=3, end=D, start=H} : HALF
                  %3 = neg(%2) : HALF
                  %4 = concat(%3, %1) {axis=-1} : X
                  %s = param {name="sin"} : f32[1,1,S,D]
                """ + (swapped ? """
                  %5 = mul(%s, %4) : X
                  %6 = add(%5, %0) : X
                """ : """
                  %5 = mul(%4, %s) : X
                  %6 = add(%0, %5) : X
                """) + "  return %6\n").replace("HALF", half).replace("X", x).replace("S", "" + s).replace("D", "" + d)
                .replace("H", "" + d / 2), Map.of("cos", cos, "sin", sin));
    }

    @ParameterizedTest(name = "s={0} d={1} base={2}")
    @CsvSource({"8,16,10000", "16,16,10000", "12,32,500000", "64,64,1000000", "8,16,12345.678", "2048,128,10000", "2048,128,500000"})
    void hfRotaryBecomesRope(int s, int d, double base) {
        for (boolean order : new boolean[] {false, true}) {
            RecognizeCase c = exported(s, d, hfTable(s, d, base, 0, 1, true), hfTable(s, d, base, 0, 1, false), order);
            Graph g = new RecognizeRope(c.values()).run(c.graph());
            Node rope = g.node(g.outputs().getFirst());
            assertEquals(Op.ROPE, rope.op(), g.toString());
            assertEquals(List.of("x"), rope.inputs());
            // the first base (fewest digits) under which every entry checks: 12345.7 for 12345.678 at these sizes
            assertEquals(base, rope.attrs().getDouble("base", 0), base * 1e-5);
            assertEquals(2, g.nodes().size(), "only x and the rope are left: " + g);
            // the tables are f32 (as the model computes them), the rope op's float64: they differ by the
            // tables' rounding, which grows with the angle (an ulp of p·θ: 1.2e-4 at p = 2047)
            c.assertSameMeaning(g, 2e-6 * Math.max(1, s / 256.0));
        }
    }

    @Test
    void nearMissesAreLeftAlone() {
        int s = 8;
        int d = 16;
        Tensor cos = hfTable(s, d, 10000, 0, 1, true);
        Tensor sin = hfTable(s, d, 10000, 0, 1, false);
        Tensor wrongEntry = hfTable(s, d, 10000, 0, 1, false);
        wrongEntry.set(5 * d + 3, wrongEntry.get(5 * d + 3) + 1e-3f);
        Tensor[][] misses = {
            {cos, wrongEntry},                                                        // one entry off by 1e-3
            {hfTable(s, d, 10000, 1, 1, true), hfTable(s, d, 10000, 1, 1, false)},    // positions from 1, not 0
            {hfTable(s, d, 10000, 0, 1.1, true), hfTable(s, d, 10000, 0, 1.1, false)}, // scaled (YaRN's attention factor)
            {sin, cos},                                                               // cos and sin swapped
            {cos, hfTable(s, d, 20000, 0, 1, false)},                                 // the two tables disagree on the base
        };
        for (Tensor[] m : misses) {
            RecognizeCase c = exported(s, d, m[0], m[1], false);
            assertSame(c.graph(), new RecognizeRope(c.values()).run(c.graph()));
        }
        // tables whose values are not known (IR text): nothing is guessed from the shapes
        RecognizeCase c = exported(s, d, cos, sin, false);
        assertSame(c.graph(), new RecognizeRope().run(c.graph()));
    }

    @Test
    void ropeOnQueryAndKeyGoesIntoTheAttention() {
        int s = 8;
        int d = 16;
        Tensor cos = hfTable(s, d, 10000, 0, 1, true);
        Tensor sin = hfTable(s, d, 10000, 0, 1, false);
        StringBuilder body = new StringBuilder("""
                  %q = input {name="q"} : f32[1,2,8,16]
                  %k = input {name="k"} : f32[1,2,8,16]
                  %v = input {name="v"} : f32[1,2,8,16]
                  %c = param {name="cos"} : f32[1,1,8,16]
                  %s = param {name="sin"} : f32[1,1,8,16]
                """);
        for (String x : List.of("q", "k")) {
            body.append("""
                      %X0 = mul(%X, %c) : f32[1,2,8,16]
                      %X1 = slice(%X) {axis=3, end=8, start=0} : f32[1,2,8,8]
                      %X2 = slice(%X) {axis=3, end=16, start=8} : f32[1,2,8,8]
                      %X3 = neg(%X2) : f32[1,2,8,8]
                      %X4 = concat(%X3, %X1) {axis=3} : f32[1,2,8,16]
                      %X5 = mul(%X4, %s) : f32[1,2,8,16]
                      %X6 = add(%X0, %X5) : f32[1,2,8,16]
                    """.replace("X", x));
        }
        body.append("""
                  %a = matmul(%q6, %k6) {transpose_b=true} : f32[1,2,8,8]
                  %p = softmax(%a) {causal=true, scale=0.25} : f32[1,2,8,8]
                  %o = matmul(%p, %v) : f32[1,2,8,16]
                  return %o
                """);
        RecognizeCase c = RecognizeCase.of(body.toString(), Map.of("cos", cos, "sin", sin));
        Graph g = new FuseAttention().run(new RecognizeRope(c.values()).run(c.graph()));
        Node att = g.node(g.outputs().getFirst());
        assertEquals(Op.ATTENTION, att.op(), g.toString());
        assertEquals(true, att.attrs().getBool("rope", false));
        assertEquals(List.of("q", "k", "v"), att.inputs());
        c.assertSameMeaning(g, 2e-6);
    }
}
