package dev.lantern.onnx;

import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Op;

import java.util.List;
import java.util.Map;
import java.util.function.DoubleBinaryOperator;
import java.util.function.DoubleUnaryOperator;

/**
 * Elementwise ONNX ops. Each folds on the host when every input is known at import time, and otherwise
 * becomes the Lantern op of the same meaning; the forms Lantern's IR cannot express yet (Sqrt, Erf, Sigmoid,
 * Where on a run-time mask...) are typed errors unless a decomposed pattern absorbed them first.
 */
final class ElementwiseOps {
    private ElementwiseOps() {}

    static void register(Map<String, OpImporter> t) {
        t.put("Add", binary(Op.ADD, Double::sum));
        t.put("Sub", binary(Op.SUB, (a, b) -> a - b));
        t.put("Mul", binary(Op.MUL, (a, b) -> a * b));
        t.put("Div", binary(Op.DIV, ElementwiseOps::divide));
        t.put("Pow", ElementwiseOps::pow);
        t.put("Neg", unary(Op.NEG, x -> -x));
        t.put("Exp", unary(Op.EXP, Math::exp));
        t.put("Tanh", unary(Op.TANH, Math::tanh));
        t.put("Relu", unary(Op.RELU, x -> Math.max(0, x)));
        t.put("Sqrt", unary(null, Math::sqrt));
        t.put("Erf", unary(null, ElementwiseOps::erf));
        t.put("Sigmoid", unary(null, x -> 1 / (1 + Math.exp(-x))));
        t.put("Abs", unary(null, Math::abs));
        t.put("Floor", unary(null, Math::floor));
        t.put("Ceil", unary(null, Math::ceil));
        t.put("Cos", unary(null, Math::cos)); // rotary tables: cos/sin of positions x frequencies fold
        t.put("Sin", unary(null, Math::sin));
        t.put("IsNaN", c -> foldOnly(c, "on a run-time tensor", () -> c.fold.map1(c.host(0), OnnxTypes.BOOL, x -> Double.isNaN(x) ? 1 : 0)));
        t.put("IsInf", c -> foldOnly(c, "on a run-time tensor", () -> c.fold.map1(c.host(0), OnnxTypes.BOOL, x -> Double.isInfinite(x) ? 1 : 0)));
        t.put("Reciprocal", ElementwiseOps::reciprocal);
        t.put("Identity", c -> pass(c));
        t.put("Dropout", c -> pass(c)); // inference: the identity (its mask output is not supported)
        t.put("Cast", ElementwiseOps::cast);
        t.put("Equal", compare((a, b) -> a == b ? 1 : 0));
        t.put("Less", compare((a, b) -> a < b ? 1 : 0));
        t.put("Greater", compare((a, b) -> a > b ? 1 : 0));
        t.put("LessOrEqual", compare((a, b) -> a <= b ? 1 : 0));
        t.put("GreaterOrEqual", compare((a, b) -> a >= b ? 1 : 0));
        t.put("And", compare((a, b) -> a != 0 && b != 0 ? 1 : 0));
        t.put("Or", compare((a, b) -> a != 0 || b != 0 ? 1 : 0));
        t.put("Not", c -> foldOnly(c, "a run-time boolean", () -> c.fold.map1(c.host(0), OnnxTypes.BOOL, x -> x == 0 ? 1 : 0)));
        t.put("Max", binary(null, Math::max));
        t.put("Min", binary(null, Math::min));
        t.put("Where", ElementwiseOps::where);
    }

    /**
     * Where on host values folds. With a host condition and one run-time side x (the other side y on the host),
     * as attention masks are written ({@code where(causal, scores, -inf)}), it becomes {@code x·keep + fill}:
     * keep is 1 where x is chosen and 0 elsewhere, fill is y where y is chosen and 0 elsewhere, so a -inf fill
     * gives -inf and never NaN (x·0 is 0 for finite x).
     */
    private static void where(ImportContext c) {
        if (c.allHost()) {
            c.output(0, c.fold.map(List.of(c.host(0), c.host(1), c.host(2)), c.host(1).elemType(), v -> v[0] != 0 ? v[1] : v[2]));
            return;
        }
        if (!c.isHost(0) || c.isHost(1) == c.isHost(2)) {
            throw unsupported(c, "with a run-time condition, or run-time values on both sides");
        }
        int xi = c.isHost(1) ? 2 : 1;
        HostTensor cond = c.host(0);
        HostTensor y = c.host(3 - xi);
        boolean xWhenTrue = xi == 1;
        Value x = c.run(xi);
        int type = OnnxTypes.fromDtype(x.type().dtype());
        HostTensor keep = c.fold.map(List.of(cond, y), type, v -> (v[0] != 0) == xWhenTrue ? 1 : 0);
        HostTensor fill = c.fold.map(List.of(cond, y), type, v -> (v[0] != 0) == xWhenTrue ? 0 : v[1]);
        Value out = x;
        if (java.util.Arrays.stream(keep.values()).anyMatch(k -> k == 0)) {
            out = c.op(Op.MUL, Attrs.EMPTY, out, c.runHost("keep", keep));
        }
        c.output(0, c.op(Op.ADD, Attrs.EMPTY, out, c.runHost("fill", fill)));
    }

    private static double divide(double a, double b) {
        return a / b;
    }

