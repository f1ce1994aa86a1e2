package dev.lantern.onnx;

import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.TensorProto;

import java.util.Random;

import static dev.lantern.onnx.Onnx.attr;
import static dev.lantern.onnx.Onnx.floatValue;
import static dev.lantern.onnx.Onnx.floats;
import static dev.lantern.onnx.Onnx.int64s;
import static dev.lantern.onnx.Onnx.ints;
import static dev.lantern.onnx.Onnx.node;
import static dev.lantern.onnx.Onnx.node2;
import static dev.lantern.onnx.Onnx.random;
import static dev.lantern.onnx.Onnx.scalar;

/** The ONNX models the importer's tests run: written as exporters write them, with seeded random weights. */
final class TestModels {
    static final int MLP_IN = 16;
    static final int MLP_HIDDEN = 32;
    static final int MLP_OUT = 10;
    static final int WIDTH = 24;

    private TestModels() {}

    /** y = softmax(Gemm(relu(x·W1 + b1), W2ᵀ, b2)); x (batch, 16), batch symbolic. */
    static ModelProto mlp(long seed) {
        Random r = new Random(seed);
        GraphProto g = GraphProto.newBuilder().setName("mlp")
                .addInput(floatValue("x", "batch", MLP_IN))
                .addOutput(floatValue("y", "batch", MLP_OUT))
                .addInitializer(floats("W1", new long[] {MLP_IN, MLP_HIDDEN}, random(r, MLP_IN * MLP_HIDDEN, 0.3)))
                .addInitializer(floats("b1", new long[] {MLP_HIDDEN}, random(r, MLP_HIDDEN, 0.1)))
                .addInitializer(floats("W2", new long[] {MLP_OUT, MLP_HIDDEN}, random(r, MLP_OUT * MLP_HIDDEN, 0.3)))
                .addInitializer(floats("b2", new long[] {MLP_OUT}, random(r, MLP_OUT, 0.1)))
                .addNode(node2("MatMul", "x", "W1", "h0"))
                .addNode(node2("Add", "h0", "b1", "h1"))
                .addNode(node("Relu", "h1", "h2"))
                .addNode(Onnx.node("Gemm", new String[] {"h2", "W2", "b2"}, new String[] {"logits"}, attr("transB", 1L), attr("alpha", 0.5f)))
                .addNode(node("Softmax", "logits", "y", attr("axis", -1L)))
                .build();
        return Onnx.model(13, g);
    }

    /** LayerNormalization (opset 17) of x (batch, seq, 24), as one op or decomposed as exporters before 17 wrote it. */
    static ModelProto layerNorm(long seed, boolean decomposed) {
        Random r = new Random(seed);
        GraphProto.Builder g = GraphProto.newBuilder().setName("ln")
                .addInput(floatValue("x", "batch", "seq", WIDTH))
                .addOutput(floatValue("y", "batch", "seq", WIDTH))
                .addInitializer(floats("gamma", new long[] {WIDTH}, plusOne(random(r, WIDTH, 0.2))))
                .addInitializer(floats("beta", new long[] {WIDTH}, random(r, WIDTH, 0.2)));
        if (!decomposed) {
            g.addNode(Onnx.node("LayerNormalization", new String[] {"x", "gamma", "beta"}, new String[] {"y"}, attr("epsilon", 1e-5f), attr("axis", -1L)));
            return Onnx.model(17, g.build());
        }
        g.addInitializer(scalar("two", 2f)).addInitializer(scalar("eps", 1e-5f))
                .addNode(node("ReduceMean", "x", "mean", ints("axes", -1), attr("keepdims", 1L)))
                .addNode(node2("Sub", "x", "mean", "d"))
                .addNode(node2("Pow", "d", "two", "d2"))
                .addNode(node("ReduceMean", "d2", "var", ints("axes", -1), attr("keepdims", 1L)))
                .addNode(node2("Add", "var", "eps", "ve"))
                .addNode(node("Sqrt", "ve", "std"))
                .addNode(node2("Div", "d", "std", "n"))
                .addNode(node2("Mul", "n", "gamma", "s"))
                .addNode(node2("Add", "s", "beta", "y"));
        return Onnx.model(13, g.build());
    }

