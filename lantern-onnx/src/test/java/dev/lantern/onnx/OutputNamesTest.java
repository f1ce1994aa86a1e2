package dev.lantern.onnx;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.Verifier;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Imported graphs return their values under the ONNX output names where those are usable SSA names. */
class OutputNamesTest {
    @Test
    void outputsTakeTheOnnxNamesUnlessInvalidTakenOrASource() {
        GraphBuilder b = new GraphBuilder("g");
        Value x = b.input("x", TensorType.of(DType.F32, Shape.of(2)));
        Value t = b.op(Op.TANH, Attrs.EMPTY, x);
        Value e = b.op(Op.EXP, Attrs.EMPTY, t);
        Value n = b.op(Op.NEG, Attrs.EMPTY, e);
        Value r = b.op(Op.RELU, Attrs.EMPTY, n);
        Graph g = b.build(t, e, n, r, x, t);
        Graph named = OutputNames.apply(g, List.of("hidden.0", "a b", "17", "x", "input_again", "hidden_twice"));
        Verifier.verify(named);
        // tanh renamed (and its reader, exp, reads the new name); "a b" and "17" are not SSA names; "x" is
        // taken; an input keeps its name; a value returned twice keeps its first ONNX name
        assertEquals(List.of("hidden.0", e.name(), n.name(), r.name(), "x", "hidden.0"), named.outputs());
        assertEquals(List.of("hidden.0"), named.node(e.name()).inputs());
    }
}
