package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

/** GPT-2's written-out tanh GELU becomes the gelu op, in its groupings; a wrong constant is left alone. */
class RecognizeGeluTest {
    /** GPT-2's export, with the constants as f32[] params (as the ONNX importer makes initializers). */
    static RecognizeCase gpt2(String product, double cubic, String returned) {
        return RecognizeCase.of("""
                  %x = input {name="x"} : f32[2,8,32]
                  %h = param {name="half"} : f32[]
                  %c3 = param {name="cubic"} : f32[]
                  %k = param {name="k"} : f32[]
                  %one = param {name="one"} : f32[]
                  %0 = mul(%x, %x) : f32[2,8,32]
                  %1 = mul(%0, %x) : f32[2,8,32]
                  %2 = mul(%1, %c3) : f32[2,8,32]
                  %3 = add(%x, %2) : f32[2,8,32]
                  %4 = mul(%k, %3) : f32[2,8,32]
                  %5 = tanh(%4) : f32[2,8,32]
                  %6 = add(%5, %one) : f32[2,8,32]
                """ + product + "  return " + returned + "\n", Map.of("half", scalar(0.5), "cubic", scalar(cubic),
                "k", scalar(Math.sqrt(2 / Math.PI)), "one", scalar(1)));
    }

    static Tensor scalar(double v) {
        return RecognizeCase.table(new int[0], i -> v);
    }

    @Test
    void everyGroupingOfTheProductBecomesGelu() {
        List<String> products = List.of(
                "  %7 = mul(%x, %h) : f32[2,8,32]\n  %y = mul(%7, %6) : f32[2,8,32]\n",   // GPT-2: (x·0.5)·(1+t)
                "  %7 = mul(%6, %x) : f32[2,8,32]\n  %y = mul(%h, %7) : f32[2,8,32]\n",   // 0.5·((1+t)·x)
                "  %7 = mul(%h, %6) : f32[2,8,32]\n  %y = mul(%x, %7) : f32[2,8,32]\n");  // x·(0.5·(1+t))
        for (String p : products) {
            RecognizeCase c = gpt2(p, 0.044715, "%y");
            Graph g = new RecognizeGelu(c.values()).run(c.graph());
            Node y = g.node("y");
            assertEquals(Op.GELU, y.op(), g.toString());
            assertEquals("tanh", y.attrs().getString("approximate", ""));
            assertEquals(List.of("x"), y.inputs());
            assertEquals(2, g.nodes().size(), g.toString());
            c.assertSameMeaning(g, 1e-7); // the constants are f32 roundings of the exact ones
        }
    }

    @Test
    void aWrongConstantOrAnOutsideReaderIsLeftAlone() {
        String gpt2Product = "  %7 = mul(%x, %h) : f32[2,8,32]\n  %y = mul(%7, %6) : f32[2,8,32]\n";
        RecognizeCase wrong = gpt2(gpt2Product, 0.0447, "%y");
        assertSame(wrong.graph(), new RecognizeGelu(wrong.values()).run(wrong.graph()));
        // the tanh is also returned: the pattern's inside is read outside it
        RecognizeCase shared = gpt2(gpt2Product, 0.044715, "%y, %5");
        assertSame(shared.graph(), new RecognizeGelu(shared.values()).run(shared.graph()));
    }
}
