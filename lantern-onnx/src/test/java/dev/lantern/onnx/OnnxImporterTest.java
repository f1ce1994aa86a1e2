package dev.lantern.onnx;

import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.reference.RefMath;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.ModelProto;
import onnx.Onnx.TensorProto;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Imported models run on the CPU backend against float64 computations written here from the ONNX semantics. */
class OnnxImporterTest {
    private static final long SEED = 20261201L;

    @Test
    void mlpWithSoftmaxMatchesFloat64() {
        ModelProto model = TestModels.mlp(SEED);
        int batch = 5;
        ImportedModel m = OnnxImporter.importModel(model, Map.of("x", new long[] {batch, TestModels.MLP_IN}));
        Tensor x = Runs.input(SEED + 1, batch, TestModels.MLP_IN);
        double[] got = Runs.cpu(m, Map.of("x", x));

        double[] w1 = weight(model, "W1");
        double[] b1 = weight(model, "b1");
        double[] w2 = weight(model, "W2");
        double[] b2 = weight(model, "b2");
        int in = TestModels.MLP_IN;
        int hid = TestModels.MLP_HIDDEN;
        int out = TestModels.MLP_OUT;
        double[] want = new double[batch * out];
        for (int b = 0; b < batch; b++) {
            double[] h = new double[hid];
            for (int j = 0; j < hid; j++) {
                double s = b1[j];
                for (int k = 0; k < in; k++) {
                    s += x.get((long) b * in + k) * w1[k * hid + j];
                }
                h[j] = Math.max(0, s);
            }
            double max = Double.NEGATIVE_INFINITY;
            double[] logits = new double[out];
            for (int o = 0; o < out; o++) {
                double s = 0;
                for (int j = 0; j < hid; j++) {
                    s += h[j] * w2[o * hid + j]; // transB: W2 is (out, hidden)
                }
                logits[o] = 0.5 * s + b2[o];
                max = Math.max(max, logits[o]);
            }
            double sum = 0;
            for (int o = 0; o < out; o++) {
                sum += Math.exp(logits[o] - max);
            }
            for (int o = 0; o < out; o++) {
                want[b * out + o] = Math.exp(logits[o] - max) / sum;
            }
        }
        assertTrue(Runs.relErr(got, want) <= 1e-5, "MLP vs float64: " + Runs.relErr(got, want));
        assertTrue(Runs.relErr(Runs.reference(m, Map.of("x", x)), want) <= 1e-6, "reference interpreter agrees");
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void layerNormMatchesFloat64(boolean decomposed) {
        ModelProto model = TestModels.layerNorm(SEED, decomposed);
        int rows = 2 * 7;
        int d = TestModels.WIDTH;
        ImportedModel m = OnnxImporter.importModel(model, Map.of("x", new long[] {2, 7, d}));
        assertEquals(1, count(m, Op.LAYER_NORM), "one layer_norm op:\n" + m.graph());
        Tensor x = Runs.input(SEED + 2, 2, 7, d);
        double[] g = weight(model, "gamma");
        double[] bt = weight(model, "beta");
        double[] want = new double[rows * d];
        for (int r = 0; r < rows; r++) {
            double mean = 0;
            for (int i = 0; i < d; i++) {
                mean += x.get((long) r * d + i);
            }
            mean /= d;
            double var = 0;
            for (int i = 0; i < d; i++) {
                double c = x.get((long) r * d + i) - mean;
                var += c * c;
            }
            var /= d;
            for (int i = 0; i < d; i++) {
                want[r * d + i] = (x.get((long) r * d + i) - mean) / Math.sqrt(var + 1e-5) * g[i] + bt[i];
            }
        }
        double[] got = Runs.cpu(m, Map.of("x", x));
        assertTrue(Runs.relErr(got, want) <= 1e-5, "LayerNorm vs float64: " + Runs.relErr(got, want));
    }

    @Test
    void decomposedGeluBecomesOneGeluOp() {
        ModelProto model = TestModels.decomposedGelu(SEED);
        int d = TestModels.WIDTH;
        ImportedModel m = OnnxImporter.importModel(model, Map.of("x", new long[] {6, d}));
        assertEquals(1, count(m, Op.GELU), "the Erf pattern is one gelu op:\n" + m.graph());
        assertEquals("none", m.graph().nodes().stream().filter(n -> n.op() == Op.GELU).findFirst().orElseThrow().attrs().getString("approximate", ""));
        Tensor x = Runs.input(SEED + 3, 6, d);
        double[] w = weight(model, "W");
        double[] want = new double[6 * d];
        for (int r = 0; r < 6; r++) {
            for (int j = 0; j < d; j++) {
                double h = 0;
                for (int k = 0; k < d; k++) {
                    h += x.get((long) r * d + k) * w[k * d + j];
                }
                want[r * d + j] = h * 0.5 * (1 + RefMath.erf(h / Math.sqrt(2)));
            }
        }
        double[] got = Runs.cpu(m, Map.of("x", x));
        assertTrue(Runs.relErr(got, want) <= 1e-5, "GELU vs float64: " + Runs.relErr(got, want));
    }

    @Test
    void rmsNormAndSiluPatterns() {
        ModelProto model = TestModels.rmsNormSilu(SEED);
        int d = TestModels.WIDTH;
        ImportedModel m = OnnxImporter.importModel(model, Map.of("x", new long[] {3, 4, d}));
        assertEquals(1, count(m, Op.RMS_NORM), m.graph().toString());
        assertEquals(1, count(m, Op.SILU), m.graph().toString());
        Tensor x = Runs.input(SEED + 4, 3, 4, d);
        double[] w = weight(model, "w");
        double[] want = new double[12 * d];
        for (int r = 0; r < 12; r++) {
            double ms = 0;
            for (int i = 0; i < d; i++) {
                ms += Math.pow(x.get((long) r * d + i), 2);
            }
            double inv = 1 / Math.sqrt(ms / d + 1e-6);
            for (int i = 0; i < d; i++) {
                double h = x.get((long) r * d + i) * inv * w[i];
                want[r * d + i] = h / (1 + Math.exp(-h));
            }
        }
        double[] got = Runs.cpu(m, Map.of("x", x));
        assertTrue(Runs.relErr(got, want) <= 1e-5, "RMSNorm+SiLU vs float64: " + Runs.relErr(got, want));
    }

    /** All the shape arithmetic folds: the graph holds no host-side op, and the mask and positions are params. */
    @Test
    void shapeArithmeticFoldsAndRuns() {
        ModelProto model = TestModels.shapeArithmetic(SEED);
        for (int seq : new int[] {5, 9}) {
            ImportedModel m = OnnxImporter.importModel(model, Map.of("x", new long[] {2, seq, TestModels.WIDTH}));
            assertArrayEquals(new int[] {2, seq, TestModels.WIDTH}, m.graph().type(m.graph().outputs().getFirst()).shape().dims());
            Node reshape = m.graph().nodes().stream().filter(n -> n.op() == Op.RESHAPE).findFirst().orElseThrow();
            assertArrayEquals(new int[] {2, seq, 3, 8}, reshape.attrs().getInts("shape"), "the head split's shape folded from Shape/Gather/Concat");
            Map<String, Tensor> in = Map.of("x", Runs.input(SEED + seq, 2, seq, TestModels.WIDTH));
            double[] ref = Runs.reference(m, in);
            double[] got = Runs.cpu(m, in);
            assertTrue(Runs.relErr(got, ref) <= 1e-5, "seq " + seq + ": CPU vs float64 reference " + Runs.relErr(got, ref));
            // the mask folded to -1e4 strictly above the diagonal, 0 elsewhere: recognise-masked-softmax checks
            // every element and takes it, with the scale, into the softmax (no mask param is left)
            Node softmax = m.graph().nodes().stream().filter(n -> n.op() == Op.SOFTMAX).findFirst().orElseThrow();
            assertTrue(softmax.attrs().getBool("causal", false), softmax.toString());
            assertTrue(m.params().keySet().stream().noneMatch(k -> k.contains("mask")), m.params().keySet().toString());
        }
    }

    @Test
    void symbolicDimsBindOnceAcrossInputs() {
        ModelProto m = Onnx.model(13, onnx.Onnx.GraphProto.newBuilder().setName("two")
                .addInput(Onnx.floatValue("x", "batch", 4)).addInput(Onnx.floatValue("z", "batch", 4))
                .addOutput(Onnx.floatValue("y", "batch", 4))
                .addNode(Onnx.node2("Add", "x", "z", "y")).build());
        ImportedModel ok = OnnxImporter.importModel(m, Map.of("x", new long[] {3, 4}, "z", new long[] {3, 4}));
        assertArrayEquals(new int[] {3, 4}, ok.graph().type(ok.graph().outputs().getFirst()).shape().dims());
        String msg = org.junit.jupiter.api.Assertions.assertThrows(OnnxImportException.class,
                () -> OnnxImporter.importModel(m, Map.of("x", new long[] {3, 4}, "z", new long[] {5, 4}))).getMessage();
        assertTrue(msg.contains("'batch'") && msg.contains("3") && msg.contains("5"), msg);
        msg = org.junit.jupiter.api.Assertions.assertThrows(OnnxImportException.class,
                () -> OnnxImporter.importModel(m, Map.of("x", new long[] {3, 4}))).getMessage();
        assertTrue(msg.contains("input 'z'") && msg.contains("give its shape"), msg);
    }

    /** Ops the IR lacks are typed errors naming the op, the node and the opset (the list in docs/onnx.md). */
    @Test
    void opsMissingFromTheIrAreNamed() {
        String[][] cases = {{"Sqrt", "Sqrt"}, {"Erf", "Erf"}, {"Sigmoid", "Sigmoid"}, {"ReduceSum", "ReduceSum"}};
        for (String[] c : cases) {
            ModelProto m = Onnx.model(15, onnx.Onnx.GraphProto.newBuilder().setName("m")
                    .addInput(Onnx.floatValue("x", 2, 4)).addOutput(Onnx.floatValue("y"))
                    .addNode(Onnx.node(c[0], "x", "y")).build());
            String msg = org.junit.jupiter.api.Assertions.assertThrows(OnnxImportException.class,
                    () -> OnnxImporter.importModel(m, Map.of())).getMessage();
            assertTrue(msg.contains("(" + c[1] + ", opset 15)") && msg.contains("not supported by Lantern's IR yet"), msg);
        }
    }

    private static long count(ImportedModel m, Op op) {
        return m.graph().nodes().stream().filter(n -> n.op() == op).count();
    }

    static double[] weight(ModelProto model, String name) {
        TensorProto t = model.getGraph().getInitializerList().stream().filter(i -> i.getName().equals(name)).findFirst().orElseThrow();
        return new TensorDecoder(ImportLimits.DEFAULT, new ExternalData(null)).host(t).values();
    }
}
