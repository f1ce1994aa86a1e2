package dev.lantern.cpu;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.ParamInit;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IndexOutOfRangeException;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.Layout;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.Verifier;
import dev.lantern.ir.VerifyException;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gather on the eager kernels and the compiled executor against the float64 reference: random tables
 * of rank 1-4 (f32, bf16, f16), every axis (negative spellings too), i32 and i64 ids of rank 0-3 with
 * negative ids, from a fixed seed. A gather copies elements, so the result must equal the reference
 * exactly. Ids outside [-n, n) are an {@link IndexOutOfRangeException} on every path.
 */
class GatherTest {
    private static final long SEED = 0x6A7E_2026L;

    record Case(DType table, int[] tableDims, int axis, DType ids, int[] idDims, long seed) {
        @Override
        public String toString() {
            return "gather " + table + java.util.Arrays.toString(tableDims) + " axis=" + axis + " ids " + ids
                    + java.util.Arrays.toString(idDims) + " seed=" + seed;
        }
    }

    static List<Case> cases() {
        SplittableRandom r = new SplittableRandom(SEED);
        List<Case> c = new ArrayList<>();
        DType[] tables = {DType.F32, DType.BF16, DType.F16};
        for (int i = 0; i < 36; i++) {
            int rank = 1 + i % 4;
            int[] dims = new int[rank];
            for (int d = 0; d < rank; d++) {
                dims[d] = 1 + r.nextInt(d == rank - 1 ? 70 : 9);
            }
            int axis = r.nextInt(rank);
            if (r.nextBoolean()) {
                axis -= rank; // the negative spelling of the same axis
            }
            int[] ids = new int[r.nextInt(4)];
            for (int d = 0; d < ids.length; d++) {
                ids[d] = 1 + r.nextInt(6);
            }
            c.add(new Case(tables[i % 3], dims, axis, i % 2 == 0 ? DType.I64 : DType.I32, ids, SEED + i));
        }
        // an embedding-shaped case: a wide vocabulary, (batch, seq) ids
        c.add(new Case(DType.F32, new int[] {1000, 96}, 0, DType.I64, new int[] {3, 17}, SEED + 100));
        c.add(new Case(DType.BF16, new int[] {1000, 96}, 0, DType.I32, new int[] {3, 17}, SEED + 101));
        return c;
    }

    static Graph graph(Case c) {
        GraphBuilder g = new GraphBuilder("gather");
        Value table = g.param("table", TensorType.of(c.table(), Shape.of(c.tableDims())), ParamInit.normal(1f));
        Value ids = g.input("ids", TensorType.of(c.ids(), Shape.of(c.idDims())));
        return g.build(g.op(Op.GATHER, Attrs.of("axis", c.axis()), table, ids));
    }

    /** Ids in [-n, n): every row reachable, about half spelled negative. */
    static Tensor ids(DType d, Shape s, int n, long seed) {
        Tensor t = Tensor.allocate(d, s);
        SplittableRandom r = new SplittableRandom(seed);
        for (long i = 0; i < t.numel(); i++) {
            t.set(i, r.nextInt(-n, n));
        }
        return t;
    }

    static Map<String, Tensor> sources(Case c) {
        Tensor table = Philox.normal(Tensor.allocate(c.table(), Shape.of(c.tableDims())), Philox.key(c.seed(), "table"), 1f);
        int n = c.tableDims()[c.axis() < 0 ? c.axis() + c.tableDims().length : c.axis()];
        Map<String, Tensor> m = new HashMap<>();
        m.put("table", table);
        m.put("ids", ids(c.ids(), Shape.of(c.idDims()), n, c.seed() + 1));
        return m;
    }

    @TestFactory
    Stream<DynamicTest> eagerAndCompiledEqualTheReference() {
        return cases().stream().map(c -> DynamicTest.dynamicTest(c.toString(), () -> {
            Graph g = Verifier.verify(graph(c));
            Map<String, Tensor> src = sources(c);
            RefTensor ref = ReferenceInterpreter.run(g, src).values().iterator().next();
            assertTrue(Diff.nonTrivial(ref) || ref.data().length == 0, c + ": all-zero reference");
            assertExact(ref, OpDifferentialTest.runPoisoned(g, src), c + " eager kernels");
            assertExact(ref, new EagerExecutor(true).run(g, src).get(g.outputs().getFirst()), c + " eager executor");
            assertExact(ref, compiled(g, src, CompileOptions.defaults()).get(g.outputs().getFirst()), c + " compiled");
        }));
    }

