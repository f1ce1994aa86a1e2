package dev.lantern.passes;

import dev.lantern.ir.DType;
import dev.lantern.ir.LanternException;
import dev.lantern.kernel.Target;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;

/** Every pass by the name that {@code lantern opt --passes} takes. */
public final class Passes {
    private Passes() {}

    private static final Map<String, Supplier<Pass>> REGISTRY = new LinkedHashMap<>();

    static {
        register(Canonicalize::new);
        register(VerifyPass::new);
        register(LayoutNormalize::new);
        register(RecognizeFlatLinear::new);
        register(RecognizeGelu::new);
        register(RecognizeRope::new);
        register(RecognizeMaskedSoftmax::new);
        register(FuseAttention::new);
        register(() -> new Autocast(DType.BF16));
        register(() -> new Autocast(DType.F16));
        register(Fuse::new);
        register(() -> new Fuse(true));
        register(FuseGemmEpilogue::new);
        register(() -> new FuseGemmEpilogue(true));
        register(FuseNorm::new);
        register(FuseElementwise::new);
        register(() -> new Partition(Target.cpu()));
        register(() -> new PlanMemory(Target.cpu()));
    }

    private static void register(Supplier<Pass> s) {
        REGISTRY.put(s.get().name(), s);
    }

    /** The pass called {@code name}; a {@link LanternException} listing the names otherwise. */
    public static Pass byName(String name) {
        Supplier<Pass> s = REGISTRY.get(name);
        if (s == null) {
            throw new LanternException("unknown pass '" + name + "' (passes: " + String.join(", ", REGISTRY.keySet()) + ")");
        }
        return s.get();
    }

    /** Name -> one-line summary, in pipeline order. */
    public static Map<String, String> all() {
        Map<String, String> m = new LinkedHashMap<>();
        REGISTRY.forEach((k, v) -> m.put(k, v.get().summary()));
        return m;
    }
}
