package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Op;
import dev.lantern.ir.Verifier;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ops fusion adds: their spec examples verify in context, and their type rules reject bad inputs. */
class FusionOpsTest {
    static Graph withInputs(String inputs, String line, String result) {
        return IrParser.parse("graph @g {\n" + inputs + "  " + line + "\n  return %" + result + "\n}\n");
    }

    @Test
    void specExamplesVerify() {
        Verifier.verify(withInputs("""
                  %0 = input {name="a"} : f32[2,128,256]
                  %1 = input {name="b"} : f32[256,1024]
                  %2 = input {name="bias"} : f32[1024]
                  %3 = input {name="r"} : f32[2,128,1024]
                """, Op.GEMM.example(), "4"));
        Verifier.verify(withInputs("""
                  %0 = input {name="x"} : f32[2,128,256]
                  %1 = input {name="r"} : f32[2,128,256]
                  %2 = input {name="w"} : f32[256]
                """, Op.FUSED_NORM.example(), "3"));
        Verifier.verify(withInputs("""
                  %0 = input {name="x"} : f32[2,128,1024]
                  %1 = input {name="y"} : f32[1024]
                  %2 = input {name="z"} : f32[2,128,1024]
                """, Op.ELEMENTWISE_FUSED.example(), "3"));
        Verifier.verify(withInputs("""
                  %0 = input {name="q"} : f32[2,4,128,64]
                  %1 = input {name="k"} : f32[2,4,128,64]
                  %2 = input {name="v"} : f32[2,4,128,64]
                """, Op.ATTENTION.example(), "3"));
        Verifier.verify(withInputs("""
                  %0 = input {name="x"} : bf16[2,128,256]
                  %1 = input {name="dy"} : f32[2,128,256]
                """, Op.NORM_WEIGHT_GRAD.example(), "2"));
    }

    @Test
    void badFusedOpsAreRejectedWithTheNode() {
        String ins = """
                  %a = input {name="a"} : f32[8,16]
                  %b = input {name="b"} : f32[16,32]
                  %c = input {name="c"} : f32[16]
                """;
        LanternException e = assertThrows(LanternException.class,
                () -> Verifier.verify(withInputs(ins, "%0 = gemm(%a, %b, %c) {bias=true} : f32[8,32]", "0")));
        assertTrue(e.getMessage().contains("%0 = gemm(%a, %b, %c) {bias=true} : f32[8,32]: gemm bias must have shape [32]"), e.getMessage());
        e = assertThrows(LanternException.class,
                () -> Verifier.verify(withInputs(ins, "%0 = elementwise(%a) {expr=\"frob($0)\"} : f32[8,16]", "0")));
        assertTrue(e.getMessage().contains("unknown elementwise function 'frob'"), e.getMessage());
        e = assertThrows(LanternException.class,
                () -> Verifier.verify(withInputs(ins, "%0 = elementwise(%a) {expr=\"add($0, $1)\"} : f32[8,16]", "0")));
        assertTrue(e.getMessage().contains("reads $1 but the op has 1 inputs"), e.getMessage());
        e = assertThrows(LanternException.class,
                () -> Verifier.verify(withInputs(ins, "%0 = fused_norm(%a, %c) {eps=1.0E-5, kind=\"batch\"} : f32[8,16]", "0")));
        assertTrue(e.getMessage().contains("'kind' of fused_norm must be one of \"rms\", \"layer\""), e.getMessage());
        e = assertThrows(LanternException.class,
                () -> Verifier.verify(withInputs(ins, "%0 = norm_weight_grad(%a, %b) {eps=1.0E-5, kind=\"rms\"} : f32[16]", "0")));
        assertTrue(e.getMessage().contains("norm_weight_grad needs dy of x's shape [8,16]"), e.getMessage());
    }
}
