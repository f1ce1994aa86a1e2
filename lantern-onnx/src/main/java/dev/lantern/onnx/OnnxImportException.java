package dev.lantern.onnx;

import dev.lantern.ir.LanternException;

/**
 * An ONNX model that Lantern cannot import: malformed bytes, an invalid graph, a limit exceeded, or an op
 * (or op form) that Lantern does not support. The message is one line and names the node, its op type and
 * the model's opset where there is one.
 */
public final class OnnxImportException extends LanternException {
    public OnnxImportException(String message) {
        super(message);
    }

    public OnnxImportException(String message, Throwable cause) {
        super(message, cause);
    }
}
