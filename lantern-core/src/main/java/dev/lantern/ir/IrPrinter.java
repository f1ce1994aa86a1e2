package dev.lantern.ir;

/**
 * Prints a graph in the text format. The format is canonical: attributes sorted, numbers in
 * Java's shortest round-trip form, two-space indentation, one node per line, so that
 * {@code print(parse(text)) == text} for every printed text.
 *
 * <pre>
 * graph @block {
 *   %x = input {name="x"} : f32[2,128,256]
 *   %w = param {name="norm.weight"} : f32[256]
 *   %0 = rms_norm(%x, %w) {eps=1.0E-6} : f32[2,128,256]
 *   return %0
 * }
 * </pre>
 */
public final class IrPrinter {
    private IrPrinter() {}

    public static String print(Graph g) {
        StringBuilder b = new StringBuilder();
        b.append("graph @").append(g.name()).append(" {\n");
        for (Node n : g.nodes()) {
            b.append("  ").append(n).append('\n');
        }
        b.append("  return");
        for (int i = 0; i < g.outputs().size(); i++) {
            b.append(i == 0 ? " %" : ", %").append(g.outputs().get(i));
        }
        return b.append("\n}\n").toString();
    }
}
