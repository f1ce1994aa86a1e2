package dev.lantern.cpu;

import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.tensor.Tensor;
import dev.lantern.trace.RuntimeCounters;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The eager baseline: runs a graph op by op on the CPU kernels, each compute op writing a fresh
 * contiguous output tensor. No fusion, no memory planning: what a naive framework does, and what
 * the compiled path is measured against. Views cost nothing, as in PyTorch eager and in GPU eager
 * ({@code CudaSession}): a reshape of a contiguous value, and a permute that layout-normalize made
 * strided ({@link KernelLowering#isFree}), are views of their input's storage that the readers take
 * through strides; a permute with a contiguous type is a copy, because its reader needs one.
 *
 * <p>Inputs and parameters come keyed by their node's {@code name} attribute; a source whose type
 * is strided reads its tensor's storage at those strides. Outputs come back keyed by output SSA
 * name, in {@code graph.outputs()} order, as dense tensors of their logical shape.
 */
public final class EagerExecutor {
    private final boolean poison;
    private int lastOps;

    public EagerExecutor() {
        this(false);
    }

    /** With {@code poisonOutputs}, every fresh output is filled with NaN before its kernel runs (for tests). */
    public EagerExecutor(boolean poisonOutputs) {
        this.poison = poisonOutputs;
    }

    public Map<String, Tensor> run(Graph g, Map<String, Tensor> inputsAndParams) {
        Map<String, View> env = new HashMap<>();
        Map<String, Tensor> owned = new HashMap<>();
        int ops = 0;
        for (Node n : g.nodes()) {
            List<View> in = new ArrayList<>(n.inputs().size());
            for (String s : n.inputs()) {
                in.add(env.get(s));
            }
            try {
                if (n.op().isSource() && n.op() != Op.CONSTANT) {
                    env.put(n.name(), source(n, inputsAndParams));
                } else if (!n.op().isSource() && KernelLowering.isFree(n, g)) {
                    env.put(n.name(), freeView(n, in.getFirst()));
                } else {
                    Tensor t = Tensor.allocate(n.type().contiguous());
                    if (poison) {
                        t.poison();
                    }
                    View out = View.of(t);
                    if (t.numel() > 0) { // a zero-size value has nothing to compute
                        OpKernels.run(n, in, out);
                    }
                    ops++;
                    owned.put(n.name(), t);
                    env.put(n.name(), out);
                }
            } catch (RuntimeException e) {
                if (e instanceof LanternException) {
                    throw e;
                }
                throw new LanternException("cpu: " + n + ": " + e, e);
            }
        }
        lastOps = ops;
        RuntimeCounters.launched(ops); // each op kernel run is a launch (kernel_launches_total)
        Map<String, Tensor> result = new LinkedHashMap<>();
        for (String o : g.outputs()) {
            Tensor t = owned.get(o);
            if (t == null) {
                // an output that is a graph input or a free view: a dense copy, never a caller's or another output's storage
                View v = env.get(o);
                t = Tensor.allocate(v.dtype(), v.shape());
                Elementwise.copy(v, View.of(t));
            }
            result.put(o, t);
        }
        return result;
    }

    /** How many op kernels the last {@link #run} executed (free views run none). */
    public int lastRunOps() {
        return lastOps;
    }

    /**
     * The view a free node ({@link KernelLowering#isFree}) is of its input: a reshape of a
     * contiguous value, or a permute/transpose read at the strides its type declares.
     */
    public static View freeView(Node n, View base) {
        TensorType t = n.type();
        if (n.op() == Op.RESHAPE) {
            return base.reshape(t.shape());
        }
        int[] perm = n.op() == Op.PERMUTE ? n.attrs().getInts("perm")
                : Shape.transposePerm(t.shape().rank(), n.attrs().getInt("dim0", 0), n.attrs().getInt("dim1", 0));
        return base.permute(perm);
    }

    /** An input or parameter as a view, honouring a strided type. */
    static View source(Node n, Map<String, Tensor> given) {
        String key = n.attrs().getString("name", n.name());
        Tensor t = given.get(key);
        if (t == null) {
            throw new LanternException("cpu: no tensor given for " + n.op().text() + " \"" + key + "\" (" + n + ")");
        }
        TensorType type = n.type();
        Shape shape = type.shape();
        if (type.layout().isContiguous()) {
            if (t.numel() != shape.numel()) {
                throw new LanternException("cpu: tensor \"" + key + "\" is " + t + ", expected " + type);
            }
            return View.of(t).reshape(shape);
        }
        return View.strided(t, shape, type.layout().strides(shape));
    }

    /** The inputs and parameters a graph needs, keyed by name: for callers building the map. */
    public static List<String> sourceNames(Graph g) {
        List<String> names = new ArrayList<>();
        for (Node n : g.nodes()) {
            if (n.op() == Op.INPUT || n.op() == Op.PARAM) {
                names.add(n.attrs().getString("name", n.name()));
            }
        }
        return names;
    }
}
