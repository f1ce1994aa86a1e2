package dev.lantern.cuda.lower;

import java.util.Arrays;
import java.util.Collections;

/**
 * Grouped-query attention as the front ends write it, for the CUDA tests: q (b, h, s, d), k and v
 * (b, hk, t, d) repeated to h heads (a concat of copies, as the Hugging Face builders do, or a
 * gather of zero ids, as ONNX's Expand imports), optionally roped first, then
 * matmul / softmax / matmul. Fusion makes it one attention over the hk K/V heads.
 */
public final class GqaGraphs {
    private GqaGraphs() {}

    /** One GQA shape; {@code form} "concat" or "gather". */
    public record Case(String dtype, int b, int h, int hk, int s, int t, int d, boolean causal, boolean rope, String form, String mask) {
        public Case(String dtype, int b, int h, int hk, int s, int t, int d, boolean causal, boolean rope, String form) {
            this(dtype, b, h, hk, s, t, d, causal, rope, form, "");
        }

        @Override
        public String toString() {
            return dtype + " b" + b + " h" + h + " hk" + hk + " s" + s + " t" + t + " d" + d + (causal ? " causal" : "")
                    + (rope ? " rope" : "") + " " + form + (mask.isEmpty() ? "" : " mask " + mask);
        }

        /** The IR text; the result is {@code %o}. */
        public String ir() {
            int g = h / hk;
            StringBuilder ir = new StringBuilder("graph @gqa {\n");
            ir.append(line("%q = input {name=\"q\"}", b, h, s, d));
            ir.append(line("%k = input {name=\"k\"}", b, hk, t, d));
            ir.append(line("%v = input {name=\"v\"}", b, hk, t, d));
            if (!mask.isEmpty()) { // "1,1" or "1,s": the mask's (h, s) axes, (b, ·, ·, t)
                String[] hs = mask.split(",");
                ir.append(line("%m = input {name=\"m\"}", b, Integer.parseInt(hs[0]), hs[1].equals("s") ? s : 1, t));
            }
            String q = "%q";
            String k = "%k";
            if (rope) {
                ir.append(line("%rq = rope(%q) {base=10000.0}", b, h, s, d));
                ir.append(line("%rk = rope(%k) {base=10000.0}", b, hk, t, d));
                q = "%rq";
                k = "%rk";
            }
            if (form.equals("gather")) {
                ir.append("  %ids = constant {value=0.0} : i64[" + g + "]\n");
            }
            for (String[] x : new String[][] {{k, "k"}, {"%v", "v"}}) {
                String n = x[1];
                ir.append(line("%" + n + "5 = reshape(" + x[0] + ") {shape=[" + b + "," + hk + ",1," + t + "," + d + "]}", b, hk, 1, t, d));
                String copies = form.equals("gather") ? "gather(%" + n + "5, %ids) {axis=2}"
                        : "concat(" + String.join(", ", Collections.nCopies(g, "%" + n + "5")) + ") {axis=2}";
                ir.append(line("%" + n + "c = " + copies, b, hk, g, t, d));
                ir.append(line("%" + n + "r = reshape(%" + n + "c) {shape=[" + b + "," + h + "," + t + "," + d + "]}", b, h, t, d));
            }
            ir.append(line("%sc = matmul(" + q + ", %kr) {transpose_b=true}", b, h, s, t));
            if (!mask.isEmpty()) {
                ir.append(line("%scm = add(%sc, %m)", b, h, s, t));
            }
            ir.append(line("%p = softmax(" + (mask.isEmpty() ? "%sc" : "%scm") + ") {causal=" + causal + ", scale=" + 1 / Math.sqrt(d) + "}", b, h, s, t));
            ir.append(line("%o = matmul(%p, %vr)", b, h, s, d));
            return ir.append("  return %o\n}\n").toString();
        }

        private String line(String lhs, int... dims) {
            return "  " + lhs + " : " + dtype + Arrays.toString(dims).replace(" ", "") + "\n";
        }
    }
}
