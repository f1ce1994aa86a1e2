package dev.lantern.cuda.lower;

import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.LaunchConfig;

import java.util.Map;
import java.util.TreeMap;

/**
 * The CUDA device steps and kernel sources of a lowered model as text: what
 * {@code lantern compile --emit steps|cuda} prints and the lowering golden files hold. The format
 * is fixed by those golden files: change it only together with them.
 */
public final class StepText {
    private StepText() {}

    /** Every step, one a line ({@link #describe}). */
    public static String steps(CudaLowering.Lowered lowered) {
        StringBuilder b = new StringBuilder();
        for (Step s : lowered.steps()) {
            b.append(describe(s)).append('\n');
        }
        return b.toString();
    }

    /** Each distinct kernel's source once, by entry name, under a {@code // ===== entry} line. */
    public static String sources(CudaLowering.Lowered lowered) {
        Map<String, String> sources = new TreeMap<>();
        for (Step s : lowered.steps()) {
            if (s instanceof Step.Launch launch) {
                sources.put(launch.source().entry(), launch.source().source());
            }
        }
        StringBuilder cu = new StringBuilder();
        sources.forEach((entry, src) -> cu.append("// ===== ").append(entry).append('\n').append(src).append('\n'));
        return cu.toString();
    }

    /** A step: kernel index, what runs, how it is launched, what it reads and writes. */
    public static String describe(Step s) {
        return switch (s) {
            case Step.Launch l -> {
                CudaKernelSource src = l.source();
                LaunchConfig lc = src.launch();
                StringBuilder b = new StringBuilder();
                b.append("k").append(l.kernel()).append(" launch ").append(src.entry()).append(" [").append(src.variant()).append("]")
                        .append(" grid ").append(lc.gridX()).append('x').append(lc.gridY()).append('x').append(lc.gridZ())
                        .append(" block ").append(lc.blockX()).append('x').append(lc.blockY()).append('x').append(lc.blockZ())
                        .append(" shared ").append(lc.dynamicSharedBytes()).append(" args");
                for (Step.Arg a : l.args()) {
                    b.append(' ').append(switch (a) {
                        case Step.Ptr p -> p.buf() + (p.offset() == 0 ? "" : "+" + p.offset()) + "(" + p.extent() + ")";
                        case Step.I64 v -> v.v() + "L";
                        case Step.I32 v -> Integer.toString(v.v());
                        case Step.F32 v -> v.v() + "f";
                    });
                }
                yield b.toString();
            }
            case Step.Gemm g -> "k" + g.kernel() + " gemm " + g.spec() + " a " + g.a() + (g.aOffset() > 0 ? "+" + g.aOffset() : "") + " b " + g.b() + " c " + g.c()
                    + " d " + g.d() + " bias " + g.bias() + " beta " + g.beta()
                    + (g.aux() == null ? "" : " aux " + g.aux());
        };
    }
}
