package dev.lantern.autodiff;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.Shape;
import dev.lantern.reference.Accuracy;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Gradient checks in float64: the backward graph on the reference interpreter against central
 * finite differences of the forward graph, (f(x + h) − f(x − h)) / 2h per element, h = 1e-6·max(1, |x|)
 * (truncation ~h², rounding ~1e-16/h: both far under 1e-6 relative). Every floating source is drawn
 * from a seed (normals, or uniform [0.5, 2) for names starting with "pos"); integer sources are given.
 * Where the numeric gradient's norm is under 1e-6 (zero by symmetry), the absolute error is measured.
 */
final class GradCheck {
    private GradCheck() {}

    /** Seeded float64 values for every floating input and param of {@code g}; {@code fixed} wins. */
    static Map<String, RefTensor> sources(Graph g, long seed, Map<String, RefTensor> fixed) {
        SplittableRandom r = new SplittableRandom(seed);
        Map<String, RefTensor> m = new LinkedHashMap<>(fixed);
        for (Node n : g.nodes()) {
            if (n.op() != Op.INPUT && n.op() != Op.PARAM) {
                continue;
            }
            String key = n.attrs().getString("name", n.name());
            if (m.containsKey(key)) {
                continue;
            }
            Shape s = n.type().shape();
            double[] d = new double[Math.toIntExact(s.numel())];
            boolean positive = key.startsWith("pos");
            for (int i = 0; i < d.length; i++) {
                d[i] = positive ? 0.5 + 1.5 * r.nextDouble() : gaussian(r);
            }
            m.put(key, new RefTensor(s, d));
        }
        return m;
    }

    static double gaussian(SplittableRandom r) {
        double u = r.nextDouble(1e-12, 1);
        double v = r.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }

    /** A small integer tensor (ids, targets), values given in row-major order. */
    static RefTensor ints(Shape s, long... values) {
        double[] d = new double[values.length];
        for (int i = 0; i < d.length; i++) {
            d[i] = values[i];
        }
        return new RefTensor(s, d);
    }

    /**
     * The worst relative error (‖analytic − numeric‖ / ‖numeric‖) over the values of {@code wrt} (SSA
     * names whose sources are keyed by their name attribute), with the details in the message.
     */
    static Result check(Graph forward, String loss, List<String> wrt, Map<String, RefTensor> src) {
        BackwardGraph bg = Gradients.of(forward, loss, wrt);
        Map<String, RefTensor> out = ReferenceInterpreter.runExact(bg.graph(), src);
        double lossRef = ReferenceInterpreter.runExact(forward.withNodes(forward.nodes(), List.of(loss)), src).get(loss).data()[0];
        double worst = 0;
        StringBuilder report = new StringBuilder();
        Graph lossOnly = forward.withNodes(forward.nodes(), List.of(loss));
        for (String w : wrt) {
            Node n = forward.node(w);
            String key = n.attrs().getString("name", n.name());
            double[] x = src.get(key).data();
            double[] numeric = new double[x.length];
            for (int i = 0; i < x.length; i++) {
                double keep = x[i];
                double h = 1e-6 * Math.max(1, Math.abs(keep));
                x[i] = keep + h;
                double up = eval(lossOnly, loss, src);
                x[i] = keep - h;
                double down = eval(lossOnly, loss, src);
                x[i] = keep;
                numeric[i] = (up - down) / (2 * h);
            }
            double[] analytic = out.get(bg.gradientOf(w)).data();
            // a gradient that is zero by symmetry (a key bias under softmax's shift invariance) has no
            // relative error to speak of: there the absolute error must be as small
            double[] diff = new double[x.length];
            for (int i = 0; i < x.length; i++) {
                diff[i] = analytic[i] - numeric[i];
            }
            double e = norm(numeric) < 1e-6 ? norm(diff) : Accuracy.relErr(analytic, numeric);
            worst = Math.max(worst, e);
            report.append(String.format("%s: rel err %.3e (|g| %.3e)%n", w, e, norm(numeric)));
        }
        return new Result(worst, report.toString(), out.get(bg.loss()).data()[0], lossRef, bg);
    }

    private static double eval(Graph g, String loss, Map<String, RefTensor> src) {
        return ReferenceInterpreter.runExact(g, src).get(loss).data()[0];
    }

    static double norm(double[] a) {
        double s = 0;
        for (double v : a) {
            s += v * v;
        }
        return Math.sqrt(s);
    }

    /** The outcome of one check: the worst relative error, per-value lines, and the loss from both graphs. */
    record Result(double worst, String report, double loss, double forwardLoss, BackwardGraph backward) {}

    /** Sources as a mutable copy (finite differences poke the arrays in place). */
    static Map<String, RefTensor> copy(Map<String, RefTensor> src) {
        Map<String, RefTensor> m = new HashMap<>();
        src.forEach((k, v) -> m.put(k, new RefTensor(v.shape(), v.data().clone())));
        return m;
    }

    static List<String> list(String... s) {
        return new ArrayList<>(List.of(s));
    }
}
