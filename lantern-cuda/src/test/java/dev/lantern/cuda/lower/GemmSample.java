package dev.lantern.cuda.lower;

import dev.lantern.engine.DemoMetrics;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * A float64 host check of a GPU run's own GEMMs, for blocks too big for the float64 reference
 * of the whole graph: {@code out = a · w} of one projection ({@code w} a parameter, (in, out)
 * as {@code Linear} stores it), recomputed on the host for a few rows from the very operands
 * the device read. The projections picked are a block's first (the q projection: K = N =
 * hidden) and its last (the MLP down projection: K = mlp, the odd sizes of the random shapes).
 *
 * <p>An eager session frees each activation after its last reader, so the operands are made
 * graph outputs ({@link #withOutputs}): the eager run keeps them, and nothing else changes
 * (unfused, each stays its own kernel's output).
 *
 * @param a   the activation operand's value, (..., K)
 * @param w   the weight parameter's value, (K, N)
 * @param out the product's value, (..., N)
 */
public record GemmSample(String a, String w, String out) {
    /** The first and the last matmul of {@code g} whose right operand is a parameter (one if they coincide). */
    public static List<GemmSample> of(Graph g) {
        List<GemmSample> all = new ArrayList<>();
        for (Node n : g.nodes()) {
            if (n.op() == Op.MATMUL && g.node(n.input(1)).op() == Op.PARAM
                    && !n.attrs().getBool("transpose_a", false) && !n.attrs().getBool("transpose_b", false)) {
                all.add(new GemmSample(n.input(0), n.input(1), n.name()));
            }
        }
        if (all.isEmpty()) {
            throw new IllegalArgumentException(g.name() + " has no matmul by a parameter");
        }
        return all.size() == 1 ? all : List.of(all.getFirst(), all.getLast());
    }

    /** {@code g} with the samples' activations and products added to its outputs. */
    public static Graph withOutputs(Graph g, List<GemmSample> samples) {
        List<String> outs = new ArrayList<>(g.outputs());
        for (GemmSample s : samples) {
            for (String v : List.of(s.a, s.out)) {
                if (!outs.contains(v)) {
                    outs.add(v);
                }
            }
        }
        return new Graph(g.name(), g.nodes(), outs);
    }

    /**
     * The relative error (norm-wise, as {@link DemoMetrics#relErr}) of {@code rows} rows of the
     * device product against float64 from the device's own operands: rows 0 and the last, and
     * {@code rows - 2} more drawn from {@code seed}.
     */
    public static double relErr(Tensor a, Tensor w, Tensor out, int rows, long seed) {
        int k = w.shape().dim(0);
        int n = w.shape().dim(1);
        long m = a.numel() / k;
        if (out.numel() != m * n) {
            throw new IllegalArgumentException("product of " + a.shape() + " and " + w.shape() + " is not " + out.shape());
        }
        TreeSet<Long> pick = new TreeSet<>(List.of(0L, m - 1));
        SplittableRandom r = new SplittableRandom(seed);
        while (pick.size() < Math.min(rows, m)) {
            pick.add(r.nextLong(m));
        }
        double[] wd = w.toDoubles();
        double[] got = new double[pick.size() * n];
        double[] want = new double[pick.size() * n];
        int at = 0;
        for (long row : pick) {
            double[] acc = new double[n];
            for (int p = 0; p < k; p++) {
                double av = a.get(row * k + p);
                for (int j = 0; j < n; j++) {
                    acc[j] += av * wd[p * n + j];
                }
            }
            for (int j = 0; j < n; j++) {
                float v = out.get(row * n + j);
                if (!Float.isFinite(v)) {
                    throw new AssertionError("product row " + row + " column " + j + " is " + v + ": not written");
                }
                got[at + j] = v;
                want[at + j] = acc[j];
            }
            at += n;
        }
        return DemoMetrics.relErr(got, want);
    }
}
