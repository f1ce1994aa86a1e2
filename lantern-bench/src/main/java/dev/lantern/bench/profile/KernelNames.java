package dev.lantern.bench.profile;

/**
 * Kernel names as the two tools print them. Both demangle by default, so a C++ kernel reads
 * {@code void ns::kernel<128, 64>(float *, int)}; Lantern's (extern "C", {@code lt_...}) and
 * cuBLASLt's ({@code nvjet_...}, {@code sm90_xmma_...}) are bare. Their summaries are joined on
 * {@link #display} (no return type, no parameter list), else on {@link #base} (no template
 * arguments either) when one kernel alone has that base: ncu's {@code --print-kernel-base
 * function} and nsys's {@code :base} drop the templates.
 */
final class KernelNames {
    private KernelNames() {}

    /** The name without a leading {@code void } and without its trailing parameter list. */
    static String display(String name) {
        String s = name.strip();
        if (s.startsWith("void ")) {
            s = s.substring(5).strip();
        }
        if (s.endsWith(")")) {
            int depth = 0;
            for (int i = s.length() - 1; i >= 0; i--) {
                char c = s.charAt(i);
                if (c == ')' || c == '>' || c == ']') {
                    depth++;
                } else if (c == '(' || c == '<' || c == '[') {
                    depth--;
                    if (depth == 0 && c == '(') {
                        if (i > 0) {
                            s = s.substring(0, i).strip();
                        }
                        break;
                    }
                }
            }
        }
        return s;
    }

    /** {@link #display} without template arguments: {@code ns::kernel<128, 64>} -> {@code ns::kernel}. */
    static String base(String name) {
        String s = display(name);
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '<') {
                depth++;
            } else if (c == '>' && depth > 0) {
                depth--;
            } else if (depth == 0) {
                b.append(c);
            }
        }
        return b.toString().strip();
    }
}