    @Test
    void stridedTableTakesTheStridedPath() {
        // a transposed table f32[7,5]@[1,7] over 35 elements: rows are not contiguous
        GraphBuilder b = new GraphBuilder("strided");
        Value table = b.param("table", new TensorType(DType.F32, Shape.of(7, 5), Layout.strided(1, 7)), ParamInit.normal(1f));
        Value ids = b.input("ids", TensorType.of(DType.I64, Shape.of(4)));
        Graph g = Verifier.verify(b.build(b.op(Op.GATHER, Attrs.of("axis", 0), table, ids)));
        Tensor t = Philox.normal(Tensor.allocate(DType.F32, Shape.of(35)), 11, 1f);
        Tensor id = Tensor.allocate(DType.I64, Shape.of(4));
        long[] want = {6, -1, 0, 3};
        for (int i = 0; i < 4; i++) {
            id.set(i, want[i]);
        }
        Map<String, Tensor> src = Map.of("table", t, "ids", id);
        RefTensor ref = ReferenceInterpreter.run(g, src).values().iterator().next();
        // row 6 of the transposed table is column 6 of the stored [5,7]: elements 6, 13, 20, ...
        assertEquals(t.get(6 + 7 * 2), ref.get(0, 2));
        assertEquals(t.get(6 + 7 * 4), ref.get(1, 4)); // -1 wraps to row 6
        assertExact(ref, new EagerExecutor(true).run(g, src).get(g.outputs().getFirst()), "strided eager");
        assertExact(ref, compiled(g, src, CompileOptions.defaults()).get(g.outputs().getFirst()), "strided compiled");
    }

    @Test
    void embeddingMatmulSoftmaxCompiledMatchesReference() {
        GraphBuilder b = new GraphBuilder("embed");
        Value table = b.param("wte", TensorType.of(DType.F32, Shape.of(50, 32)), ParamInit.normal(1f));
        Value head = b.param("head", TensorType.of(DType.F32, Shape.of(32, 50)), ParamInit.normal(1f));
        Value ids = b.input("ids", TensorType.of(DType.I64, Shape.of(2, 9)));
        Value h = b.op(Op.GATHER, Attrs.of("axis", 0), table, ids);
        Graph g = Verifier.verify(b.build(b.softmax(b.matmul(h, head), false, 0.2)));
        Map<String, Tensor> src = new HashMap<>();
        src.put("wte", Philox.normal(Tensor.allocate(DType.F32, Shape.of(50, 32)), 21, 1f));
        src.put("head", Philox.normal(Tensor.allocate(DType.F32, Shape.of(32, 50)), 22, 1f));
        src.put("ids", ids(DType.I64, Shape.of(2, 9), 50, 23));
        RefTensor ref = ReferenceInterpreter.run(g, src).values().iterator().next();
        Diff.assertClose(compiled(g, src, CompileOptions.defaults()).get(g.outputs().getFirst()), ref, 1e-5, "compiled");
        Diff.assertClose(compiled(g, src, CompileOptions.defaults().withAmp(CompileOptions.Amp.parse("bf16")))
                .get(g.outputs().getFirst()), ref, 3e-2, "compiled --amp bf16");
    }

