package dev.lantern.ir;

import java.util.ArrayList;
import java.util.List;

/**
 * The body of a fused {@code elementwise} op: an expression tree over the op's inputs, written in
 * the attribute {@code expr} as {@code gelu_tanh(add($0, mul($1, 0.5)))}.
 *
 * <pre>
 * expr := '$' int                      input i, broadcast to the output shape
 *       | number | inf | -inf | nan    a scalar constant (the attribute spellings of non-finite values)
 *       | fn '(' expr (',' expr)* ')'  fn: add sub mul div neg exp tanh relu silu
 *                                          gelu_tanh gelu_erf cast_f32 cast_bf16 cast_f16
 *                                          gelu_tanh_grad gelu_erf_grad silu_grad relu_grad ($0 = x, $1 = dy)
 * </pre>
 *
 * Expressions nest at most {@link #MAX_DEPTH} calls deep: the reader refuses deeper text with a
 * {@link TypeException} instead of running out of stack, and fuse-elementwise never builds deeper.
 *
 * One primitive elementwise op becomes one {@code fn}; {@code gelu} keeps its form in the name and
 * {@code cast} its target, so the expression needs no attributes of its own.
 */
public sealed interface ElementwiseExpr {
    /** The deepest nesting of calls an expression may have; the tree walks below recurse this deep. */
    int MAX_DEPTH = 256;

    /** The most inputs an elementwise op may read ({@code $0} to {@code $MAX_INPUTS-1}). */
    int MAX_INPUTS = 1 << 16;

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
            return Attrs.format(value);
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
            case "add", "sub", "mul", "div", "gelu_tanh_grad", "gelu_erf_grad", "silu_grad", "relu_grad" -> 2;
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

    /** The nesting depth: 0 for an input or constant, 1 + the deepest argument for a call. */
    default int depth() {
        return switch (this) {
            case In i -> 0;
            case Const c -> 0;
            case Call c -> 1 + c.args().stream().mapToInt(ElementwiseExpr::depth).max().orElse(0);
        };
    }

    /** The number of function calls in the tree: the primitive ops that this expression fuses. */
    default int calls() {
        return switch (this) {
            case In i -> 0;
            case Const c -> 0;
            case Call c -> {
                int n = 1;
                for (ElementwiseExpr a : c.args()) {
                    n += a.calls();
                }
                yield n;
            }
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

    /**
     * The expression that {@code text} spells. Passes re-read the same {@code expr} attribute many
     * times while fusing (every rule try, every type inference), so recent parses are kept; the
     * trees are immutable and safe to share.
     */
    static ElementwiseExpr parse(String text) {
        ElementwiseExpr e = Cache.get(text);
        if (e == null) {
            e = read(text);
            Cache.put(text, e);
        }
        return e;
    }

    private static ElementwiseExpr read(String text) {
        Reader r = new Reader(text);
        ElementwiseExpr e = r.expr();
        r.skip();
        if (r.pos != text.length()) {
            throw new TypeException("unexpected '" + text.substring(r.pos) + "' in elementwise expression \"" + text + "\"");
        }
        return e;
    }

    /** The last few hundred parses, least recently used out first. */
    final class Cache {
        private static final int SIZE = 512;
        private static final java.util.Map<String, ElementwiseExpr> MAP = new java.util.LinkedHashMap<>(SIZE, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(java.util.Map.Entry<String, ElementwiseExpr> eldest) {
                return size() > SIZE;
            }
        };

        private Cache() {}

        static synchronized ElementwiseExpr get(String text) {
            return MAP.get(text);
        }

        static synchronized void put(String text, ElementwiseExpr e) {
            MAP.put(text, e);
        }
    }

    /** A recursive-descent reader of the grammar above. */
    final class Reader {
        private final String s;
        private int pos;
        private int depth;

        private Reader(String s) {
            this.s = s;
        }

        private boolean continuesName(int at) {
            return at < s.length() && (Character.isLetterOrDigit(s.charAt(at)) || s.charAt(at) == '_');
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
                String digits = s.substring(start, pos);
                if (pos - start > 6 || Integer.parseInt(digits) >= MAX_INPUTS) {
                    throw new TypeException("input $" + digits + " is past the limit of " + MAX_INPUTS + " inputs in \"" + s + "\"");
                }
                return new In(Integer.parseInt(digits));
            }
            if (s.startsWith("-inf", pos) && !continuesName(pos + 4)) {
                pos += 4;
                return new Const(Double.NEGATIVE_INFINITY);
            }
            if ((s.startsWith("inf", pos) || s.startsWith("nan", pos)) && !continuesName(pos + 3)) {
                // no function is called inf or nan, so "nan(" falls through to the call path's error
                int after = pos + 3;
                while (after < s.length() && s.charAt(after) == ' ') {
                    after++;
                }
                if (after >= s.length() || s.charAt(after) != '(') {
                    boolean inf = s.charAt(pos) == 'i';
                    pos += 3;
                    return new Const(inf ? Double.POSITIVE_INFINITY : Double.NaN);
                }
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
            if (++depth > MAX_DEPTH) {
                throw new TypeException("elementwise expression nested deeper than " + MAX_DEPTH + " calls (at offset " + start + ")");
            }
            List<ElementwiseExpr> args = new ArrayList<>();
            do {
                args.add(expr());
                skip();
            } while (pos < s.length() && s.charAt(pos) == ',' && ++pos > 0);
            depth--;
            if (pos >= s.length() || s.charAt(pos) != ')') {
                throw new TypeException("expected ')' in \"" + s + "\"");
            }
            pos++;
            return new Call(fn, args);
        }
    }
}
