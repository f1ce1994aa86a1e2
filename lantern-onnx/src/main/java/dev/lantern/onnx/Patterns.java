package dev.lantern.onnx;

import onnx.Onnx.AttributeProto;
import onnx.Onnx.NodeProto;
import onnx.Onnx.TensorProto;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Recognises decomposed patterns that exporters write and replaces each with the one ONNX node that imports as
 * Lantern's op, so that the fusions and fast kernels apply (and so that ops the IR lacks, such as Erf, Sqrt and
 * ReduceMean, are not needed):
 *
 * <pre>
 *   GELU     x · 0.5 · (1 + Erf(x / √2))                                   -> Gelu(x)
 *   SiLU     x · Sigmoid(x)                                                -> dev.lantern.Silu(x)
 *   LayerNorm d = x − ReduceMean(x); d / Sqrt(ReduceMean(d²) + eps) · γ + β -> LayerNormalization(x, γ, β)
 *   RMSNorm  x · 1/Sqrt(ReduceMean(x²) + eps) · w  (Reciprocal, Div(1, ·) or Div(x, ·)) -> SimplifiedLayerNormalization(x, w)
 * </pre>
 *
 * A match is taken only when every intermediate value is read inside the pattern alone; otherwise the nodes
 * stay and import op by op.
 */
final class Patterns {
    private final Map<String, NodeProto> producer = new HashMap<>();
    private final Map<String, List<NodeProto>> consumers = new HashMap<>();
    private final Map<String, Double> scalars = new HashMap<>();
    private final Set<String> graphOutputs;
    private final ImportContext c;

    private Patterns(List<NodeProto> nodes, Set<String> graphOutputs, ImportContext c) {
        this.graphOutputs = graphOutputs;
        this.c = c;
        for (NodeProto n : nodes) {
            for (String o : n.getOutputList()) {
                if (!o.isEmpty()) {
                    producer.putIfAbsent(o, n);
                }
            }
            for (String i : n.getInputList()) {
                if (!i.isEmpty()) {
                    consumers.computeIfAbsent(i, k -> new ArrayList<>()).add(n);
                }
            }
            if (n.getOpType().equals("Constant") && n.getDomain().isEmpty() && n.getOutputCount() == 1) {
                constantScalar(n);
            }
        }
    }

    /** {@code nodes} with each recognised pattern replaced by its single node, in order. */
    static List<NodeProto> rewrite(List<NodeProto> nodes, Set<String> graphOutputs, ImportContext c) {
        Patterns p = new Patterns(nodes, graphOutputs, c);
        Map<NodeProto, NodeProto> replaceAt = new IdentityHashMap<>();
        Set<NodeProto> removed = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        for (NodeProto n : nodes) {
            if (removed.contains(n)) {
                continue;
            }
            Match m = switch (n.getOpType()) {
                case "Erf" -> p.gelu(n);
                case "Sigmoid" -> p.silu(n);
                case "ReduceMean" -> p.layerNorm(n);
                case "Pow", "Mul" -> p.rmsNorm(n);
                default -> null;
            };
            if (m != null && p.closed(m) && m.nodes.stream().noneMatch(removed::contains)) {
                removed.addAll(m.nodes);
                replaceAt.put(m.last(), m.replacement);
            }
        }
        List<NodeProto> out = new ArrayList<>(nodes.size());
        for (NodeProto n : nodes) {
            if (replaceAt.containsKey(n)) {
                out.add(replaceAt.get(n));
            } else if (!removed.contains(n)) {
                out.add(n);
            }
        }
        return out;
    }

    /**
     * Nodes of a pattern, in dataflow order (the graph's order, since a valid graph is sorted), and the node that
     * replaces them: it writes the last node's output, and takes the last node's place.
     */
    private record Match(List<NodeProto> nodes, NodeProto replacement) {
        NodeProto last() {
            return nodes.getLast();
        }
    }

    // --- the patterns

