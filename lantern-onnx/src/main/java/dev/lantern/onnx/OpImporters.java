package dev.lantern.onnx;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The table from ONNX op type to importer. Ops of the default domain are keyed by their type ("MatMul"),
 * others by domain and type ("com.microsoft.FastGelu"). One file per family of ops fills it.
 */
final class OpImporters {
    private static final Map<String, OpImporter> TABLE = build();

    private OpImporters() {}

    private static Map<String, OpImporter> build() {
        Map<String, OpImporter> t = new HashMap<>();
        ElementwiseOps.register(t);
        NnOps.register(t);
        MovementOps.register(t);
        FoldOps.register(t);
        MaskOps.register(t); // wraps And, Where and GatherND of the tables above
        return Map.copyOf(t);
    }

    /** The importer for {@code opType} in {@code domain}, or {@code null}. */
    static OpImporter find(String domain, String opType) {
        String key = domain.isEmpty() || domain.equals("ai.onnx") ? opType : domain + "." + opType;
        return TABLE.get(key);
    }

    /** Every key, sorted, for documentation and tests. */
    static Set<String> known() {
        return new TreeSet<>(TABLE.keySet());
    }
}
