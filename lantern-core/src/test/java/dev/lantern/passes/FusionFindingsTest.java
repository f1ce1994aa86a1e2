package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.GraphChecks;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Valid graphs that fusion rules refused (issue 12): each failed before its fix with a pass error.
 * Now every pass takes them, the result round-trips through the text format, and the compiled CPU
 * run matches the float64 reference.
 */
class FusionFindingsTest {
    private static Graph parse(String body) {
        return Verifier.verify(IrParser.parse("graph @g {\n" + body + "}\n"));
    }

    private static void check(Graph g, long seed) {
        GraphChecks.everyPassRoundTrips(g);
        GraphChecks.compiledMatchesReference(g, seed, 1e-5);
    }

    @ParameterizedTest
    @ValueSource(strings = {"inf", "-inf", "nan", "1.0E-30"})
    void nonFiniteScalarConstantInlinesIntoAnExpression(String value) {
        Graph g = parse("""
                  %x = input {name="x"} : f32[4,8]
                  %c = constant {value=V} : f32[]
                  %0 = exp(%x) : f32[4,8]
                  %1 = add(%0, %c) : f32[4,8]
                  %2 = neg(%1) : f32[4,8]
                  return %2
                """.replace("V", value));
        Graph fused = Passes.byName("fuse-elementwise").run(g);
        Node e = fused.node("2");
        assertEquals(Op.ELEMENTWISE_FUSED, e.op());
        assertEquals(1, e.inputs().size(), "the constant is inlined: " + e);
        check(g, 12);
    }

    @ParameterizedTest
    @ValueSource(strings = {"residual", "cast", "widening"})
    void layerNormWithoutBiasFuses(String form) {
        String body = switch (form) {
            case "residual" -> """
                  %x = input {name="x"} : f32[4,16]
                  %r = input {name="r"} : f32[4,16]
                  %w = param {name="w"} : f32[16]
                  %s = add(%x, %r) : f32[4,16]
                  %n = layer_norm(%s, %w) : f32[4,16]
                  return %n
                """;
            case "cast" -> """
                  %x = input {name="x"} : f32[4,16]
                  %w = param {name="w"} : f32[16]
                  %n = layer_norm(%x, %w) : f32[4,16]
                  %c = cast(%n) {to="f16"} : f16[4,16]
                  %o = cast(%c) {to="f32"} : f32[4,16]
                  return %o
                """;
            default -> """
                  %x = input {name="x"} : f32[4,16]
                  %w = param {name="w"} : f32[16]
                  %h = cast(%x) {to="bf16"} : bf16[4,16]
                  %y = cast(%h) {to="f32"} : f32[4,16]
                  %n = layer_norm(%y, %w) : f32[4,16]
                  return %n
                """;
        };
        Graph g = parse(body);
        Graph fused = Passes.byName("fuse-norm").run(g);
        assertTrue(fused.nodes().stream().anyMatch(n -> n.op() == Op.FUSED_NORM), fused.toString());
        GraphChecks.everyPassRoundTrips(g);
        GraphChecks.compiledMatchesReference(g, 31, form.equals("residual") ? 1e-5 : 1e-2);
    }

    @Test
    void residualThatBroadcastsTheProductStaysAnAdd() {
        Graph g = parse("""
                  %a = input {name="a"} : f32[4,8]
                  %b = param {name="b"} : f32[8,8]
                  %r = input {name="r"} : f32[2,4,8]
                  %m = matmul(%a, %b) : f32[4,8]
                  %s = add(%m, %r) : f32[2,4,8]
                  %t = add(%r, %m) : f32[2,4,8]
                  %u = add(%s, %t) : f32[2,4,8]
                  return %u
                """);
        Graph fused = Passes.byName("fuse-gemm").run(g);
        assertTrue(fused.nodes().stream().noneMatch(n -> n.op() == Op.GEMM && n.inputs().size() > 2), fused.toString());
        check(g, 44);
    }

    /** canonicalize folds float scalars only: bool true + true is not the double 2 (found by GraphFuzzTest). */
    @Test
    void integerScalarsAreNotFoldedAsDoubles() {
        Graph g = parse("""
                  %a = constant {value=1.0} : bool[]
                  %b = constant {value=1.0} : bool[]
                  %0 = add(%a, %b) : bool[]
                  %c = constant {value=2.0} : f32[]
                  %1 = mul(%c, %c) : f32[]
                  return %0, %1
                """);
        Graph out = Passes.byName("canonicalize").run(g);
        assertEquals(Op.ADD, out.node("0").op(), out.toString());
        assertEquals(Op.CONSTANT, out.node("1").op(), out.toString());
        assertEquals(4.0, out.node("1").attrs().getDouble("value", 0));
    }

    /** softmax(x · inf) keeps its product: an infinite scale is not one softmax takes. */
    @Test
    void infiniteScaleStaysOutOfSoftmax() {
        Graph g = parse("""
                  %x = input {name="x"} : f32[4,8]
                  %c = constant {value=inf} : f32[]
                  %0 = mul(%x, %c) : f32[4,8]
                  %1 = softmax(%0) : f32[4,8]
                  return %1
                """);
        Graph fused = Passes.byName("fuse-norm").run(g);
        assertEquals(Op.MUL, fused.node(fused.node("1").input(0)).op(), fused.toString());
        GraphChecks.everyPassRoundTrips(g);
    }

    @ParameterizedTest
    @ValueSource(strings = {"i32", "bool"})
    void integerCastsBesideGemmAndNormAreLeftAlone(String to) {
        Graph g = parse("""
                  %a = input {name="a"} : f32[4,8]
                  %b = param {name="b"} : f32[8,8]
                  %w = param {name="w"} : f32[8]
                  %m = matmul(%a, %b) : f32[4,8]
                  %c = cast(%m) {to="T"} : T[4,8]
                  %n = rms_norm(%a, %w) : f32[4,8]
                  %d = cast(%n) {to="T"} : T[4,8]
                  %e = exp(%n) : f32[4,8]
                  %f = cast(%e) {to="T"} : T[4,8]
                  return %c, %d, %f
                """.replace("T", to));
        for (String pass : new String[] {"fuse-gemm", "fuse-norm", "fuse-elementwise", "fuse"}) {
            Graph out = Passes.byName(pass).run(g);
            GraphChecks.roundTrips(pass, out);
            assertTrue(out.nodes().stream().filter(n -> n.op() == Op.CAST).count() == 3, pass + " keeps the three casts:\n" + out);
        }
    }
}
