package dev.lantern.ir;

import java.util.List;

/**
 * One SSA value: {@code %name = op(%in0, %in1) {attrs} : type}. Immutable; rewrites build new nodes.
 * Sources print without parentheses: {@code %x = input {name="x"} : f32[2,128,256]}.
 */
public record Node(String name, Op op, List<String> inputs, Attrs attrs, TensorType type) {
    public Node {
        inputs = List.copyOf(inputs);
    }

    public Node withInputs(List<String> in) {
        return new Node(name, op, in, attrs, type);
    }

    public Node withName(String n) {
        return new Node(n, op, inputs, attrs, type);
    }

    public Node withType(TensorType t) {
        return new Node(name, op, inputs, attrs, t);
    }

    public Node withAttrs(Attrs a) {
        return new Node(name, op, inputs, a, type);
    }

    public String input(int i) {
        return inputs.get(i);
    }

    /** The node in the text syntax, without indentation or newline. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        b.append('%').append(name).append(" = ").append(op.text());
        if (!op.isSource() || !inputs.isEmpty()) {
            b.append('(');
            for (int i = 0; i < inputs.size(); i++) {
                if (i > 0) {
                    b.append(", ");
                }
                b.append('%').append(inputs.get(i));
            }
            b.append(')');
        }
        if (!attrs.isEmpty()) {
            b.append(' ').append(attrs);
        }
        return b.append(" : ").append(type).toString();
    }
}
