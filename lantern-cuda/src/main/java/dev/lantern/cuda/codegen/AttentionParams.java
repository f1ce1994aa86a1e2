package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/** The argument list shared by both attention kernels, and their stride arithmetic. */
final class AttentionParams {
    private AttentionParams() {
    }

    static List<KernelParam> of(String t) {
        List<KernelParam> p = new ArrayList<>();
        p.add(new KernelParam("const " + t + "* __restrict__", "q"));
        p.add(new KernelParam("const " + t + "* __restrict__", "k"));
        p.add(new KernelParam("const " + t + "* __restrict__", "v"));
        p.add(new KernelParam(t + "* __restrict__", "o"));
        p.add(new KernelParam("int", "heads"));
        p.add(new KernelParam("int", "seq_q"));
        p.add(new KernelParam("int", "seq_k"));
        for (String x : List.of("q", "k", "v", "o")) {
            for (String axis : List.of("b", "h", "s")) {
                p.add(new KernelParam("long long", x + "_s" + axis));
            }
        }
        return p;
    }

    static String signature(String name, List<KernelParam> params, String bounds) {
        return "extern \"C\" __global__ void " + bounds + " " + name + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
    }

    /** Pointers to this (batch, head)'s matrices: {@code bh} = batch * heads + head. */
    static void emitBases(CudaEmitter e, String t) {
        e.line("const long long bi = bh / heads, hi = bh % heads;");
        e.line("const " + t + "* __restrict__ qb = q + bi * q_sb + hi * q_sh;");
        e.line("const " + t + "* __restrict__ kb = k + bi * k_sb + hi * k_sh;");
        e.line("const " + t + "* __restrict__ vb = v + bi * v_sb + hi * v_sh;");
        e.line(t + "* __restrict__ ob = o + bi * o_sb + hi * o_sh;");
    }
}