    /** GELU as torch.onnx.export writes nn.GELU() before opset 20: x · (1 + erf(x / √2)) · 0.5, after a MatMul. */
    static ModelProto decomposedGelu(long seed) {
        Random r = new Random(seed);
        GraphProto g = GraphProto.newBuilder().setName("gelu")
                .addInput(floatValue("x", "batch", WIDTH))
                .addOutput(floatValue("y", "batch", WIDTH))
                .addInitializer(floats("W", new long[] {WIDTH, WIDTH}, random(r, WIDTH * WIDTH, 0.4)))
                .addNode(node2("MatMul", "x", "W", "h"))
                .addNode(Onnx.node("Constant", new String[0], new String[] {"sqrt2"}, Onnx.tensorAttr("value", scalar("", (float) Math.sqrt(2)))))
                .addNode(Onnx.node("Constant", new String[0], new String[] {"one"}, attr("value_float", 1f)))
                .addNode(Onnx.node("Constant", new String[0], new String[] {"half"}, attr("value_float", 0.5f)))
                .addNode(node2("Div", "h", "sqrt2", "hs"))
                .addNode(node("Erf", "hs", "e"))
                .addNode(node2("Add", "e", "one", "e1"))
                .addNode(node2("Mul", "h", "e1", "m"))
                .addNode(node2("Mul", "m", "half", "y"))
                .build();
        return Onnx.model(13, g);
    }

    /** A LLaMA-style RMSNorm (opset 18: ReduceMean's axes as an input) and a SiLU: silu(rmsnorm(x) · w). */
    static ModelProto rmsNormSilu(long seed) {
        Random r = new Random(seed);
        GraphProto g = GraphProto.newBuilder().setName("rms")
                .addInput(floatValue("x", "batch", "seq", WIDTH))
                .addOutput(floatValue("y", "batch", "seq", WIDTH))
                .addInitializer(floats("w", new long[] {WIDTH}, plusOne(random(r, WIDTH, 0.2))))
                .addInitializer(scalar("two", 2f)).addInitializer(scalar("eps", 1e-6f))
                .addInitializer(int64s("axes", -1))
                .addNode(node2("Pow", "x", "two", "x2"))
                .addNode(node2("ReduceMean", "x2", "axes", "ms"))
                .addNode(node2("Add", "ms", "eps", "mse"))
                .addNode(node("Sqrt", "mse", "rms"))
                .addNode(node("Reciprocal", "rms", "inv"))
                .addNode(node2("Mul", "x", "inv", "xn"))
                .addNode(node2("Mul", "w", "xn", "h"))
                .addNode(node("Sigmoid", "h", "sg"))
                .addNode(node2("Mul", "h", "sg", "y"))
                .build();
        return Onnx.model(18, g);
    }

