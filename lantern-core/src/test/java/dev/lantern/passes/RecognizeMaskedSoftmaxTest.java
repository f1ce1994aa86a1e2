package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/**
 * The scale and the causal mask that exporters put around the attention scores become the
 * softmax's attributes (checked value by value), so that fuse-attention makes one attention op of
 * the LLaMA and GPT-2 forms; every near miss is left as it is.
 */
class RecognizeMaskedSoftmaxTest {
    private static final int S = 8;

    /** A causal mask [lead.., S, S]: 0 on and below the diagonal shifted by {@code shift}, {@code fill} above. */
    static Tensor mask(int[] dims, int shift, double fill) {
        return RecognizeCase.table(dims, i -> i % S <= i / S % S + shift ? 0 : fill);
    }

    static Tensor scalar(double v) {
        return RecognizeCase.table(new int[0], i -> v);
    }

    /** LLaMA's export: softmax(add(mul(q·kᵀ, scale), mask)) · v. */
    static RecognizeCase llamaForm(String maskType, Tensor mask, Tensor scale) {
        return RecognizeCase.of("""
                  %q = input {name="q"} : f32[2,4,8,16]
                  %k = input {name="k"} : f32[2,4,8,16]
                  %v = input {name="v"} : f32[2,4,8,16]
                  %0 = matmul(%q, %k) {transpose_b=true} : f32[2,4,8,8]
                  %c = param {name="c"} : f32[]
                  %1 = mul(%0, %c) : f32[2,4,8,8]
                  %m = param {name="m"} : MASK
                  %2 = add(%1, %m) : f32[2,4,8,8]
                  %3 = softmax(%2) : f32[2,4,8,8]
                  %4 = matmul(%3, %v) : f32[2,4,8,16]
                  return %4
                """.replace("MASK", maskType), Map.of("c", scale, "m", mask));
    }

    static Graph recognizeAndFuse(RecognizeCase c) {
        return new FuseAttention().run(new RecognizeMaskedSoftmax(c.values()).run(c.graph()));
    }

    static Node only(Graph g, Op op) {
        var ns = g.nodes().stream().filter(n -> n.op() == op).toList();
        assertEquals(1, ns.size(), op + " in " + g);
        return ns.getFirst();
    }

    @ParameterizedTest(name = "mask fill {0}")
    @ValueSource(doubles = {Double.NEGATIVE_INFINITY, -3.4028234663852886e38, -1e9, -1e5})
    void llamaScoresBecomeOneCausalAttention(double fill) {
        RecognizeCase c = llamaForm("f32[2,1,8,8]", mask(new int[] {2, 1, S, S}, 0, fill), scalar(0.25));
        Graph g = recognizeAndFuse(c);
        Node att = only(g, Op.ATTENTION);
        assertEquals(true, att.attrs().getBool("causal", false));
        assertEquals(0.25, att.attrs().getDouble("scale", 0));
        assertEquals(0, c.count(g, Op.SOFTMAX) + c.count(g, Op.ADD) + c.count(g, Op.MUL));
        c.assertSameMeaning(g, 1e-12);
    }

    @Test
    void maskAddedBeforeTheScaleAndDivisionBySqrtD() {
        RecognizeCase c = RecognizeCase.of("""
                  %q = input {name="q"} : f32[1,2,8,16]
                  %k = input {name="k"} : f32[1,2,8,16]
                  %0 = matmul(%q, %k) {transpose_b=true} : f32[1,2,8,8]
                  %m = param {name="m"} : f32[8,8]
                  %1 = add(%m, %0) : f32[1,2,8,8]
                  %d = constant {value=4.0} : f32[]
                  %2 = div(%1, %d) : f32[1,2,8,8]
                  %3 = softmax(%2) : f32[1,2,8,8]
                  return %3
                """, Map.of("m", mask(new int[] {S, S}, 0, -1e9)));
        Graph g = new RecognizeMaskedSoftmax(c.values()).run(c.graph());
        Node sm = only(g, Op.SOFTMAX);
        assertEquals(true, sm.attrs().getBool("causal", false));
        assertEquals(0.25, sm.attrs().getDouble("scale", 0));
        assertEquals("0", sm.input(0));
        c.assertSameMeaning(g, 1e-12);
    }

    @Test
    void whereFormFromOlderGpt2Exports() {
        // where(causal, scores / √d, -1e4) as the importer writes it: (scores / √d) · keep + fill
        String body = """
                  %q = input {name="q"} : f32[1,2,8,16]
                  %k = input {name="k"} : f32[1,2,8,16]
                  %0 = matmul(%q, %k) {transpose_b=true} : f32[1,2,8,8]
                  %d = param {name="d"} : f32[]
                  %1 = div(%0, %d) : f32[1,2,8,8]
                  %keep = param {name="keep"} : f32[1,1,8,8]
                  %2 = mul(%1, %keep) : f32[1,2,8,8]
                  %fill = param {name="fill"} : f32[1,1,8,8]
                  %3 = add(%2, %fill) : f32[1,2,8,8]
                  %4 = softmax(%3) : f32[1,2,8,8]
                  return %4
                """;
        int[] dims = {1, 1, S, S};
        Tensor keep = RecognizeCase.table(dims, i -> i % S <= i / S % S ? 1 : 0);
        RecognizeCase c = RecognizeCase.of(body, Map.of("d", scalar(4), "keep", keep, "fill", mask(dims, 0, -1e4)));
        Graph g = new RecognizeMaskedSoftmax(c.values()).run(c.graph());
        Node sm = only(g, Op.SOFTMAX);
        assertEquals(true, sm.attrs().getBool("causal", false));
        assertEquals(0.25, sm.attrs().getDouble("scale", 0));
        assertEquals("0", sm.input(0));
        c.assertSameMeaning(g, 1e-12);
        // a keep table that is not the causal one (1 at one place above the diagonal) stays a mul: only the
        // fill, a causal mask by itself, goes into the softmax
        Tensor other = RecognizeCase.table(dims, i -> i % S <= i / S % S || i == 3 ? 1 : 0);
        RecognizeCase near = RecognizeCase.of(body, Map.of("d", scalar(4), "keep", other, "fill", mask(dims, 0, -1e4)));
        Graph ng = new RecognizeMaskedSoftmax(near.values()).run(near.graph());
        assertEquals(Op.MUL, ng.node(only(ng, Op.SOFTMAX).input(0)).op(), ng.toString());
        near.assertSameMeaning(ng, 1e-12);
    }

