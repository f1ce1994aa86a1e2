package dev.lantern.bench;

/**
 * An ONNX model with one MatMul node, Y (M, N) = A (M, K) · B (K, N), all float32, written
 * field by field (onnx.proto3 field numbers in the comments), opset 13, IR version 8.
 */
final class OnnxMatMul {
    private OnnxMatMul() {}

    private static final int FLOAT = 1; // TensorProto.DataType.FLOAT

    static byte[] model(int m, int k, int n) {
        OnnxProtoWriter node = new OnnxProtoWriter()
                .string(1, "A")          // NodeProto.input
                .string(1, "B")
                .string(2, "Y")          // NodeProto.output
                .string(3, "matmul")     // NodeProto.name
                .string(4, "MatMul");    // NodeProto.op_type
        OnnxProtoWriter graph = new OnnxProtoWriter()
                .message(1, node)                          // GraphProto.node
                .string(2, "lantern_matmul")               // GraphProto.name
                .message(11, valueInfo("A", m, k))          // GraphProto.input
                .message(11, valueInfo("B", k, n))
                .message(12, valueInfo("Y", m, n));         // GraphProto.output
        OnnxProtoWriter opset = new OnnxProtoWriter()
                .string(1, "")                             // OperatorSetIdProto.domain (default)
                .varint(2, 13);                            // OperatorSetIdProto.version
        return new OnnxProtoWriter()
                .varint(1, 8)                              // ModelProto.ir_version
                .string(2, "lantern-bench")                // ModelProto.producer_name
                .message(7, graph)                         // ModelProto.graph
                .message(8, opset)                         // ModelProto.opset_import
                .toByteArray();
    }

    /** ValueInfoProto{name, type: TypeProto{tensor_type: {elem_type FLOAT, shape [d0, d1]}}}. */
    private static OnnxProtoWriter valueInfo(String name, int d0, int d1) {
        OnnxProtoWriter shape = new OnnxProtoWriter()
                .message(1, new OnnxProtoWriter().varint(1, d0))   // TensorShapeProto.dim{dim_value}
                .message(1, new OnnxProtoWriter().varint(1, d1));
        OnnxProtoWriter tensor = new OnnxProtoWriter()
                .varint(1, FLOAT)                                  // TypeProto.Tensor.elem_type
                .message(2, shape);                                // TypeProto.Tensor.shape
        OnnxProtoWriter type = new OnnxProtoWriter().message(1, tensor); // TypeProto.tensor_type
        return new OnnxProtoWriter().string(1, name).message(2, type);  // ValueInfoProto.name, .type
    }
}
