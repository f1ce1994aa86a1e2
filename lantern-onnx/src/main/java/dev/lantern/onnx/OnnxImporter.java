package dev.lantern.onnx;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.TensorType;
import dev.lantern.ir.Verifier;
import dev.lantern.passes.ConstantValues;
import dev.lantern.passes.Recognize;
import dev.lantern.tensor.Tensor;
import onnx.Onnx.GraphProto;
import onnx.Onnx.ModelProto;
import onnx.Onnx.NodeProto;
import onnx.Onnx.TensorProto;
import onnx.Onnx.TensorShapeProto;
import onnx.Onnx.ValueInfoProto;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * ONNX (opsets 13-21) into Lantern's IR, for one set of concrete input shapes.
 *
 * <ol>
 *   <li>check the opset and the graph; recognise decomposed patterns (GELU, LayerNorm, RMSNorm, SiLU);</li>
 *   <li>bind each input's symbolic dims ("batch", "sequence") from the shapes given, consistently across inputs;</li>
 *   <li>import the nodes in order through the {@link OpImporters} table: shape arithmetic folds on the host,
 *       the rest becomes Lantern ops; initializers become params when a run-time op reads them;</li>
 *   <li>verify the graph; recognise the patterns whose constant tables must be read (rotary embeddings, the
 *       softmax's scale and causal mask: {@link Recognize}).</li>
 * </ol>
 *
 * Every failure is an {@link OnnxImportException} naming the node, its op type and the opset.
 */
public final class OnnxImporter {
    private OnnxImporter() {}

    /** Imports {@code model} with no external data allowed. {@code inputShapes}: concrete shapes by input name. */
    public static ImportedModel importModel(ModelProto model, Map<String, long[]> inputShapes) {
        return importModel(model, inputShapes, null, ImportLimits.DEFAULT);
    }

    /** Reads and imports a model file; external data is resolved inside the file's folder. */
    public static ImportedModel importFile(Path file, Map<String, long[]> inputShapes) {
        ModelProto m = ModelLoader.read(file, ImportLimits.DEFAULT);
        Path folder = file.toAbsolutePath().getParent();
        return importModel(m, inputShapes, folder, ImportLimits.DEFAULT);
    }

    /** {@code folder}: where external data may live, or {@code null} to refuse it. */
    public static ImportedModel importModel(ModelProto model, Map<String, long[]> inputShapes, Path folder, ImportLimits limits) {
        int opset = ModelLoader.opset(model);
        GraphProto g = model.getGraph();
        if (g.getNodeCount() > limits.maxNodes()) {
            throw new OnnxImportException("the graph has " + g.getNodeCount() + " nodes, more than the limit " + limits.maxNodes());
        }
        TensorDecoder decoder = new TensorDecoder(limits, new ExternalData(folder));
        GraphBuilder builder = new GraphBuilder(g.getName().isEmpty() ? "onnx" : sanitize(g.getName()));
        ImportContext c = new ImportContext(builder, limits, opset, decoder);

        Set<String> initializers = new HashSet<>();
        for (TensorProto t : g.getInitializerList()) {
            decoder.dims(t);
            if (!initializers.add(t.getName())) {
                throw new OnnxImportException("initializer '" + t.getName() + "' is defined twice");
            }
            c.define(t.getName(), new Val.Weight(t));
        }
        bindInputs(g, inputShapes, initializers, c);
        List<NodeProto> nodes = Patterns.rewrite(g.getNodeList(), outputNames(g), c);
        for (NodeProto n : nodes) {
            importNode(n, c);
        }
        c.at(null);
        List<Value> outs = new ArrayList<>();
        for (ValueInfoProto o : g.getOutputList()) {
            outs.add(c.run(o.getName()));
        }
        if (outs.isEmpty()) {
            throw new OnnxImportException("the graph has no outputs");
        }
        Graph graph;
        try {
            graph = OutputNames.apply(builder.build(outs.toArray(Value[]::new)),
                    g.getOutputList().stream().map(ValueInfoProto::getName).toList());
        } catch (IllegalArgumentException e) { // two ONNX names that sanitise to one SSA name
            throw new OnnxImportException("graph: " + e.getMessage(), e);
        }
        Verifier.verify(graph);
        // Causal masks and rotary tables are folded to constants by now; the rules that must read their values
        // (not guess from a shape) run here, where the values are known, rather than in the pipeline.
        graph = Recognize.run(graph, ConstantValues.of(c.params()));
        Set<String> used = new HashSet<>();
        graph.params().forEach(p -> used.add(p.attrs().getString("name", p.name())));
        Map<String, Tensor> params = new LinkedHashMap<>(c.params());
        params.keySet().retainAll(used);
        return new ImportedModel(graph, params);
    }

    private static void importNode(NodeProto n, ImportContext c) {
        c.at(n);
        if (n.getOutputCount() == 0 || n.getOutput(0).isEmpty()) {
            throw c.fail("has no output");
        }
        OpImporter imp = OpImporters.find(n.getDomain(), n.getOpType());
        if (imp == null) {
            throw c.fail("unknown or unsupported op type '" + n.getOpType() + "'"
                    + (n.getDomain().isEmpty() ? "" : " of domain '" + n.getDomain() + "'"));
        }
        for (String out : n.getOutputList()) {
            if (c.isDefined(out)) {
                throw c.fail("defines '" + out + "', which is already defined");
            }
        }
        try {
            imp.apply(c);
        } catch (OnnxImportException e) {
            throw e;
        } catch (LanternException | ArithmeticException | IllegalArgumentException e) {
            // a shape the IR refuses, an overflow in shape arithmetic: the model's fault, said at its node
            throw c.fail(e.getMessage());
        }
        for (String out : n.getOutputList()) {
            if (!out.isEmpty() && !c.isDefined(out)) {
                throw c.fail("output '" + out + "' is not produced by Lantern's import of this op");
            }
        }
    }

    /** Defines each graph input as a Lantern input of its concrete shape. */
    private static void bindInputs(GraphProto g, Map<String, long[]> shapes, Set<String> initializers, ImportContext c) {
        Map<String, Long> symbols = new HashMap<>();
        for (ValueInfoProto in : g.getInputList()) {
            if (initializers.contains(in.getName())) {
                continue; // IR version < 4 lists initializers among inputs
            }
            String what = "input '" + in.getName() + "'";
            if (!in.getType().hasTensorType()) {
                throw new OnnxImportException(what + " is not a tensor");
            }
            var tt = in.getType().getTensorType();
            DType d = OnnxTypes.dtype(tt.getElemType());
            if (d == null) {
                throw new OnnxImportException(what + " has element type " + OnnxTypes.name(tt.getElemType()) + ", which Lantern does not support");
            }
            long[] given = shapes.get(in.getName());
            long[] dims = bind(what, tt.hasShape() ? tt.getShape() : null, given, symbols);
            if (c.isDefined(in.getName())) {
                throw new OnnxImportException(what + " is defined twice");
            }
            TensorType type = TensorType.of(d, c.shape(dims));
            c.define(in.getName(), new Val.Run(c.input(in.getName(), type)));
        }
        for (String name : shapes.keySet()) {
            if (g.getInputList().stream().noneMatch(i -> i.getName().equals(name))) {
                throw new OnnxImportException("a shape is given for '" + name + "', which is not an input of the model");
            }
        }
    }

    /** The concrete dims of one input: the given shape checked against the declared one, symbols bound once. */
    private static long[] bind(String what, TensorShapeProto declared, long[] given, Map<String, Long> symbols) {
        if (declared == null) {
            if (given == null) {
                throw new OnnxImportException(what + " has no declared shape: give its shape");
            }
            return given.clone();
        }
        int rank = declared.getDimCount();
        if (given != null && given.length != rank) {
            throw new OnnxImportException(what + " has rank " + rank + "; the shape given, " + Arrays.toString(given) + ", has rank " + given.length);
        }
        long[] out = new long[rank];
        for (int i = 0; i < rank; i++) {
            TensorShapeProto.Dimension dim = declared.getDim(i);
            if (dim.hasDimValue()) {
                out[i] = dim.getDimValue();
                if (given != null && given[i] != out[i]) {
                    throw new OnnxImportException(what + " has dim " + i + " fixed at " + out[i] + "; the shape given has " + given[i]);
                }
            } else if (given == null) {
                throw new OnnxImportException(what + " has symbolic dim " + i + (dim.hasDimParam() ? " ('" + dim.getDimParam() + "')" : "")
                        + ": give its shape");
            } else {
                out[i] = given[i];
                if (dim.hasDimParam() && !dim.getDimParam().isEmpty()) {
                    Long prev = symbols.putIfAbsent(dim.getDimParam(), given[i]);
                    if (prev != null && prev != given[i]) {
                        throw new OnnxImportException(what + ": symbolic dim '" + dim.getDimParam() + "' is bound to " + prev
                                + " by an earlier input and to " + given[i] + " here");
                    }
                }
            }
            if (out[i] <= 0) {
                throw new OnnxImportException(what + " has dim " + i + " = " + out[i] + "; dims must be positive");
            }
        }
        return out;
    }

    private static Set<String> outputNames(GraphProto g) {
        Set<String> s = new HashSet<>();
        g.getOutputList().forEach(o -> s.add(o.getName()));
        return s;
    }

    private static String sanitize(String s) {
        StringBuilder b = new StringBuilder();
        for (char ch : s.toCharArray()) {
            b.append(Character.isLetterOrDigit(ch) || ch == '_' ? ch : '_');
        }
        return b.isEmpty() ? "onnx" : b.toString();
    }
}
