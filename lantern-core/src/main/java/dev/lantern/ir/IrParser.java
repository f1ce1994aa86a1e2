package dev.lantern.ir;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

/**
 * Parses the text format that {@link IrPrinter} writes. Grammar:
 *
 * <pre>
 * file   := 'graph' '@' ident '{' node* 'return' value (',' value)* '}'
 * node   := value '=' ident [ '(' [value (',' value)*] ')' ] [ attrs ] ':' type
 * attrs  := '{' [ ident '=' attr (',' ident '=' attr)* ] '}'
 * attr   := number | string | true | false | inf | -inf | nan | '[' [int (',' int)*] ']'
 * type   := dtype '[' [int (',' int)*] ']' [ '@' '[' int (',' int)* ']' ]
 * value  := '%' [A-Za-z0-9_.]+          comments: '#' to the end of the line
 * </pre>
 *
 * Structure, op names, arity, attribute names and types and use-before-definition are checked
 * here with a line:column; shape and dtype rules are the {@link Verifier}'s.
 */
public final class IrParser extends IrLexer {
    private IrParser(String src) {
        super(src);
    }

    public static Graph parse(String text) {
        return new IrParser(text).file();
    }

    private Graph file() {
        skip();
        keyword("graph");
        expect('@');
        String name = ident("a graph name");
        expect('{');
        List<Node> nodes = new ArrayList<>();
        Set<String> defined = new HashSet<>();
        while (true) {
            skip();
            if (peekWord("return")) {
                break;
            }
            if (peek() != '%') {
                throw error("expected a node (%name = ...) or 'return'");
            }
            Node n = node(defined);
            defined.add(n.name());
            nodes.add(n);
        }
        keyword("return");
        List<String> outs = new ArrayList<>();
        do {
            skip();
            int l = line;
            int c = col;
            String v = value();
            if (!defined.contains(v)) {
                throw new ParseException(l, c, "return of undefined value %" + v);
            }
            outs.add(v);
        } while (accept(','));
        expect('}');
        skip();
        if (pos < src.length()) {
            throw error("expected the end of the file after '}'");
        }
        return new Graph(name, nodes, outs);
    }

    private Node node(Set<String> defined) {
        int nl = line;
        int nc = col;
        String name = value();
        if (defined.contains(name)) {
            throw new ParseException(nl, nc, "value %" + name + " is defined twice");
        }
        expect('=');
        skip();
        int ol = line;
        int oc = col;
        String opName = ident("an op name");
        Op op = Op.parse(opName);
        if (op == null) {
            throw new ParseException(ol, oc, "unknown op '" + opName + "'");
        }
        List<String> ins = new ArrayList<>();
        if (accept('(')) {
            skip();
            if (peek() != ')') {
                do {
                    skip();
                    int l = line;
                    int c = col;
                    String v = value();
                    if (!defined.contains(v)) {
                        throw new ParseException(l, c, "use of undefined value %" + v + " (values must be defined above their use)");
                    }
                    ins.add(v);
                } while (accept(','));
            }
            expect(')');
        }
        if (ins.size() < op.minArity() || ins.size() > op.maxArity()) {
            String want = op.minArity() == op.maxArity() ? Integer.toString(op.minArity())
                    : op.maxArity() == Integer.MAX_VALUE ? "at least " + op.minArity() : op.minArity() + " to " + op.maxArity();
            throw new ParseException(ol, oc, op.text() + " takes " + want + " input(s), found " + ins.size());
        }
        Attrs attrs = Attrs.EMPTY;
        skip();
        if (peek() == '{') {
            attrs = attrs(op);
        }
        expect(':');
        TensorType type = type();
        return new Node(name, op, ins, attrs, type);
    }

    private Attrs attrs(Op op) {
        skip();
        int al = line;
        int ac = col;
        expect('{');
        TreeMap<String, Object> m = new TreeMap<>();
        skip();
        if (peek() != '}') {
            do {
                skip();
                int l = line;
                int c = col;
                String key = ident("an attribute name");
                AttrSpec spec = op.attrs().stream().filter(s -> s.name().equals(key)).findFirst().orElse(null);
                if (spec == null) {
                    throw new ParseException(l, c, op.text() + " has no attribute '" + key + "'"
                            + (op.attrs().isEmpty() ? "" : " (it takes " + op.attrs().stream().map(AttrSpec::name).toList() + ")"));
                }
                if (m.containsKey(key)) {
                    throw new ParseException(l, c, "attribute '" + key + "' given twice");
                }
                expect('=');
                skip();
                int vl = line;
                int vc = col;
                Object v = attrValue();
                if (!spec.accepts(v)) {
                    throw new ParseException(vl, vc, "attribute '" + key + "' of " + op.text() + " must be " + spec.typeName());
                }
                if (spec.type().equals("f") && v instanceof Long l2) {
                    v = (double) l2;
                }
                m.put(key, v);
            } while (accept(','));
        }
        expect('}');
        for (AttrSpec s : op.attrs()) {
            if (s.required() && !m.containsKey(s.name())) {
                throw new ParseException(al, ac, op.text() + " needs attribute '" + s.name() + "'");
            }
        }
        return new Attrs(m);
    }

    private Object attrValue() {
        char c = peek();
        if (c == '"') {
            return string();
        }
        if (c == '[') {
            expect('[');
            List<Long> l = new ArrayList<>();
            skip();
            if (peek() != ']') {
                do {
                    skip();
                    l.add(integer());
                } while (accept(','));
            }
            expect(']');
            return l;
        }
        if (Character.isLetter(c)) {
            String w = ident("a value");
            return switch (w) {
                case "true" -> true;
                case "false" -> false;
                case "inf" -> Double.POSITIVE_INFINITY;
                case "nan" -> Double.NaN;
                default -> throw error("expected a number, string, list, true or false, found '" + w + "'");
            };
        }
        if (c == '-' && src.startsWith("-inf", pos)) {
            advance(4);
            return Double.NEGATIVE_INFINITY;
        }
        return number();
    }

    private TensorType type() {
        skip();
        int l = line;
        int c = col;
        String dt = ident("a dtype");
        DType dtype = DType.parse(dt);
        if (dtype == null) {
            throw new ParseException(l, c, "unknown dtype '" + dt + "' (expected f32, f16, bf16, i32, i64 or bool)");
        }
        expect('[');
        List<Long> dims = new ArrayList<>();
        skip();
        if (peek() != ']') {
            do {
                skip();
                long d = integer();
                if (d < 0 || d > Integer.MAX_VALUE) {
                    throw error("dimension " + d + " out of range");
                }
                dims.add(d);
            } while (accept(','));
        }
        expect(']');
        int[] shape = dims.stream().mapToInt(Long::intValue).toArray();
        Layout layout = Layout.CONTIGUOUS;
        if (peek() == '@') {
            expect('@');
            expect('[');
            List<Long> strides = new ArrayList<>();
            do {
                skip();
                strides.add(integer());
            } while (accept(','));
            expect(']');
            if (strides.size() != shape.length) {
                throw error(strides.size() + " strides for a shape of rank " + shape.length);
            }
            layout = Layout.strided(strides.stream().mapToLong(Long::longValue).toArray());
        }
        try {
            return new TensorType(dtype, Shape.of(shape), layout);
        } catch (TypeException e) {
            throw new ParseException(l, c, e.getMessage());
        }
    }
}
