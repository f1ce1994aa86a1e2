package dev.lantern.onnx;

import dev.lantern.ir.DType;

import java.util.List;
import java.util.stream.Collectors;

/**
 * One input an ONNX model declares, as the file says it: its name, element type and dims, each fixed or
 * symbolic ({@code batch}, {@code sequence}). {@link OnnxModel#compile} binds the symbolic ones.
 *
 * @param name     the input's ONNX name (the key of {@code Session.run}'s inputs)
 * @param dtype    the Lantern dtype, or {@code null} when Lantern has none for the ONNX type
 * @param elemType the ONNX element type by name: {@code float}, {@code int64}, ...
 * @param dims     the declared dims, or {@code null} when the file declares no shape (give one)
 */
public record OnnxInput(String name, DType dtype, String elemType, List<Dim> dims) {
    public OnnxInput {
        dims = dims == null ? null : List.copyOf(dims);
    }

    /**
     * One declared dim: a fixed size ({@code symbol == null}), or a symbol bound at compile time; an unnamed
     * symbolic dim has the symbol {@code ""}.
     */
    public record Dim(long size, String symbol) {
        public boolean isSymbolic() {
            return symbol != null;
        }

        @Override
        public String toString() {
            return symbol == null ? Long.toString(size) : symbol.isEmpty() ? "?" : symbol;
        }
    }

    /** True when every dim is fixed: the input needs no shape. */
    public boolean isStatic() {
        return dims != null && dims.stream().noneMatch(Dim::isSymbolic);
    }

    /** The fixed dims, or {@code null} when a dim is symbolic or the shape is not declared. */
    public long[] staticShape() {
        return isStatic() ? dims.stream().mapToLong(Dim::size).toArray() : null;
    }

    /** {@code input_ids int64[batch,sequence]}. */
    @Override
    public String toString() {
        return name + " " + elemType + (dims == null ? "[unknown shape]"
                : dims.stream().map(Dim::toString).collect(Collectors.joining(",", "[", "]")));
    }
}
