package dev.lantern.onnx;

import onnx.Onnx.AttributeProto;
import onnx.Onnx.NodeProto;
import onnx.Onnx.TensorProto;

/** Typed reads of a node's attributes; a wrong attribute type is a typed error, not a silent default. */
final class Attributes {
    private Attributes() {}

    static AttributeProto find(ImportContext c, String name, AttributeProto.AttributeType type) {
        NodeProto n = c.node();
        for (AttributeProto a : n.getAttributeList()) {
            if (a.getName().equals(name)) {
                if (a.hasRefAttrName()) {
                    throw c.fail("attribute '" + name + "' refers to a function attribute, which Lantern does not support");
                }
                // exporters before IR version 3 left type unset; trust the field that is present then
                if (a.getType() != type && a.getType() != AttributeProto.AttributeType.UNDEFINED) {
                    throw c.fail("attribute '" + name + "' should be " + type + ", found " + a.getType());
                }
                return a;
            }
        }
        return null;
    }

    static long getInt(ImportContext c, String name, long dflt) {
        AttributeProto a = find(c, name, AttributeProto.AttributeType.INT);
        return a == null ? dflt : a.getI();
    }

    static boolean has(ImportContext c, String name) {
        return c.node().getAttributeList().stream().anyMatch(a -> a.getName().equals(name));
    }

    static double getFloat(ImportContext c, String name, double dflt) {
        AttributeProto a = find(c, name, AttributeProto.AttributeType.FLOAT);
        return a == null ? dflt : a.getF();
    }

    static String getString(ImportContext c, String name, String dflt) {
        AttributeProto a = find(c, name, AttributeProto.AttributeType.STRING);
        return a == null ? dflt : a.getS().toStringUtf8();
    }

    /** The ints attribute, or {@code null} when absent. */
    static long[] getInts(ImportContext c, String name) {
        AttributeProto a = find(c, name, AttributeProto.AttributeType.INTS);
        if (a == null) {
            return null;
        }
        long[] r = new long[a.getIntsCount()];
        for (int i = 0; i < r.length; i++) {
            r[i] = a.getInts(i);
        }
        return r;
    }

    static TensorProto getTensor(ImportContext c, String name) {
        AttributeProto a = find(c, name, AttributeProto.AttributeType.TENSOR);
        return a == null ? null : a.getT();
    }
}
