package dev.lantern.weights;

import dev.lantern.ir.LanternException;

/**
 * A path written inside a model (a shard in a safetensors index, an ONNX tensor's external data)
 * that would lead out of the model's folder: absolute, with a {@code ..} step, or through a link
 * that resolves outside. Nothing is opened for it.
 */
public final class UnsafePathException extends LanternException {
    public UnsafePathException(String message) {
        super(message);
    }
}