    private Match gelu(NodeProto erf) {
        NodeProto scaled = producer.get(in(erf, 0));
        if (scaled == null) {
            return null;
        }
        String x = operandWith(scaled, "Div", Math.sqrt(2));
        if (x == null) {
            x = operandWith(scaled, "Mul", Math.sqrt(0.5));
        }
        NodeProto plusOne = soleConsumer(out(erf), "Add");
        if (x == null || plusOne == null || !other(plusOne, out(erf)).map(this::isOne).orElse(false)) {
            return null;
        }
        // two Muls take in x and 0.5, in any order: ((1+erf)·x)·0.5, ((1+erf)·0.5)·x, or (1+erf)·(x·0.5)
        List<NodeProto> nodes = new ArrayList<>(List.of(scaled, erf, plusOne));
        String cur = out(plusOne);
        boolean haveX = false;
        boolean haveHalf = false;
        for (int step = 0; step < 2 && !(haveX && haveHalf); step++) {
            NodeProto mul = soleConsumer(cur, "Mul");
            if (mul == null) {
                return null;
            }
            String o = other(mul, cur).orElse(null);
            NodeProto half = o == null ? null : producer.get(o);
            if (x.equals(o) && !haveX) {
                haveX = true;
            } else if (isValue(o, 0.5) && !haveHalf) {
                haveHalf = true;
            } else if (half != null && !haveX && !haveHalf && x.equals(operandWith(half, "Mul", 0.5))) {
                haveX = haveHalf = true;
                nodes.add(0, half);
            } else {
                return null;
            }
            nodes.add(mul);
            cur = out(mul);
        }
        if (!(haveX && haveHalf)) {
            return null;
        }
        return new Match(nodes, node("Gelu", "", List.of(x), cur, erf.getName()));
    }

    private Match silu(NodeProto sigmoid) {
        String x = in(sigmoid, 0);
        NodeProto mul = soleConsumer(out(sigmoid), "Mul");
        if (mul == null || !x.equals(other(mul, out(sigmoid)).orElse(null))) {
            return null;
        }
        return new Match(List.of(sigmoid, mul), node("Silu", "dev.lantern", List.of(x), out(mul), sigmoid.getName()));
    }

    private Match layerNorm(NodeProto mean) {
        String x = in(mean, 0);
        Long axis = lastAxis(mean);
        NodeProto sub = soleConsumer(out(mean), "Sub");
        if (axis == null || sub == null || !in(sub, 0).equals(x) || !in(sub, 1).equals(out(mean))) {
            return null;
        }
        String d = out(sub);
        List<NodeProto> users = consumers.getOrDefault(d, List.of());
        NodeProto sq = users.stream().filter(u -> isSquare(u, d)).findFirst().orElse(null);
        NodeProto div = users.stream().filter(u -> u.getOpType().equals("Div") && in(u, 0).equals(d)).findFirst().orElse(null);
        if (users.size() != 2 || sq == null || div == null) {
            return null;
        }
        Variance v = variance(sq);
        if (v == null || !in(div, 1).equals(out(v.sqrt))) {
            return null;
        }
        List<NodeProto> nodes = new ArrayList<>(List.of(mean, sub, sq, v.mean, v.add, v.sqrt, div));
        return affine(nodes, x, out(div), v.eps, axis, "LayerNormalization");
    }

    private Match rmsNorm(NodeProto sq) {
        if (sq.getInputCount() == 0 || !isSquare(sq, in(sq, 0))) {
            return null;
        }
        String x = in(sq, 0);
        Variance v = variance(sq);
        if (v == null) {
            return null;
        }
        List<NodeProto> nodes = new ArrayList<>(List.of(sq, v.mean, v.add, v.sqrt));
        String s = out(v.sqrt);
        NodeProto next = soleConsumer(s, null);
        String normed;
        if (next != null && next.getOpType().equals("Div") && in(next, 0).equals(x) && in(next, 1).equals(s)) {
            nodes.add(next);
            normed = out(next);
        } else if (next != null && (next.getOpType().equals("Reciprocal")
                || next.getOpType().equals("Div") && in(next, 1).equals(s) && isOne(in(next, 0)))) {
            NodeProto mul = soleConsumer(out(next), "Mul");
            if (mul == null || !x.equals(other(mul, out(next)).orElse(null))) {
                return null;
            }
            nodes.add(next);
            nodes.add(mul);
            normed = out(mul);
        } else {
            return null;
        }
        return affine(nodes, x, normed, v.eps, lastAxis(v.mean), "SimplifiedLayerNormalization");
    }