    /**
     * Self-attention over x (batch, seq, 24) with 3 heads, written with the shape arithmetic exporters emit:
     * the head split's shape from Shape/Gather/Unsqueeze/Concat, a causal mask from ConstantOfShape, Trilu,
     * Equal and Where, position offsets from Range and Cast. All of it folds at import.
     */
    static ModelProto shapeArithmetic(long seed) {
        Random r = new Random(seed);
        int heads = 3;
        int hd = WIDTH / heads;
        GraphProto g = GraphProto.newBuilder().setName("attn")
                .addInput(floatValue("x", "batch", "seq", WIDTH))
                .addOutput(floatValue("y", "batch", "seq", WIDTH))
                .addInitializer(floats("Wq", new long[] {WIDTH, WIDTH}, random(r, WIDTH * WIDTH, 0.3)))
                .addInitializer(int64s("i0", 0).toBuilder().clearDims().build())
                .addInitializer(int64s("i1", 1).toBuilder().clearDims().build())
                .addInitializer(int64s("ax0", 0))
                .addInitializer(int64s("heads_hd", heads, hd))
                .addInitializer(int64s("minus1", -1))
                .addInitializer(scalar("zero", 0f)).addInitializer(scalar("neg", -10000f)).addInitializer(scalar("pscale", 0.01f))
                .addInitializer(scalar("qscale", (float) (1 / Math.sqrt(hd))))
                .addInitializer(int64s("one_i", 1).toBuilder().clearDims().build())
                .addInitializer(int64s("zero_i", 0).toBuilder().clearDims().build())
                .addNode(node("Shape", "x", "shp"))
                .addNode(node2("Gather", "shp", "i0", "b", attr("axis", 0L)))
                .addNode(node2("Gather", "shp", "i1", "s", attr("axis", 0L)))
                .addNode(node2("Unsqueeze", "b", "ax0", "b1"))
                .addNode(node2("Unsqueeze", "s", "ax0", "s1"))
                // positions: x + 0.01 · cast(range(0, s)) along seq
                .addNode(Onnx.node("Range", new String[] {"zero_i", "s", "one_i"}, new String[] {"pos"}))
                .addNode(node("Cast", "pos", "posf", attr("to", (long) TensorProto.DataType.FLOAT_VALUE)))
                .addNode(node2("Mul", "posf", "pscale", "posd"))
                .addNode(node2("Unsqueeze", "posd", "minus1", "pcol"))
                .addNode(node2("Add", "x", "pcol", "xp"))
                // q = reshape(xp · Wq, [b, s, heads, hd]) transposed to (b, heads, s, hd)
                .addNode(node2("MatMul", "xp", "Wq", "q0"))
                .addNode(Onnx.node("Concat", new String[] {"b1", "s1", "heads_hd"}, new String[] {"qshape"}, attr("axis", 0L)))
                .addNode(node2("Reshape", "q0", "qshape", "q1"))
                .addNode(node("Transpose", "q1", "q", ints("perm", 0, 2, 1, 3)))
                .addNode(node("Transpose", "q", "kt", ints("perm", 0, 1, 3, 2)))
                .addNode(node2("MatMul", "q", "kt", "sc0"))
                .addNode(node2("Mul", "sc0", "qscale", "sc1"))
                // causal mask: where(triu(ones(s, s), 1) == 1, -1e4, 0)
                .addNode(Onnx.node("Concat", new String[] {"s1", "s1"}, new String[] {"ss"}, attr("axis", 0L)))
                .addNode(Onnx.node("ConstantOfShape", new String[] {"ss"}, new String[] {"ones"},
                        Onnx.tensorAttr("value", floats("", new long[] {1}, new float[] {1f}))))
                .addNode(Onnx.node("Trilu", new String[] {"ones", "one_i"}, new String[] {"upper"}, attr("upper", 1L)))
                .addNode(node2("Equal", "upper", "ones", "masked"))
                .addNode(Onnx.node("Where", new String[] {"masked", "neg", "zero"}, new String[] {"mask"}))
                .addNode(node2("Add", "sc1", "mask", "sc"))
                .addNode(node("Softmax", "sc", "p", attr("axis", -1L)))
                .addNode(node2("MatMul", "p", "q", "o0"))
                .addNode(node("Transpose", "o0", "o1", ints("perm", 0, 2, 1, 3)))
                .addNode(Onnx.node("Concat", new String[] {"b1", "s1", "minus1"}, new String[] {"oshape"}, attr("axis", 0L)))
                .addNode(node2("Reshape", "o1", "oshape", "y"))
                .build();
        return Onnx.model(14, g);
    }

