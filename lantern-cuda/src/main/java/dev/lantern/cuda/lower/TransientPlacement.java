package dev.lantern.cuda.lower;

import dev.lantern.plan.Buffer;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.plan.MemoryPlanner;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Places the lowering's transient buffers (materialised views, roped q/k, residual pair sums) in
 * one transient area with the core's {@link MemoryPlanner}: each buffer lives from the first to
 * the last step that names it, so buffers of different kernels, and of different moments of one
 * kernel, share bytes. No allocator of its own: the same planner places the arena.
 */
final class TransientPlacement {
    private TransientPlacement() {}

    /** The steps with every transient buffer at its planned offset, and the plan. */
    record Placed(List<Step> steps, MemoryPlan plan) {}

    static Placed place(List<Step> steps) {
        Map<String, int[]> life = new LinkedHashMap<>();
        Map<String, Long> bytes = new LinkedHashMap<>();
        for (int i = 0; i < steps.size(); i++) {
            for (Buf b : bufs(steps.get(i))) {
                if (b.kind() == Buf.Kind.TRANSIENT) {
                    int at = i;
                    life.computeIfAbsent(b.name(), k -> new int[] {at, at})[1] = at;
                    bytes.merge(b.name(), b.bytes(), Math::max);
                }
            }
        }
        List<Buffer> buffers = new ArrayList<>();
        life.forEach((name, l) -> buffers.add(new Buffer(name, MemoryPlanner.aligned(bytes.get(name)), l[0], l[1])));
        MemoryPlan plan = MemoryPlanner.pack(buffers, steps.size());
        Map<String, Long> offset = new LinkedHashMap<>();
        plan.placements().forEach(p -> offset.put(p.buffer().value(), p.offset()));
        List<Step> out = new ArrayList<>(steps.size());
        for (Step s : steps) {
            out.add(switch (s) {
                case Step.Launch l -> {
                    List<Step.Arg> args = new ArrayList<>();
                    for (Step.Arg a : l.args()) {
                        args.add(a instanceof Step.Ptr p ? new Step.Ptr(placed(p.buf(), offset), p.extent(), p.offset()) : a);
                    }
                    yield new Step.Launch(l.kernel(), l.spec(), l.source(), args);
                }
                case Step.Gemm g -> new Step.Gemm(g.kernel(), g.spec(), placed(g.a(), offset), placed(g.b(), offset),
                        placed(g.c(), offset), placed(g.d(), offset), placed(g.bias(), offset), g.beta(), g.aOffset(), placed(g.aux(), offset));
            });
        }
        return new Placed(out, plan);
    }

    private static Buf placed(Buf b, Map<String, Long> offset) {
        return b == null || b.kind() != Buf.Kind.TRANSIENT ? b : new Buf(b.kind(), b.name(), b.bytes(), offset.get(b.name()));
    }

    private static List<Buf> bufs(Step s) {
        List<Buf> r = new ArrayList<>();
        switch (s) {
            case Step.Launch l -> l.args().forEach(a -> {
                if (a instanceof Step.Ptr p) {
                    r.add(p.buf());
                }
            });
            case Step.Gemm g -> {
                for (Buf b : new Buf[] {g.a(), g.b(), g.c(), g.d(), g.bias(), g.aux()}) {
                    if (b != null) {
                        r.add(b);
                    }
                }
            }
        }
        return r;
    }
}
