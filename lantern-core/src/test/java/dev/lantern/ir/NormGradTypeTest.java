package dev.lantern.ir;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A norm gradient's residual form: a 4th input r of x's type exactly when {@code residual=true}. */
class NormGradTypeTest {
    private static final TensorType X = TensorType.of(DType.BF16, 3, 37); // (rows, D), D prime
    private static final TensorType W = TensorType.of(DType.F32, 37);

    @Test
    void theResidualFormHasXsType() {
        for (Op op : List.of(Op.RMS_NORM_GRAD, Op.LAYER_NORM_GRAD)) {
            assertEquals(X, op.infer(List.of(X, W, X), Attrs.EMPTY));
            assertEquals(X, op.infer(List.of(X, W, X, X), Attrs.of("residual", true)));
        }
    }

    @Test
    void theAttributeAndTheFourthInputComeTogether() {
        for (Op op : List.of(Op.RMS_NORM_GRAD, Op.LAYER_NORM_GRAD)) {
            TypeException a = assertThrows(TypeException.class, () -> op.infer(List.of(X, W, X, X), Attrs.EMPTY));
            assertTrue(a.getMessage().contains("{residual=false} takes 3 inputs"), a.getMessage());
            TypeException b = assertThrows(TypeException.class, () -> op.infer(List.of(X, W, X), Attrs.of("residual", true)));
            assertTrue(b.getMessage().contains("{residual=true} takes 4 inputs"), b.getMessage());
        }
    }

    @Test
    void aResidualOfAnotherTypeIsATypedError() {
        for (TensorType r : List.of(X.withDtype(DType.F32), TensorType.of(DType.BF16, 37), TensorType.of(DType.BF16, 3, 1))) {
            TypeException e = assertThrows(TypeException.class, () -> Op.RMS_NORM_GRAD.infer(List.of(X, W, X, r), Attrs.of("residual", true)));
            assertTrue(e.getMessage().contains("residual r must have x's type"), e.getMessage());
        }
    }
}
