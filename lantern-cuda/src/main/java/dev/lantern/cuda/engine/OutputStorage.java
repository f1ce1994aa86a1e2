package dev.lantern.cuda.engine;

import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.kernel.Operand;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Where a value's bytes are on the device: the value itself when a kernel writes it (or it is an
 * input or a parameter); for a reshape of a dense value, which is a view (no kernel writes it and
 * the memory plan places nothing for it), the value it reshapes, followed down a chain of such
 * reshapes. A training step returns such views (a bias gradient reshaped to the bias's shape); the
 * plan keeps the viewed value alive to the end of the forward because the output reads it.
 */
final class OutputStorage {
    private final CompiledModel model;
    private final Set<String> written;

    OutputStorage(CompiledModel model) {
        this.model = model;
        this.written = model.kernels().stream().flatMap(k -> Stream.concat(Stream.of(k.output()), k.sideOutputs().stream()))
                .map(Operand::value).collect(Collectors.toUnmodifiableSet());
    }

    String of(String value) {
        String v = value;
        while (!written.contains(v)) {
            Node n = model.graph().node(v);
            if (n == null || n.op() != Op.RESHAPE || n.inputs().isEmpty()) {
                return v;
            }
            v = n.inputs().getFirst();
        }
        return v;
    }
}
