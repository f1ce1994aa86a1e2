package dev.lantern.ir;

import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Regressions for what fuzzing the IR found (issue 12): untyped crashes and accepted-invalid graphs.
 * Each case failed before its fix with a Java exception or with exit 0.
 */
class FuzzFindingsTest {
    // --- untyped crashes

    /** Zero-size tensors are legal (ONNX, PyTorch): an empty M gives an empty result; K = 0 gives zeros. */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "f32[0,4] | f32[4,4] | f32[0,4]",
            "f32[3,0] | f32[0,5] | f32[3,5]",
            "f32[3,4] | f32[4,0] | f32[3,0]",
            "f32[2,0,4] | f32[4,4] | f32[2,0,4]"})
    void zeroSizeMatmulRunsEverywhere(String a, String b, String c) {
        Graph g = IrParser.parse("graph @z {\n  %a = input {name=\"a\"} : " + a + "\n  %b = param {name=\"b\"} : " + b
                + "\n  %c = matmul(%a, %b) : " + c + "\n  %d = gelu(%c) : " + c + "\n  return %d, %c\n}\n");
        Verifier.verify(g);
        Map<String, Tensor> in = new HashMap<>();
        in.put("a", Philox.normal(Tensor.allocate(g.type("a").contiguous()), 7, 1f));
        in.put("b", Philox.normal(Tensor.allocate(g.type("b").contiguous()), 8, 1f));
        Map<String, RefTensor> ref = ReferenceInterpreter.run(g, in);
        Map<String, Tensor> eager = new EagerExecutor().run(g, in);
        CompiledModel cm = Compiler.compile(g, CompileOptions.defaults());
        Map<String, Tensor> compiled;
        try (CompiledCpuExecutor x = new CompiledCpuExecutor(cm).bind(Map.of("b", in.get("b")))) {
            x.poisonArena();
            compiled = x.run(Map.of("a", in.get("a")));
        }
        for (String o : g.outputs()) {
            long numel = g.type(o).shape().numel();
            assertEquals(numel, ref.get(o).data().length);
            assertEquals(numel, eager.get(o).numel(), "eager %" + o);
            assertEquals(numel, compiled.get(o).numel(), "compiled %" + o);
            for (int i = 0; i < numel; i++) {
                assertEquals(0.0, ref.get(o).data()[i], "K = 0 sums nothing");
                assertEquals(0.0, eager.get(o).get(i), "eager %" + o + "[" + i + "]");
                assertEquals(0.0, compiled.get(o).get(i), "compiled %" + o + "[" + i + "]");
            }
        }
    }

    /** Every op takes zero-size values: nothing to compute, an empty result (found by GraphFuzzTest for rope). */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "f32[1,0,0,4] | %0 = rope(%x) : f32[1,0,0,4]",
            "f32[2,0,4]   | %0 = softmax(%x) {causal=true} : f32[2,0,4]",
            "f32[3,0]     | %0 = softmax(%x) : f32[3,0]",
            "f32[0,4]     | %0 = rms_norm(%x, %w) : f32[0,4]",
            "f32[2,0]     | %0 = permute(%x) {perm=[1,0]} : f32[0,2]",
            "f32[0,4]     | %0 = concat(%x, %x) {axis=0} : f32[0,4]"})
    void zeroSizeValuesRunEverywhere(String xType, String node) {
        String w = node.contains("norm") ? "  %w = param {name=\"w\"} : f32[4]\n" : "";
        Graph g = Verifier.verify(IrParser.parse("graph @z {\n  %x = input {name=\"x\"} : " + xType + "\n" + w + "  " + node
                + "\n  %1 = exp(%0) : " + node.substring(node.lastIndexOf(": ") + 2) + "\n  return %1\n}\n"));
        GraphChecks.everyPassRoundTrips(g);
        GraphChecks.compiledMatchesReference(g, 3, 0);
        Map<String, Tensor> eager = new EagerExecutor().run(g, GraphChecks.sources(g, 3));
        assertEquals(0, eager.get("1").numel());
    }

    /** canonicalize drops the identity cast, so the compiled graph returns %p: the result still comes back as %1 (found by GraphFuzzTest). */
    @Test
    void compiledOutputsKeepTheSourceNames() {
        Graph g = Verifier.verify(IrParser.parse("""
                graph @g {
                  %p = param {name="p"} : f32[5]
                  %1 = cast(%p) {to="f32"} : f32[5]
                  %2 = exp(%p) : f32[5]
                  return %1, %2
                }
                """));
        GraphChecks.compiledMatchesReference(g, 9, 1e-6);
    }

    /** head_dim 0: every score is 0, so each output row is the mean of v's rows (found by GraphFuzzTest: rope divided by d). */
    @Test
    void attentionWithAnEmptyHeadDimRuns() {
        Graph g = Verifier.verify(IrParser.parse("""
                graph @a {
                  %q = input {name="q"} : f32[1,2,3,0]
                  %v = input {name="v"} : f32[1,2,3,4]
                  %0 = attention(%q, %q, %v) {rope=true, scale=0.5} : f32[1,2,3,4]
                  return %0
                }
                """));
        GraphChecks.everyPassRoundTrips(g);
        GraphChecks.compiledMatchesReference(g, 17, 1e-5);
    }

    /** relu(NaN) is NaN in every element, as in PyTorch: the scalar tail gave 0 where the vector body gave NaN (found by GraphFuzzTest). */
    @Test
    void reluKeepsNaNInEveryLane() {
        Graph g = Verifier.verify(IrParser.parse("""
                graph @r {
                  %x = input {name="x"} : f32[37]
                  %c = constant {value=nan} : f32[]
                  %0 = mul(%x, %c) : f32[37]
                  %1 = relu(%0) : f32[37]
                  return %1
                }
                """));
        Map<String, Tensor> eager = new EagerExecutor().run(g, GraphChecks.sources(g, 4));
        for (int i = 0; i < 37; i++) {
            assertTrue(Float.isNaN(eager.get("1").get(i)), "eager relu(NaN) at " + i);
        }
        GraphChecks.compiledMatchesReference(g, 4, 0);
    }

    @Test
    void hugeInputIndexInAnExpressionIsATypedError() {
        Graph g = IrParser.parse("""
                graph @e {
                  %x = input {name="x"} : f32[4]
                  %0 = elementwise(%x) {expr="$99999999999"} : f32[4]
                  return %0
                }
                """);
        VerifyException e = assertThrows(VerifyException.class, () -> Verifier.verify(g));
        assertTrue(e.getMessage().contains("99999999999"), e.getMessage());
    }

    @Test
    void deeplyNestedExpressionIsATypedError() {
        String expr = "neg(".repeat(10_000) + "$0" + ")".repeat(10_000);
        Graph g = IrParser.parse("graph @deep {\n  %x = input {name=\"x\"} : f32[4]\n  %0 = elementwise(%x) {expr=\""
                + expr + "\"} : f32[4]\n  return %0\n}\n");
        VerifyException e = assertThrows(VerifyException.class, () -> Verifier.verify(g));
        assertTrue(e.getMessage().contains("nested deeper than " + ElementwiseExpr.MAX_DEPTH), e.getMessage());
    }

    /** An expression need not read every input: an unread one still gives the output its shape (found by GraphFuzzTest). */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            "%0 = elementwise(%x) {expr=\"0.5\"} : f32[3,5]",
            "%0 = elementwise(%x, %y) {expr=\"exp($1)\"} : f32[3,5]",
            "%0 = elementwise(%y, %x) {expr=\"add($0, 2.0)\"} : f32[3,5]"})
    void expressionThatSkipsAnInputRuns(String node) {
        Graph g = Verifier.verify(IrParser.parse("graph @e {\n  %x = input {name=\"x\"} : f32[3,5]\n  %y = input {name=\"y\"} : f32[5]\n  "
                + node + "\n  return %0\n}\n"));
        GraphChecks.compiledMatchesReference(g, 5, 1e-6);
    }

    // --- accepted invalid IR

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
            // element count past 2^63
            "%0 = reshape(%x) {shape=[4,5,5581,8681,49477,384773]} : f32[4,5,5581,8681,49477,384773]      | f32[4]      | overflows",
            // a 64-bit attribute must not be read modulo 2^32
            "%0 = slice(%x) {axis=4294967297, start=0, end=1} : f32[2,1]                                  | f32[2,3]    | out of the int range",
            "%0 = reshape(%x) {shape=[4294967304]} : f32[8]                                               | f32[8]      | out of the int range",
            // a concat whose axis adds past 2^31 - 1
            "%0 = concat(%x, %x) {axis=0} : f32[0]                                                        | f32[2147483647] | past the dimension limit",
            // strides the producer cannot have given
            "%0 = permute(%x) {perm=[1,0]} : f32[8,4]@[0,0]                                               | f32[4,8]    | strides",
            "%0 = reshape(%x) {shape=[8,4]} : f32[8,4]@[1,8]                                              | f32[4,8]    | strides",
            "%0 = gelu(%x) {approximate=\"banana\"} : f32[4]                                              | f32[4]      | approximate",
            // float attributes outside their meaning: every row NaN (found by GraphFuzzTest: eps=-2.5)
            "%0 = rms_norm(%x, %x) {eps=-2.5} : f32[4]                                                     | f32[4]      | must be a finite number >= 0.0",
            "%0 = layer_norm(%x, %x) {eps=nan} : f32[4]                                                   | f32[4]      | NaN",
            "%0 = softmax(%x) {scale=inf} : f32[4]                                                        | f32[4]      | found Infinity",
            "%0 = rope(%x) {base=0.0} : f32[1,1,2,4]                                                      | f32[1,1,2,4] | must be a finite number >= 4.9E-324",
            // a row-wise op of a scalar has no rows (found by GraphFuzzTest: softmax of f32[] crashed the CPU kernel)
            "%0 = softmax(%x) : f32[]                                                                     | f32[]       | needs rank >= 1",
            "%0 = rms_norm(%x, %x) : f32[]                                                                | f32[]       | needs rank >= 1"})
    void invalidGraphsAreRefused(String node, String xType, String says) {
        LanternException e = assertThrows(LanternException.class, () -> Verifier.verify(IrParser.parse(
                "graph @bad {\n  %x = input {name=\"x\"} : " + xType + "\n  " + node + "\n  return %0\n}\n")));
        assertTrue(e.getMessage().contains(says), e.getMessage());
    }

    @Test
    void overlappingStridesOnAnInputAreRefused() {
        LanternException e = assertThrows(LanternException.class, () -> Verifier.verify(IrParser.parse("""
                graph @bad {
                  %x = input {name="x"} : f32[8,4]@[0,0]
                  %w = param {name="w"} : f32[4,4]
                  %0 = matmul(%x, %w) : f32[8,4]
                  return %0
                }
                """)));
        assertTrue(e.getMessage().contains("overlap"), e.getMessage());
    }

    @Test
    void transposedInputStridesStayAccepted() {
        Verifier.verify(IrParser.parse("""
                graph @ok {
                  %x = input {name="x"} : f32[33,7]@[1,33]
                  %0 = permute(%x) {perm=[1,0]} : f32[7,33]@[33,1]
                  %1 = permute(%x) {perm=[1,0]} : f32[7,33]
                  return %0, %1
                }
                """));
    }

    @Test
    void absurdTensorsAreRefusedNamingTheLimit() {
        ParseException e = assertThrows(ParseException.class, () -> IrParser.parse(
                "graph @big {\n  %x = input {name=\"x\"} : f32[2147483647,2147483647]\n  return %x\n}\n"));
        assertTrue(e.getMessage().contains("over the limit of " + TensorType.MAX_BYTES + " bytes"), e.getMessage());
        e = assertThrows(ParseException.class, () -> IrParser.parse(
                "graph @big {\n  %x = input {name=\"x\"} : f32[2147483647,2147483647,2147483647]\n  return %x\n}\n"));
        assertTrue(e.getMessage().contains("overflows 64 bits"), e.getMessage());
        // exactly at the limit is a legal type (whether it fits a device is the planner's business)
        long rows = TensorType.MAX_BYTES / 4 / 1048576;
        Verifier.verify(IrParser.parse("graph @ok {\n  %x = input {name=\"x\"} : f32[" + rows + ",1048576]\n  return %x\n}\n"));
        assertThrows(ParseException.class, () -> IrParser.parse(
                "graph @big {\n  %x = input {name=\"x\"} : f32[" + (rows + 1) + ",1048576]\n  return %x\n}\n"));
    }

    @Test
    void nonFiniteConstantsPrintAndReadBack() {
        for (double v : new double[] {Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN, -0.0, 1e-300}) {
            ElementwiseExpr e = new ElementwiseExpr.Call("add", java.util.List.of(new ElementwiseExpr.In(0), new ElementwiseExpr.Const(v)));
            ElementwiseExpr back = ElementwiseExpr.parse(e.toString());
            assertEquals(e.toString(), back.toString());
            double got = ((ElementwiseExpr.Const) ((ElementwiseExpr.Call) back).args().get(1)).value();
            assertArrayEquals(new double[] {v}, new double[] {got}, 0.0);
        }
    }
}
