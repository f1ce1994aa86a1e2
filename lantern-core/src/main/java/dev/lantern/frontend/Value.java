package dev.lantern.frontend;

import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;

/** A value under construction in a {@link GraphBuilder}: its SSA name and type. */
public record Value(String name, TensorType type) {
    public Shape shape() {
        return type.shape();
    }
}
