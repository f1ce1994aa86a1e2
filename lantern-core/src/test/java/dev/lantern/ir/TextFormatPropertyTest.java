package dev.lantern.ir;

import org.instancio.Instancio;
import org.instancio.junit.InstancioExtension;
import org.instancio.junit.Seed;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.instancio.Select.field;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Property: for random names, strings, numbers, shapes and dtypes, the printed graph parses back
 * to an equal graph and prints to the same text. Instancio draws the cases from a fixed seed.
 */
@ExtendWith(InstancioExtension.class)
class TextFormatPropertyTest {
    record Case(String inputName, String valueName, double number, long integer, boolean flag,
                List<Integer> dims, List<Integer> perm, DType dtype) {}

    @Test
    @Seed(20261130)
    void printParsePrintIsIdentity() {
        List<Case> cases = Instancio.ofList(Case.class).size(400)
                .generate(field(Case::valueName), g -> g.string().alphaNumeric().minLength(1).maxLength(12))
                .generate(field(Case::dims), g -> g.collection().minSize(1).maxSize(4))
                .generate(field(Case::perm), g -> g.collection().size(2))
                .generate(field(Case::inputName), g -> g.string().allowEmpty().maxLength(20).unicode())
                .create();
        for (Case c : cases) {
            int[] dims = c.dims().stream().mapToInt(d -> Math.floorMod(d == null ? 1 : d, 9) + 1).toArray();
            TensorType t = TensorType.of(c.dtype(), dims);
            String v = c.valueName();
            Node in = new Node(v, Op.INPUT, List.of(), Attrs.of("name", c.inputName()), t);
            Node k = new Node(v + ".c", Op.CONSTANT, List.of(), Attrs.of("value", c.number()), TensorType.of(c.dtype()));
            Node add = new Node(v + ".0", Op.ADD, List.of(v, v + ".c"), Attrs.EMPTY, t);
            Node rope = new Node(v + ".1", Op.ROPE, List.of(v + ".0"), Attrs.of("base", Math.abs(c.number()), "offset", c.integer()), t);
            Node soft = new Node(v + ".2", Op.SOFTMAX, List.of(v + ".1"), Attrs.of("causal", c.flag(), "scale", c.number()), t);
            Graph g = new Graph("g_" + v, List.of(in, k, add, rope, soft), List.of(v + ".2"));
            String text = IrPrinter.print(g);
            Graph back = IrParser.parse(text);
            assertEquals(g, back, text);
            assertEquals(text, IrPrinter.print(back));
            assertEquals(GraphHash.of(g), GraphHash.of(back));
        }
    }
}