    @Test
    void gpt2KeyPermuteBecomesTransposeB() {
        // GPT-2 and BERT: k (b, t, h, d) permuted to (b, h, d, t) in one step
        RecognizeCase c = RecognizeCase.of("""
                  %q = input {name="q"} : f32[2,4,8,16]
                  %k = input {name="k"} : f32[2,8,4,16]
                  %v = input {name="v"} : f32[2,4,8,16]
                  %kt = permute(%k) {perm=[0,2,3,1]} : f32[2,4,16,8]
                  %0 = matmul(%q, %kt) : f32[2,4,8,8]
                  %c = param {name="c"} : f32[]
                  %1 = mul(%0, %c) : f32[2,4,8,8]
                  %m = param {name="m"} : f32[1,1,8,8]
                  %2 = add(%1, %m) : f32[2,4,8,8]
                  %3 = softmax(%2) : f32[2,4,8,8]
                  %4 = matmul(%3, %v) : f32[2,4,8,16]
                  return %4
                """, Map.of("c", scalar(0.25), "m", mask(new int[] {1, 1, S, S}, 0, Float.NEGATIVE_INFINITY)));
        Graph g = recognizeAndFuse(c);
        only(g, Op.ATTENTION);
        assertEquals(0, c.count(g, Op.MATMUL));
        c.assertSameMeaning(g, 1e-12);
    }

    @Test
    void nearMissesAreLeftAlone() {
        Tensor quarter = scalar(0.25);
        int[] dims = {2, 1, S, S};
        // the mask shifted by one either way: the diagonal masked, or the first key past it let through
        for (Tensor m : new Tensor[] {mask(dims, -1, -1e9), mask(dims, 1, -1e9)}) {
            assertUnchangedSoftmax(llamaForm("f32[2,1,8,8]", m, quarter));
        }
        // too weak to mask: exp(-1000) is not 0 in float64 (the causal softmax's weight is)
        assertUnchangedSoftmax(llamaForm("f32[2,1,8,8]", mask(dims, 0, -1e3), quarter));
        // a padding position in the second batch row: no longer the causal mask alone
        Tensor padded = mask(dims, 0, -1e9);
        padded.set(S * S + S * 5 + 2, -1e9f);
        assertUnchangedSoftmax(llamaForm("f32[2,1,8,8]", padded, quarter));
        // the mask's values are not known (a graph read from text): nothing is guessed from the shape
        RecognizeCase c = llamaForm("f32[2,1,8,8]", mask(dims, 0, -1e9), quarter);
        Graph g = new RecognizeMaskedSoftmax().run(c.graph());
        assertEquals(false, only(g, Op.SOFTMAX).attrs().getBool("causal", false));
    }

    @Test
    void aRunTimeMaskOrNonSquareScoresAreLeftAlone() {
        RecognizeCase runTime = RecognizeCase.of("""
                  %s = input {name="s"} : f32[2,4,8,8]
                  %m = input {name="m"} : f32[2,1,8,8]
                  %0 = add(%s, %m) : f32[2,4,8,8]
                  %1 = softmax(%0) : f32[2,4,8,8]
                  return %1
                """, Map.of());
        assertSame(runTime.graph(), new RecognizeMaskedSoftmax(runTime.values()).run(runTime.graph()));
        RecognizeCase offset = RecognizeCase.of("""
                  %s = input {name="s"} : f32[2,4,4,8]
                  %m = param {name="m"} : f32[4,8]
                  %0 = add(%s, %m) : f32[2,4,4,8]
                  %1 = softmax(%0) : f32[2,4,4,8]
                  return %1
                """, Map.of("m", RecognizeCase.table(new int[] {4, 8}, i -> i % 8 <= i / 8 + 4 ? 0 : -1e9)));
        assertSame(offset.graph(), new RecognizeMaskedSoftmax(offset.values()).run(offset.graph()));
    }

    private static void assertUnchangedSoftmax(RecognizeCase c) {
        Graph g = new RecognizeMaskedSoftmax(c.values()).run(c.graph());
        Node sm = only(g, Op.SOFTMAX);
        assertEquals(false, sm.attrs().getBool("causal", false));
        assertEquals(Op.ADD, g.node(sm.input(0)).op(), g.toString());
        assertEquals(0, c.count(recognizeAndFuse(c), Op.ATTENTION));
    }
}
