package dev.lantern.cuda.codegen;

import java.util.Locale;

/**
 * Builds CUDA C text with balanced scopes. A scope opens and closes inside one call
 * ({@link #block}), so no helper can leave half a loop for another to close.
 *
 * <pre>
 * e.block("for (int i = 0; i &lt; n; ++i)", () -&gt; e.line("y[i] = x[i];"));
 * </pre>
 */
public final class CudaEmitter {
    private static final String INDENT = "  ";

    private final StringBuilder out = new StringBuilder();
    private int depth;

    /** One statement or declaration, indented to the current depth. */
    public CudaEmitter line(String text) {
        if (text.isEmpty()) {
            out.append('\n');
            return this;
        }
        out.append(INDENT.repeat(depth)).append(text).append('\n');
        return this;
    }

    /** A formatted line (Locale.ROOT, so that floats always print with a dot). */
    public CudaEmitter linef(String format, Object... args) {
        return line(String.format(Locale.ROOT, format, args));
    }

    /** Several lines, each indented. */
    public CudaEmitter lines(String... texts) {
        for (String t : texts) {
            line(t);
        }
        return this;
    }

    public CudaEmitter blank() {
        out.append('\n');
        return this;
    }

    /** {@code head { body }}: the braces always balance. */
    public CudaEmitter block(String head, Runnable body) {
        return block(head, body, "");
    }

    /** {@code head { body } tail}: for {@code do {} while (...);} and struct definitions ({@code };}). */
    public CudaEmitter block(String head, Runnable body, String tail) {
        line(head + " {");
        depth++;
        try {
            body.run();
        } finally {
            depth--;
        }
        line("}" + tail);
        return this;
    }

    /** {@code if (cond) { then } else { otherwise }} as one scope pair. */
    public CudaEmitter ifElse(String cond, Runnable then, Runnable otherwise) {
        line("if (" + cond + ") {");
        depth++;
        then.run();
        depth--;
        line("} else {");
        depth++;
        otherwise.run();
        depth--;
        line("}");
        return this;
    }

    /** A fully unrolled loop over a compile-time range, so register arrays stay in registers. */
    public CudaEmitter unrolled(String var, String bound, Runnable body) {
        line("#pragma unroll");
        return block("for (int " + var + " = 0; " + var + " < " + bound + "; ++" + var + ")", body);
    }

    public CudaEmitter comment(String text) {
        return line("// " + text);
    }

    /** The text so far; the depth must be back at zero. */
    public String text() {
        if (depth != 0) {
            throw new IllegalStateException("unbalanced scopes: depth " + depth);
        }
        return out.toString();
    }
}