    @Test
    void idsOutsideTheTableAreTypedErrorsOnEveryPath() {
        Case c = new Case(DType.F32, new int[] {6, 4}, 0, DType.I64, new int[] {2, 3}, SEED);
        Graph g = Verifier.verify(graph(c));
        for (long bad : new long[] {6, -7, 1L << 40, Long.MIN_VALUE}) {
            Map<String, Tensor> src = sources(c);
            Tensor ids = src.get("ids");
            ids.segment().setAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 4, bad); // position 4 of 6
            IndexOutOfRangeException ref = assertThrows(IndexOutOfRangeException.class, () -> ReferenceInterpreter.run(g, src));
            IndexOutOfRangeException eager = assertThrows(IndexOutOfRangeException.class, () -> new EagerExecutor().run(g, src));
            IndexOutOfRangeException comp = assertThrows(IndexOutOfRangeException.class, () -> compiled(g, src, CompileOptions.defaults()));
            for (IndexOutOfRangeException e : List.of(ref, eager, comp)) {
                assertTrue(e.getMessage().contains("id " + bad + " at position 4") && e.getMessage().contains("[-6, 6)"), e.getMessage());
            }
        }
        // the edges are in range: -6 is row 0, 5 the last row
        Map<String, Tensor> src = sources(c);
        src.get("ids").set(0, -6);
        src.get("ids").set(1, 5);
        RefTensor ref = ReferenceInterpreter.run(g, src).values().iterator().next();
        assertEquals(src.get("table").get(0), ref.get(0, 0, 0));
        assertEquals(src.get("table").get(20), ref.get(0, 1, 0));
        assertExact(ref, new EagerExecutor().run(g, src).get(g.outputs().getFirst()), "edges");
    }

    @Test
    void i32IdsOutsideTheTableAreTypedErrors() {
        Case c = new Case(DType.BF16, new int[] {3, 5, 2}, 1, DType.I32, new int[] {4}, SEED);
        Graph g = Verifier.verify(graph(c));
        Map<String, Tensor> src = sources(c);
        src.get("ids").set(3, 5);
        assertThrows(IndexOutOfRangeException.class, () -> new EagerExecutor().run(g, src));
        assertThrows(IndexOutOfRangeException.class, () -> compiled(g, src, CompileOptions.defaults()));
    }

    @Test
    void textFormatRoundTripsAndTheVerifierChecksTypes() {
        String text = """
                graph @embed {
                  %wte = param {name="wte"} : bf16[100,16]
                  %ids = input {name="ids"} : i64[2,7]
                  %pos = input {name="pos"} : i32[]
                  %0 = gather(%wte, %ids) {axis=0} : bf16[2,7,16]
                  %1 = gather(%0, %pos) {axis=-2} : bf16[2,16]
                  return %0, %1
                }
                """;
        Graph g = Verifier.verify(IrParser.parse(text));
        assertEquals(text, IrPrinter.print(g));
        assertEquals(g, IrParser.parse(IrPrinter.print(g)));
        // float ids, a wrong declared shape, an axis past the rank
        for (String bad : List.of(
                "%0 = gather(%wte, %f) {axis=0} : bf16[2,7,16]",
                "%0 = gather(%wte, %ids) {axis=0} : bf16[2,16,7]",
                "%0 = gather(%wte, %ids) {axis=2} : bf16[2,7,16]",
                "%0 = gather(%wte, %ids) {axis=0} : f32[2,7,16]")) {
            String src = """
                    graph @bad {
                      %wte = param {name="wte"} : bf16[100,16]
                      %ids = input {name="ids"} : i64[2,7]
                      %f = input {name="f"} : f32[2,7]
                      BAD
                      return %0
                    }
                    """.replace("BAD", bad);
            assertThrows(VerifyException.class, () -> Verifier.verify(IrParser.parse(src)), bad);
        }
    }

    @Test
    void typeRuleIsNumpyTake() {
        TensorType t = Op.GATHER.infer(List.of(TensorType.of(DType.F16, Shape.of(3, 4, 5)), TensorType.of(DType.I32, Shape.of(6, 7))),
                Attrs.of("axis", 1));
        assertEquals(TensorType.of(DType.F16, Shape.of(3, 6, 7, 5)), t);
        TensorType scalar = Op.GATHER.infer(List.of(TensorType.of(DType.F32, Shape.of(3, 4)), TensorType.of(DType.I64, Shape.scalar())),
                Attrs.EMPTY);
        assertEquals(TensorType.of(DType.F32, Shape.of(4)), scalar);
    }

    /** Compiles {@code g} and runs one forward: "ids" is the input, every other tensor a param. */
    static Map<String, Tensor> compiled(Graph g, Map<String, Tensor> src, CompileOptions o) {
        CompiledModel cm = Compiler.compile(g, o);
        Map<String, Tensor> params = new HashMap<>(src);
        params.remove("ids");
        try (CompiledCpuExecutor x = new CompiledCpuExecutor(cm).bind(params)) {
            x.poisonArena();
            return x.run(Map.of("ids", src.get("ids")));
        }
    }

    static void assertExact(RefTensor ref, Tensor out, String what) {
        assertEquals(ref.data().length, out.numel(), what + ": element count");
        for (int i = 0; i < ref.data().length; i++) {
            if (ref.data()[i] != out.get(i)) {
                throw new AssertionError(what + ": element " + i + " is " + out.get(i) + ", the reference " + ref.data()[i]);
            }
        }
    }
}
