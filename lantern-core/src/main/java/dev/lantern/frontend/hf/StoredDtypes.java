package dev.lantern.frontend.hf;

import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Declares each parameter in the dtype its checkpoint stores, read through a cast to f32: the
 * builders write every parameter in f32, and a bf16 checkpoint then reads
 * {@code %w = cast(%w.stored {bf16}) {to="f32"}}. Nothing changes numerically (bf16 and f16 widen to
 * f32 exactly), but the compiler now knows which f32 weights are exactly representable in the low
 * dtype: canonicalize converts a weight read only in f32 once, at bind time, as before, while a
 * table read only by gathers stays in its stored dtype and the gathered rows are widened instead
 * (canonicalize's gather-before-upcast), so a bf16 model's untied embedding costs its bf16 bytes on
 * the device, not twice as many, and AMP's casts back to bf16 cancel out (autocast's round trip).
 */
final class StoredDtypes {
    private StoredDtypes() {
    }

    /** {@code g} with every f32 parameter whose checkpoint tensor is in {@code low} declared in that dtype. */
    static Graph apply(Graph g, Map<String, DType> low) {
        if (low.isEmpty()) {
            return g;
        }
        Set<String> taken = new HashSet<>();
        g.nodes().forEach(n -> taken.add(n.name()));
        List<Node> out = new ArrayList<>(g.nodes().size());
        for (Node n : g.nodes()) {
            DType stored = n.op() == Op.PARAM ? low.get(n.attrs().getString("name", n.name())) : null;
            if (stored == null || n.type().dtype() != DType.F32) {
                out.add(n);
                continue;
            }
            String p = fresh(n.name() + ".stored", taken);
            out.add(new Node(p, Op.PARAM, List.of(), n.attrs(), n.type().withDtype(stored)));
            out.add(new Node(n.name(), Op.CAST, List.of(p), Attrs.of("to", DType.F32.text()), n.type()));
        }
        return g.withNodes(out, g.outputs());
    }

    private static String fresh(String base, Set<String> taken) {
        String s = base;
        for (int i = 1; !taken.add(s); i++) {
            s = base + i;
        }
        return s;
    }
}