    /**
     * The movement and elementwise importers at run time: Split, Slice (to INT64_MAX), Concat, Transpose, Softmax
     * over a middle axis, Unsqueeze/Squeeze, Gather of one index, Flatten, Pow 2, Reciprocal, Neg, Exp, Tanh,
     * Cast, Identity and a Gemm with beta. x (batch, 6, 8) -> y (batch, 5).
     */
    static ModelProto movement(long seed) {
        Random r = new Random(seed);
        GraphProto g = GraphProto.newBuilder().setName("movement")
                .addInput(floatValue("x", "batch", 6, 8))
                .addOutput(floatValue("y", "batch", 5))
                .addInitializer(int64s("split", 3, 5))
                .addInitializer(int64s("st", 1)).addInitializer(int64s("en", Long.MAX_VALUE)).addInitializer(int64s("ax2", 2))
                .addInitializer(int64s("ax1", 1))
                .addInitializer(int64s("idx", 2).toBuilder().clearDims().build())
                .addInitializer(floats("W", new long[] {42, 6}, random(r, 42 * 6, 0.3)))
                .addInitializer(floats("W2", new long[] {18, 5}, random(r, 18 * 5, 0.3)))
                .addInitializer(floats("C", new long[] {5}, random(r, 5, 0.3)))
                .addInitializer(scalar("two", 2f)).addInitializer(scalar("one", 1f))
                .addNode(Onnx.node("Split", new String[] {"x", "split"}, new String[] {"a", "c"}, attr("axis", 2L)))
                .addNode(Onnx.node("Slice", new String[] {"c", "st", "en", "ax2"}, new String[] {"c1"}))
                .addNode(Onnx.node("Concat", new String[] {"a", "c1"}, new String[] {"ac"}, attr("axis", 2L)))
                .addNode(node("Transpose", "ac", "t", ints("perm", 0, 2, 1)))
                .addNode(node("Softmax", "t", "s", attr("axis", 1L)))
                .addNode(node2("Unsqueeze", "s", "ax1", "su"))
                .addNode(node2("Squeeze", "su", "ax1", "ss"))
                .addNode(node2("Gather", "ss", "idx", "gt", attr("axis", 1L)))
                .addNode(node("Neg", "gt", "gn"))
                .addNode(node("Exp", "gn", "e"))
                .addNode(node("Flatten", "ss", "f", attr("axis", 1L)))
                .addNode(node2("MatMul", "f", "W", "m"))
                .addNode(node2("Pow", "m", "two", "p"))
                .addNode(node2("Add", "p", "one", "p1"))
                .addNode(node("Reciprocal", "p1", "rc"))
                .addNode(node("Tanh", "m", "th"))
                .addNode(Onnx.node("Concat", new String[] {"e", "rc", "th"}, new String[] {"cat"}, attr("axis", 1L)))
                .addNode(node("Cast", "cat", "cf", attr("to", (long) TensorProto.DataType.FLOAT_VALUE)))
                .addNode(node("Identity", "cf", "id"))
                .addNode(Onnx.node("Gemm", new String[] {"id", "W2", "C"}, new String[] {"y"}, attr("beta", 0.7f)))
                .build();
        return Onnx.model(13, g);
    }

    /**
     * A causal mask as Hugging Face models write it: where(col <= row, scores, -inf), the condition from Range,
     * Unsqueeze and LessOrEqual on the folded sequence length; then Softmax. x (batch, seq, seq) -> y.
     */
    static ModelProto whereMask(long seed) {
        GraphProto g = GraphProto.newBuilder().setName("where_mask")
                .addInput(floatValue("x", "batch", "seq", "seq"))
                .addOutput(floatValue("y", "batch", "seq", "seq"))
                .addInitializer(int64s("i1", 1).toBuilder().clearDims().build())
                .addInitializer(int64s("zero_i", 0).toBuilder().clearDims().build())
                .addInitializer(int64s("ax0", 0)).addInitializer(int64s("ax1", 1))
                .addInitializer(scalar("ninf", Float.NEGATIVE_INFINITY))
                .addNode(node("Shape", "x", "shp"))
                .addNode(node2("Gather", "shp", "i1", "s"))
                .addNode(Onnx.node("Range", new String[] {"zero_i", "s", "i1"}, new String[] {"r"}))
                .addNode(node2("Unsqueeze", "r", "ax1", "row"))
                .addNode(node2("Unsqueeze", "r", "ax0", "col"))
                .addNode(node2("LessOrEqual", "col", "row", "keep"))
                .addNode(Onnx.node("Where", new String[] {"keep", "x", "ninf"}, new String[] {"masked"}))
                .addNode(node("Softmax", "masked", "y", attr("axis", -1L)))
                .build();
        return Onnx.model(16, g);
    }

    private static float[] plusOne(float[] v) {
        for (int i = 0; i < v.length; i++) {
            v[i] += 1f;
        }
        return v;
    }
}
