package dev.lantern.onnx;

import com.google.protobuf.ByteString;
import onnx.Onnx.AttributeProto;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.NodeProto;
import onnx.Onnx.OperatorSetIdProto;
import onnx.Onnx.TensorProto;
import onnx.Onnx.TensorShapeProto;
import onnx.Onnx.TypeProto;
import onnx.Onnx.ValueInfoProto;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/** Small ONNX models built with the generated protobuf builders, for tests. */
final class Onnx {
    private Onnx() {}

    static NodeProto node(String op, String[] inputs, String[] outputs, AttributeProto... attrs) {
        NodeProto.Builder b = NodeProto.newBuilder().setOpType(op).setName(op.toLowerCase() + "_" + outputs[0]);
        for (String i : inputs) {
            b.addInput(i);
        }
        for (String o : outputs) {
            b.addOutput(o);
        }
        for (AttributeProto a : attrs) {
            b.addAttribute(a);
        }
        return b.build();
    }

    static NodeProto node(String op, String input, String output, AttributeProto... attrs) {
        return node(op, new String[] {input}, new String[] {output}, attrs);
    }

    static NodeProto node2(String op, String a, String b, String output, AttributeProto... attrs) {
        return node(op, new String[] {a, b}, new String[] {output}, attrs);
    }

    static AttributeProto attr(String name, long v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INT).setI(v).build();
    }

    static AttributeProto attr(String name, float v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.FLOAT).setF(v).build();
    }

    static AttributeProto attr(String name, String v) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.STRING).setS(ByteString.copyFromUtf8(v)).build();
    }

    static AttributeProto ints(String name, long... v) {
        AttributeProto.Builder b = AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.INTS);
        for (long x : v) {
            b.addInts(x);
        }
        return b.build();
    }

    static AttributeProto tensorAttr(String name, TensorProto t) {
        return AttributeProto.newBuilder().setName(name).setType(AttributeProto.AttributeType.TENSOR).setT(t).build();
    }

    /** A float tensor with raw little-endian data. */
    static TensorProto floats(String name, long[] dims, float[] v) {
        ByteBuffer b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN);
        for (float x : v) {
            b.putFloat(x);
        }
        TensorProto.Builder t = TensorProto.newBuilder().setName(name).setDataType(TensorProto.DataType.FLOAT_VALUE)
                .setRawData(ByteString.copyFrom(b.array()));
        for (long d : dims) {
            t.addDims(d);
        }
        return t.build();
    }

    static TensorProto int64s(String name, long... v) {
        return TensorProto.newBuilder().setName(name).setDataType(TensorProto.DataType.INT64_VALUE).addDims(v.length)
                .addAllInt64Data(java.util.Arrays.stream(v).boxed().toList()).build();
    }

    static TensorProto scalar(String name, float v) {
        return floats(name, new long[0], new float[] {v});
    }

    static float[] random(Random r, int n, double scale) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) (r.nextGaussian() * scale);
        }
        return v;
    }

    /** A tensor value info; a String dim is symbolic, a Number fixed. */
    static ValueInfoProto value(String name, int elemType, Object... dims) {
        TensorShapeProto.Builder s = TensorShapeProto.newBuilder();
        for (Object d : dims) {
            s.addDim(d instanceof String p ? TensorShapeProto.Dimension.newBuilder().setDimParam(p)
                    : TensorShapeProto.Dimension.newBuilder().setDimValue(((Number) d).longValue()));
        }
        return ValueInfoProto.newBuilder().setName(name)
                .setType(TypeProto.newBuilder().setTensorType(TypeProto.Tensor.newBuilder().setElemType(elemType).setShape(s))).build();
    }

    static ValueInfoProto floatValue(String name, Object... dims) {
        return value(name, TensorProto.DataType.FLOAT_VALUE, dims);
    }

    static ModelProto model(int opset, GraphProto graph) {
        return ModelProto.newBuilder().setIrVersion(8).setProducerName("lantern-test")
                .addOpsetImport(OperatorSetIdProto.newBuilder().setDomain("").setVersion(opset))
                .setGraph(graph).build();
    }
}