    /** mean(sq) + eps, then Sqrt: the variance part that LayerNorm and RMSNorm share. */
    private record Variance(NodeProto mean, NodeProto add, NodeProto sqrt, double eps) { }

    private Variance variance(NodeProto sq) {
        NodeProto mean = soleConsumer(out(sq), "ReduceMean");
        NodeProto add = mean == null || lastAxis(mean) == null ? null : soleConsumer(out(mean), "Add");
        Double eps = add == null ? null : other(add, out(mean)).map(this::scalar).orElse(null);
        NodeProto sqrt = eps == null ? null : soleConsumer(out(add), "Sqrt");
        return sqrt == null ? null : new Variance(mean, add, sqrt, eps);
    }

    /** The normalised value times a constant weight, plus an optional constant bias, as one norm node. */
    private Match affine(List<NodeProto> nodes, String x, String normed, double eps, Long axis, String op) {
        NodeProto scale = soleConsumer(normed, "Mul");
        String w = scale == null ? null : other(scale, normed).orElse(null);
        if (w == null || !isConstant(w)) {
            return null;
        }
        nodes.add(scale);
        List<String> inputs = new ArrayList<>(List.of(x, w));
        String out = out(scale);
        NodeProto bias = op.equals("LayerNormalization") ? soleConsumer(out, "Add") : null;
        String b = bias == null ? null : other(bias, out).orElse(null);
        if (b != null && isConstant(b)) {
            nodes.add(bias);
            inputs.add(b);
            out = out(bias);
        }
        NodeProto n = node(op, "", inputs, out, nodes.getFirst().getName()).toBuilder()
                .addAttribute(AttributeProto.newBuilder().setName("epsilon").setType(AttributeProto.AttributeType.FLOAT).setF((float) eps))
                .addAttribute(AttributeProto.newBuilder().setName("axis").setType(AttributeProto.AttributeType.INT).setI(axis))
                .build();
        return new Match(nodes, n);
    }

    // --- helpers

