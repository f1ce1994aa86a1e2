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
