package dev.lantern.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * The body of a fused {@code elementwise} op: an expression tree over the op's inputs, written in
 * the attribute {@code expr} as {@code gelu_tanh(add($0, mul($1, 0.5)))}.
 *
 * <pre>
 * expr := '$' int                      input i, broadcast to the output shape
 *       | number                       a scalar constant
 *       | fn '(' expr (',' expr)* ')'  fn: add sub mul div neg exp tanh relu silu
 *                                          gelu_tanh gelu_erf cast_f32 cast_bf16 cast_f16
 * </pre>
 *
 * One primitive elementwise op becomes one {@code fn}; {@code gelu} keeps its form in the name and
 * {@code cast} its target, so the expression needs no attributes of its own.
 */
public sealed interface ElementwiseExpr {
    /** Input {@code index} of the fused op. */
    record In(int index) implements ElementwiseExpr {
        @Override
        public String toString() {
            return "$" + index;
        }
    }

    /** A scalar constant. */
    record Const(double value) implements ElementwiseExpr {
        @Override
        public String toString() {
            return Double.toString(value);
        }
    }

    /** {@code fn(args)}. */
    record Call(String fn, List<ElementwiseExpr> args) implements ElementwiseExpr {
        public Call {
            args = List.copyOf(args);
            Integer want = arity(fn);
            if (want == null) {
                throw new TypeException("unknown elementwise function '" + fn + "'");
            }
            if (args.size() != want) {
                throw new TypeException(fn + " takes " + want + " argument(s), found " + args.size());
            }
        }

        @Override
        public String toString() {
            StringBuilder b = new StringBuilder(fn).append('(');
            for (int i = 0; i < args.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(args.get(i));
            }
            return b.append(')').toString();
        }
    }

    /** The number of arguments of {@code fn}, or {@code null} when it is not a function of this language. */
    static Integer arity(String fn) {
        return switch (fn) {
            case "add", "sub", "mul", "div" -> 2;
            case "neg", "exp", "tanh", "relu", "silu", "gelu_tanh", "gelu_erf", "cast_f32", "cast_bf16", "cast_f16" -> 1;
            default -> null;
        };
    }

    /** The dtype this expression yields when input i has dtype {@code in.get(i)}. */
    default DType dtype(List<DType> in) {
        return switch (this) {
            case In i -> in.get(i.index());
            case Const c -> null;
            case Call c when c.fn().startsWith("cast_") -> DType.parse(c.fn().substring(5));
            case Call c -> {
                DType d = null;
                for (ElementwiseExpr a : c.args()) {
                    DType ad = a.dtype(in);
                    if (ad != null && d != null && ad != d) {
                        throw new TypeException(c.fn() + " mixes " + d + " and " + ad + " in " + this);
                    }
                    d = ad == null ? d : ad;
                }
                yield d;
            }
        };
    }

    /** The largest input index used, or -1. */
    default int maxInput() {
        return switch (this) {
            case In i -> i.index();
            case Const c -> -1;
            case Call c -> c.args().stream().mapToInt(ElementwiseExpr::maxInput).max().orElse(-1);
        };
    }

    /** The number of function calls in the tree: the primitive ops that this expression fuses. */
    default int calls() {
        return switch (this) {
            case In i -> 0;
            case Const c -> 0;
            case Call c -> 1 + c.args().stream().mapToInt(ElementwiseExpr::calls).sum();
        };
    }

    /** This expression with input i replaced by {@code with.get(i)}. */
    default ElementwiseExpr substitute(List<ElementwiseExpr> with) {
        return switch (this) {
            case In i -> with.get(i.index());
            case Const c -> c;
            case Call c -> new Call(c.fn(), c.args().stream().map(a -> a.substitute(with)).toList());
        };
    }

    static ElementwiseExpr parse(String text) {
        Reader r = new Reader(text);
        ElementwiseExpr e = r.expr();
        r.skip();
        if (r.pos != text.length()) {
            throw new TypeException("unexpected '" + text.substring(r.pos) + "' in elementwise expression \"" + text + "\"");
        }
        return e;
    }

    /** A recursive-descent reader of the grammar above. */
    final class Reader {
        private final String s;
        private int pos;

        private Reader(String s) {
            this.s = s;
        }

        void skip() {
            while (pos < s.length() && s.charAt(pos) == ' ') {
                pos++;
            }
        }

        ElementwiseExpr expr() {
            skip();
            if (pos >= s.length()) {
                throw new TypeException("elementwise expression \"" + s + "\" ends early");
            }
            char c = s.charAt(pos);
            if (c == '$') {
                int start = ++pos;
                while (pos < s.length() && Character.isDigit(s.charAt(pos))) {
                    pos++;
                }
                if (start == pos) {
                    throw new TypeException("expected an input number after '$' in \"" + s + "\"");
                }
                return new In(Integer.parseInt(s.substring(start, pos)));
            }
            if (Character.isDigit(c) || c == '-' || c == '.') {
                int start = pos;
                while (pos < s.length() && "0123456789.-+eEInfinityNa".indexOf(s.charAt(pos)) >= 0) {
                    pos++;
                }
                try {
                    return new Const(Double.parseDouble(s.substring(start, pos)));
                } catch (NumberFormatException e) {
                    throw new TypeException("bad number '" + s.substring(start, pos) + "' in \"" + s + "\"");
                }
            }
            int start = pos;
            while (pos < s.length() && (Character.isLetterOrDigit(s.charAt(pos)) || s.charAt(pos) == '_')) {
                pos++;
            }
            String fn = s.substring(start, pos);
            skip();
            if (fn.isEmpty() || pos >= s.length() || s.charAt(pos) != '(') {
                throw new TypeException("expected fn(...) at '" + s.substring(start) + "' in \"" + s + "\"");
            }
            pos++;
            List<ElementwiseExpr> args = new ArrayList<>();
            do {
                args.add(expr());
                skip();
            } while (pos < s.length() && s.charAt(pos) == ',' && ++pos > 0);
            if (pos >= s.length() || s.charAt(pos) != ')') {
                throw new TypeException("expected ')' in \"" + s + "\"");
            }
            pos++;
            return new Call(fn, args);
        }
    }
}