    /** Whether the pattern's intermediate values are read by its own nodes only and are not graph outputs. */
    private boolean closed(Match m) {
        Set<NodeProto> inside = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        inside.addAll(m.nodes);
        String out = out(m.replacement);
        for (NodeProto n : m.nodes) {
            for (String o : n.getOutputList()) {
                if (o.equals(out)) {
                    continue;
                }
                if (graphOutputs.contains(o) || consumers.getOrDefault(o, List.of()).stream().anyMatch(u -> !inside.contains(u))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The only reader of {@code value}, when it has one and (if {@code opType} is given) it is that op. */
    private NodeProto soleConsumer(String value, String opType) {
        List<NodeProto> users = consumers.getOrDefault(value, List.of());
        if (value.isEmpty() || users.size() != 1 || graphOutputs.contains(value)) {
            return null;
        }
        NodeProto u = users.getFirst();
        return opType == null || (u.getOpType().equals(opType) && u.getDomain().isEmpty()) ? u : null;
    }

    /** The other input of a binary node that reads {@code value}. */
    private static java.util.Optional<String> other(NodeProto n, String value) {
        if (n.getInputCount() != 2) {
            return java.util.Optional.empty();
        }
        if (in(n, 0).equals(value)) {
            return java.util.Optional.of(in(n, 1));
        }
        return in(n, 1).equals(value) ? java.util.Optional.of(in(n, 0)) : java.util.Optional.empty();
    }

    /** For {@code op(a, k)} with k ≈ {@code constant} (either order for Mul), a; else null. */
    private String operandWith(NodeProto n, String op, double constant) {
        if (!n.getOpType().equals(op) || n.getInputCount() != 2) {
            return null;
        }
        if (isValue(in(n, 1), constant)) {
            return in(n, 0);
        }
        return op.equals("Mul") && isValue(in(n, 0), constant) ? in(n, 1) : null;
    }

    private boolean isSquare(NodeProto n, String v) {
        return n.getInputCount() == 2 && in(n, 0).equals(v)
                && (n.getOpType().equals("Pow") && isValue(in(n, 1), 2) || n.getOpType().equals("Mul") && in(n, 1).equals(v));
    }

    private boolean isOne(String v) {
        return isValue(v, 1);
    }

    /** The value of a one-element constant (Constant node or initializer), or null. */
    private Double scalar(String v) {
        return scalars.computeIfAbsent(v, this::initializerScalar);
    }

    private boolean isValue(String v, double want) {
        Double got = v == null ? null : scalar(v);
        return got != null && Math.abs(got - want) <= 1e-4 * Math.abs(want);
    }

    private boolean isConstant(String v) {
        return producer.get(v) == null ? c.isDefined(v) && c.val(v) instanceof Val.Weight
                : producer.get(v).getOpType().equals("Constant");
    }

    /** The axis a ReduceMean with keepdims reduces, when it reduces one axis; else null. */
    private Long lastAxis(NodeProto mean) {
        long keep = 1;
        long[] axes = null;
        for (AttributeProto a : mean.getAttributeList()) {
            if (a.getName().equals("keepdims")) {
                keep = a.getI();
            } else if (a.getName().equals("axes")) {
                axes = a.getIntsList().stream().mapToLong(Long::longValue).toArray();
            }
        }
        if (mean.getInputCount() > 1 && producer.get(in(mean, 1)) == null && c.isDefined(in(mean, 1))
                && c.val(in(mean, 1)) instanceof Val.Weight w && w.proto().getDimsCount() <= 1) {
            axes = c.hostOf(w.proto()).longs();
        } else if (mean.getInputCount() > 1 && producer.get(in(mean, 1)) != null) {
            axes = constantInts(producer.get(in(mean, 1)));
        }
        return keep == 1 && axes != null && axes.length == 1 ? axes[0] : null;
    }

    private static long[] constantInts(NodeProto n) {
        for (AttributeProto a : n.getAttributeList()) {
            if (n.getOpType().equals("Constant") && a.getName().equals("value_ints")) {
                return a.getIntsList().stream().mapToLong(Long::longValue).toArray();
            }
            if (n.getOpType().equals("Constant") && a.getName().equals("value") && a.getT().getInt64DataCount() == 1) {
                return new long[] {a.getT().getInt64Data(0)};
            }
        }
        return null;
    }

    private void constantScalar(NodeProto n) {
        for (AttributeProto a : n.getAttributeList()) {
            Double v = switch (a.getName()) {
                case "value_float" -> (double) a.getF();
                case "value_int" -> (double) a.getI();
                case "value" -> scalarOf(a.getT());
                default -> null;
            };
            if (v != null) {
                scalars.put(out(n), v);
            }
        }
    }

    private Double initializerScalar(String name) {
        if (producer.containsKey(name) || !c.isDefined(name) || !(c.val(name) instanceof Val.Weight w)) {
            return null;
        }
        return scalarOf(w.proto());
    }

    private Double scalarOf(TensorProto t) {
        long n = 1;
        for (long d : t.getDimsList()) {
            n *= d;
        }
        if (n != 1 || t.getDimsList().stream().anyMatch(d -> d != 1)) {
            return null;
        }
        try {
            return c.hostOf(t).values()[0];
        } catch (OnnxImportException e) {
            return null; // a malformed constant is reported where the node that reads it is imported
        }
    }

    /** Output 0 of {@code n}, or "" (never a real value name). */
    private static String out(NodeProto n) {
        return n.getOutputCount() > 0 ? n.getOutput(0) : "";
    }

    /** Input {@code i} of {@code n}, or "" when absent. */
    private static String in(NodeProto n, int i) {
        return i < n.getInputCount() ? n.getInput(i) : "";
    }

    private static NodeProto node(String op, String domain, List<String> inputs, String output, String name) {
        return NodeProto.newBuilder().setOpType(op).setDomain(domain).addAllInput(inputs).addOutput(output)
                .setName(name.isEmpty() ? op.toLowerCase(java.util.Locale.ROOT) : name).build();
    }
}