    private static OpImporter binary(Op op, DoubleBinaryOperator f) {
        return c -> {
            if (c.allHost()) {
                HostTensor a = c.host(0);
                HostTensor b = c.host(1);
                boolean integer = !OnnxTypes.isFloat(a.elemType());
                DoubleBinaryOperator g = integer && op == Op.DIV ? (x, y) -> y == 0 ? 0 : (double) ((long) x / (long) y) : f;
                c.output(0, c.fold.map2(a, b, a.elemType(), g));
                return;
            }
            if (op == null) {
                throw unsupported(c, "on run-time tensors");
            }
            c.output(0, c.op(op, Attrs.EMPTY, c.run(0), c.run(1)));
        };
    }

    private static OpImporter unary(Op op, DoubleUnaryOperator f) {
        return c -> {
            if (c.allHost()) {
                HostTensor a = c.host(0);
                c.output(0, c.fold.map1(a, a.elemType(), f));
                return;
            }
            if (op == null) {
                throw unsupported(c, "on run-time tensors");
            }
            c.output(0, c.op(op, Attrs.EMPTY, c.run(0)));
        };
    }

    private static OpImporter compare(DoubleBinaryOperator f) {
        return c -> foldOnly(c, "a comparison of run-time tensors", () -> c.fold.map2(c.host(0), c.host(1), OnnxTypes.BOOL, f));
    }

    private static void foldOnly(ImportContext c, String what, java.util.function.Supplier<HostTensor> fold) {
        if (!c.allHost()) {
            throw unsupported(c, "(" + what + ")");
        }
        c.output(0, fold.get());
    }

    /** The typed error for an op or form that Lantern's IR does not have yet. */
    static OnnxImportException unsupported(ImportContext c, String form) {
        return c.fail("op " + c.node().getOpType() + " " + form + " is not supported by Lantern's IR yet");
    }

    private static void pass(ImportContext c) {
        c.define(c.node().getOutput(0), c.val(c.requireInput(0)));
        if (c.node().getOutputCount() > 1 && !c.node().getOutput(1).isEmpty()) {
            throw c.fail("the mask output of Dropout is not supported");
        }
    }

    /** x^2 and x^1 run as multiplications; other exponents need a pow op, which the IR lacks. */
    private static void pow(ImportContext c) {
        if (c.allHost()) {
            HostTensor a = c.host(0);
            c.output(0, c.fold.map2(a, c.host(1), a.elemType(), Math::pow));
            return;
        }
        if (!c.isHost(1) || c.host(1).numel() != 1) {
            throw unsupported(c, "with a run-time exponent");
        }
        double e = c.host(1).scalarValue();
        Value x = c.run(0);
        if (e == 1) {
            c.output(0, x);
        } else if (e == 2) {
            c.output(0, c.op(Op.MUL, Attrs.EMPTY, x, x));
        } else if (e == 3) {
            c.output(0, c.op(Op.MUL, Attrs.EMPTY, c.op(Op.MUL, Attrs.EMPTY, x, x), x));
        } else if (e == -1) {
            c.output(0, c.op(Op.DIV, Attrs.EMPTY, c.builder.constant(1, x.type().dtype()), x));
        } else {
            throw unsupported(c, "with exponent " + e);
        }
    }

    private static void reciprocal(ImportContext c) {
        if (c.allHost()) {
            HostTensor a = c.host(0);
            c.output(0, c.fold.map1(a, a.elemType(), x -> 1 / x));
            return;
        }
        Value x = c.run(0);
        c.output(0, c.op(Op.DIV, Attrs.EMPTY, c.builder.constant(1, x.type().dtype()), x));
    }

    private static void cast(ImportContext c) {
        int to = (int) Attributes.getInt(c, "to", 0);
        if (OnnxTypes.size(to) == 0) {
            throw c.fail("Cast to " + OnnxTypes.name(to) + " is not supported");
        }
        if (c.allHost()) {
            c.output(0, c.fold.map1(c.host(0), to, x -> x));
            return;
        }
        DType d = OnnxTypes.dtype(to);
        if (d == null) {
            throw unsupported(c, "to " + OnnxTypes.name(to) + " at run time");
        }
        Value x = c.run(0);
        c.output(0, x.type().dtype() == d ? x : c.op(Op.CAST, Attrs.of("to", d.text()), x));
    }

    /** erf for folding, to about 1e-15: a Maclaurin series near zero, a continued fraction for the tail. */
    static double erf(double x) {
        double t = Math.abs(x);
        double r;
        if (t < 2.5) {
            // Maclaurin series: converges fast for |x| < 2.5 (terms fall below 1e-17 by n ~ 60)
            double sum = 0;
            double term = t;
            for (int n = 0; n < 100; n++) {
                double add = term / (2 * n + 1);
                sum += add;
                if (Math.abs(add) < 1e-17 * Math.abs(sum)) {
                    break;
                }
                term *= -t * t / (n + 1);
            }
            r = 2 / Math.sqrt(Math.PI) * sum;
        } else {
            // continued fraction for erfc, evaluated from the tail
            double f = 0;
            for (int k = 60; k >= 1; k--) {
                f = k / 2.0 / (t + f);
            }
            r = 1 - Math.exp(-t * t) / Math.sqrt(Math.PI) / (t + f);
        }
        return x < 0 ? -r : r;
    }
}
