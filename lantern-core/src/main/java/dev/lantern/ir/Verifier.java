package dev.lantern.ir;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Checks a graph against its ops' specs: definition before use, arity, attributes, the type rule
 * (dtype and shape must equal what the rule infers) and layouts (only views and sources may be
 * strided). The first problem throws a {@link VerifyException} naming the node.
 */
public final class Verifier {
    private Verifier() {}

    public static Graph verify(Graph g) {
        return verify(g, "verify");
    }

    /** Verifies {@code g}; {@code where} (a pass name) prefixes the error. Returns {@code g}. */
    public static Graph verify(Graph g, String where) {
        Set<String> defined = new HashSet<>();
        for (Node n : g.nodes()) {
            for (String in : n.inputs()) {
                if (!defined.contains(in)) {
                    throw new VerifyException(where, n, "input %" + in + " is not defined above this node");
                }
            }
            checkNode(g, n, where);
            defined.add(n.name());
        }
        if (g.outputs().isEmpty()) {
            throw new VerifyException(where, null, "graph @" + g.name() + " returns nothing");
        }
        for (String o : g.outputs()) {
            if (!defined.contains(o)) {
                throw new VerifyException(where, null, "graph returns undefined value %" + o);
            }
        }
        return g;
    }

    private static void checkNode(Graph g, Node n, String where) {
        Op op = n.op();
        int arity = n.inputs().size();
        if (arity < op.minArity() || arity > op.maxArity()) {
            throw new VerifyException(where, n, op.text() + " takes " + op.minArity()
                    + (op.maxArity() == op.minArity() ? "" : "+") + " inputs, found " + arity);
        }
        checkAttrs(n, where);
        TensorType declared = n.type();
        if (!declared.layout().isContiguous() && op.kind() != OpKind.VIEW && op.kind() != OpKind.SOURCE) {
            throw new VerifyException(where, n, op.text() + " writes contiguous outputs, but the type says " + declared);
        }
        if (op.isSource()) {
            if (!declared.layout().isContiguous()) {
                checkSourceStrides(n, where);
            }
            return;
        }
        List<TensorType> ins = g.inputTypes(n);
        TensorType inferred;
        try {
            inferred = op.infer(ins, n.attrs());
        } catch (TypeException e) {
            throw new VerifyException(where, n, e.getMessage());
        }
        if (inferred.dtype() != declared.dtype() || !inferred.shape().equals(declared.shape())) {
            throw new VerifyException(where, n, "expected result type " + inferred + ", found " + declared);
        }
        if (!declared.layout().isContiguous()) {
            checkViewStrides(n, ins.getFirst(), where);
        }
    }

    /**
     * A strided source is memory the caller hands over (a transposed weight, say): its strides must
     * not make two elements share an address. Sorted by stride, each axis of extent &gt; 1 must step
     * past everything the axes below it cover.
     */
    private static void checkSourceStrides(Node n, String where) {
        Shape shape = n.type().shape();
        long[] st = n.type().layout().strides(shape);
        List<Integer> axes = new java.util.ArrayList<>();
        for (int i = 0; i < st.length; i++) {
            if (st[i] < 0) {
                throw new VerifyException(where, n, "negative strides " + n.type().layout() + " are not supported");
            }
            if (shape.dim(i) > 1) {
                axes.add(i);
            }
        }
        axes.sort((a, b) -> Long.compare(st[a], st[b]));
        long covered = 1;
        for (int a : axes) {
            if (st[a] < covered) {
                throw new VerifyException(where, n, "strides " + n.type().layout() + " make elements of " + shape + " overlap");
            }
            covered = Math.multiplyHigh(st[a], shape.dim(a)) != 0 ? Long.MAX_VALUE : st[a] * shape.dim(a);
        }
    }

    /**
     * A strided view must have the strides its producer gives it: a permute or transpose reorders its
     * input's strides; reshape and slice are views only of contiguous memory and write contiguous types.
     * Anything else would let a consumer read memory that is not there.
     */
    private static void checkViewStrides(Node n, TensorType in, String where) {
        int[] perm = switch (n.op()) {
            case PERMUTE -> n.attrs().getInts("perm");
            case TRANSPOSE -> Shape.transposePerm(in.shape().rank(), n.attrs().getInt("dim0", 0), n.attrs().getInt("dim1", 0));
            default -> null;
        };
        if (perm == null) {
            throw new VerifyException(where, n, n.op().text() + " gives a contiguous result; strides " + n.type().layout()
                    + " are not what it makes");
        }
        long[] src = in.layout().strides(in.shape());
        long[] got = n.type().layout().strides(n.type().shape());
        for (int i = 0; i < perm.length; i++) {
            if (n.type().shape().dim(i) > 1 && got[i] != src[perm[i]]) {
                throw new VerifyException(where, n, "strides " + n.type().layout() + " are not those of a " + n.op().text()
                        + " of " + in + " (axis " + i + " has stride " + src[perm[i]] + ")");
            }
        }
    }

    private static void checkAttrs(Node n, String where) {
        Map<String, Object> given = n.attrs().values();
        for (String key : given.keySet()) {
            AttrSpec spec = n.op().attrs().stream().filter(s -> s.name().equals(key)).findFirst().orElse(null);
            if (spec == null) {
                throw new VerifyException(where, n, n.op().text() + " has no attribute '" + key + "'");
            }
            if (!spec.accepts(given.get(key))) {
                throw new VerifyException(where, n, "attribute '" + key + "' must be " + spec.typeName());
            }
        }
        for (AttrSpec s : n.op().attrs()) {
            if (s.required() && !given.containsKey(s.name())) {
                throw new VerifyException(where, n, n.op().text() + " needs attribute '" + s.name() + "'");
            }
        }
    }
}
