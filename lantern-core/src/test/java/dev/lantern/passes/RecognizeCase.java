package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** A graph in IR text with the values of its params (the tables), for the recognition tests. */
record RecognizeCase(Graph graph, Map<String, Tensor> tables) {
    static RecognizeCase of(String body, Map<String, Tensor> tables) {
        return new RecognizeCase(IrParser.parse("graph @g {\n" + body + "}\n"), tables);
    }

    ConstantValues values() {
        return ConstantValues.of(tables);
    }

    long count(Graph g, Op op) {
        return g.nodes().stream().filter(n -> n.op() == op).count();
    }

    /** Seeded N(0, 1) inputs (never all zeros) and the tables. */
    Map<String, Tensor> feeds(long seed) {
        Map<String, Tensor> f = new HashMap<>(tables);
        for (Node in : graph.inputs()) {
            String name = in.attrs().getString("name", in.name());
            f.put(name, Philox.normal(Tensor.allocate(in.type()), Philox.key(seed, name), 1f));
        }
        return f;
    }

    /** {@code rewritten} computes what the source graph does, on the float64 reference, within {@code tol}. */
    void assertSameMeaning(Graph rewritten, double tol) {
        Map<String, Tensor> f = feeds(7);
        double[] want = ReferenceInterpreter.run(graph, f).get(graph.outputs().getFirst()).data();
        double[] got = ReferenceInterpreter.run(rewritten, f).get(rewritten.outputs().getFirst()).data();
        double rel = Accuracy.relErr(got, want);
        assertTrue(rel <= tol, "relative error " + rel + " > " + tol);
    }

    static Tensor table(int[] dims, java.util.function.IntToDoubleFunction value) {
        Tensor t = Tensor.allocate(dev.lantern.ir.DType.F32, dev.lantern.ir.Shape.of(dims));
        for (int i = 0; i < t.numel(); i++) {
            t.set(i, (float) value.applyAsDouble(i));
        }
        return t;
    }
}
