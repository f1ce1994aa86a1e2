package dev.lantern.onnx;

import com.google.protobuf.CodedInputStream;
import onnx.Onnx.ModelProto;
import onnx.Onnx.OperatorSetIdProto;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads ONNX model bytes into a ModelProto, and checks what the importer relies on before it looks at a node:
 * a graph, and a default-domain opset in the supported range. Parsing is bounded by the bytes given
 * (protobuf allocates no field larger than the input) and by a nesting limit for subgraphs.
 */
public final class ModelLoader {
    /** The default-domain opsets the importer knows: ops' meanings are read as of these versions. */
    public static final int MIN_OPSET = 13;
    public static final int MAX_OPSET = 21;
    private static final int NESTING_LIMIT = 64;

    private ModelLoader() {}

    public static ModelProto read(Path file, ImportLimits limits) {
        try {
            long size = Files.size(file);
            if (size > limits.maxModelBytes()) {
                throw new OnnxImportException(file + " is " + size + " bytes, more than the limit " + limits.maxModelBytes());
            }
            return parse(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new OnnxImportException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    public static ModelProto parse(byte[] bytes) {
        CodedInputStream in = CodedInputStream.newInstance(bytes);
        in.setRecursionLimit(NESTING_LIMIT);
        try {
            ModelProto m = ModelProto.parseFrom(in);
            in.checkLastTagWas(0);
            return m;
        } catch (IOException e) { // InvalidProtocolBufferException, or the stream's own IOException
            throw new OnnxImportException("malformed ONNX model (" + bytes.length + " bytes): " + e.getMessage(), e);
        }
    }

    /** The model's default-domain opset version, checked to be in [{@value MIN_OPSET}, {@value MAX_OPSET}]. */
    public static int opset(ModelProto m) {
        Integer found = null;
        for (OperatorSetIdProto o : m.getOpsetImportList()) {
            if (o.getDomain().isEmpty() || o.getDomain().equals("ai.onnx")) {
                if (found != null) {
                    throw new OnnxImportException("the model imports the default opset twice");
                }
                if (o.getVersion() < MIN_OPSET || o.getVersion() > MAX_OPSET) {
                    throw new OnnxImportException("the model uses opset " + o.getVersion() + "; Lantern imports opsets "
                            + MIN_OPSET + " to " + MAX_OPSET + " (re-export with opset_version in that range)");
                }
                found = (int) o.getVersion();
            }
        }
        if (found == null) {
            throw new OnnxImportException("the model imports no default-domain opset");
        }
        if (!m.hasGraph()) {
            throw new OnnxImportException("the model has no graph");
        }
        return found;
    }
}
