package dev.lantern.cuda.codegen;

import java.util.ArrayList;
import java.util.List;

/**
 * Renders an {@link ElementwiseSpec}. Decisions first, then text:
 * <ul>
 *   <li>each input is FULL (laid out like the output: offset = linear index), SCALAR (one
 *       value), or INDEXED (offset from the output index, decomposed with compile-time shape);</li>
 *   <li>vector width V = 16 bytes / the narrowest dtype (8 for bf16); the vector path needs every
 *       INDEXED input to have last stride 0 or 1 (and, for 1, every stride a multiple of V) and
 *       the last dim a multiple of V, unless all inputs are FULL or SCALAR, when a scalar tail
 *       takes the last n % V elements;</li>
 *   <li>otherwise the scalar path: one element per thread-iteration, correct for any strides.</li>
 * </ul>
 * Grid-stride loop, 256 threads, grid capped at 16 CTAs per SM.
 */
final class ElementwiseRenderer {
    static final int THREADS = 256;

    private enum Kind { FULL, SCALAR, INDEXED }

    private final ElementwiseSpec spec;
    private final CudaTarget target;
    private final List<Kind> kinds = new ArrayList<>();
    private final int width;
    private final boolean vector;

    ElementwiseRenderer(ElementwiseSpec spec, CudaTarget target) {
        this.spec = spec;
        this.target = target;
        List<Long> shape = spec.shape();
        List<Long> contiguous = ElementwiseSpec.contiguousStrides(shape);
        int minBytes = spec.outDtype().bytes();
        target.requireDtype(spec.outDtype(), spec.name());
        for (ElementwiseSpec.Operand op : spec.inputs()) {
            target.requireDtype(op.dtype(), spec.name());
            minBytes = Math.min(minBytes, op.dtype().bytes());
            kinds.add(classify(op.strides(), contiguous, shape));
        }
        this.width = target.vectorBytes() / minBytes;
        this.vector = chooseVector(shape);
    }

    private static Kind classify(List<Long> strides, List<Long> contiguous, List<Long> shape) {
        boolean full = true;
        boolean scalar = true;
        for (int d = 0; d < shape.size(); d++) {
            if (shape.get(d) == 1) {
                continue;  // the stride of a size-1 dim never matters
            }
            full &= strides.get(d).equals(contiguous.get(d));
            scalar &= strides.get(d) == 0;
        }
        return full ? Kind.FULL : scalar ? Kind.SCALAR : Kind.INDEXED;
    }

    private boolean chooseVector(List<Long> shape) {
        int last = shape.size() - 1;
        for (int i = 0; i < kinds.size(); i++) {
            if (kinds.get(i) != Kind.INDEXED) {
                continue;
            }
            if (shape.get(last) % width != 0) {
                return false;
            }
            List<Long> strides = spec.inputs().get(i).strides();
            long lastStride = shape.get(last) == 1 ? 0 : strides.get(last);
            if (lastStride != 0 && lastStride != 1) {
                return false;
            }
            if (lastStride == 1) {
                for (int d = 0; d < last; d++) {
                    if (shape.get(d) > 1 && strides.get(d) % width != 0) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    CudaKernelSource render() {
        CudaEmitter e = new CudaEmitter();
        CudaPrelude.emit(e, "elementwise chain, " + (vector ? "vector x" + width : "scalar") + " path");
        List<KernelParam> params = new ArrayList<>();
        for (int i = 0; i < spec.inputs().size(); i++) {
            params.add(new KernelParam("const " + CudaPrelude.cType(spec.inputs().get(i).dtype()) + "* __restrict__", "in" + i));
        }
        params.add(new KernelParam(CudaPrelude.cType(spec.outDtype()) + "* __restrict__", "out"));
        params.add(new KernelParam("long long", "n"));
        String signature = "extern \"C\" __global__ void __launch_bounds__(" + THREADS + ") " + spec.name() + "("
                + String.join(", ", params.stream().map(KernelParam::toString).toList()) + ")";
        e.block(signature, () -> {
            e.line("const long long stride = (long long) gridDim.x * blockDim.x;");
            e.line("const long long first = (long long) blockIdx.x * blockDim.x + threadIdx.x;");
            if (vector) {
                e.linef("constexpr int V = %d;", width);
                e.line("const long long nvec = n / V;");
                e.block("for (long long v = first; v < nvec; v += stride)", () -> {
                    e.line("const long long i = v * V;");
                    emitVectorBody(e);
                });
                if (spec.numel() % width != 0) {
                    e.comment("scalar tail: the last n % V elements");
                    e.block("for (long long i = nvec * V + first; i < n; i += stride)", () -> emitScalarBody(e));
                }
            } else {
                e.block("for (long long i = first; i < n; i += stride)", () -> emitScalarBody(e));
            }
        });
        int perThread = vector ? width : 1;
        int sms = target.smCount();
        LaunchRule rule = size -> {
            long work = Math.max(1, (size.get(0) + perThread - 1) / perThread);
            long grid = Math.min((work + THREADS - 1) / THREADS, 16L * sms);
            return LaunchConfig.linear(grid, THREADS, 0);
        };
        return new CudaKernelSource(spec.name(), e.text(), params, rule, ProblemSize.of(spec.numel()),
                vector ? "vector" : "scalar");
    }

    /** Offsets of INDEXED inputs from the output's index i (compile-time shape). */
    private void emitIndex(CudaEmitter e) {
        if (!kinds.contains(Kind.INDEXED)) {
            return;
        }
        List<Long> shape = spec.shape();
        boolean[] used = new boolean[shape.size()];  // dims some INDEXED input reads with a nonzero stride
        for (int k = 0; k < kinds.size(); k++) {
            for (int d = 0; d < shape.size(); d++) {
                used[d] |= kinds.get(k) == Kind.INDEXED && shape.get(d) > 1 && spec.inputs().get(k).strides().get(d) != 0;
            }
        }
        int outer = 0;  // dims before the first used one need no division
        while (outer < shape.size() && !used[outer]) {
            outer++;
        }
        e.line("long long r = i;");
        for (int d = shape.size() - 1; d >= outer; d--) {
            if (shape.get(d) == 1) {
                continue;
            }
            if (d == outer) {
                e.linef("const long long i%d = r%s;", d, d == 0 ? "" : " % " + shape.get(d) + "LL");
            } else if (used[d]) {
                e.linef("const long long i%d = r %% %dLL; r /= %dLL;", d, shape.get(d), shape.get(d));
            } else {
                e.linef("r /= %dLL;", shape.get(d));
            }
        }
        for (int k = 0; k < kinds.size(); k++) {
            if (kinds.get(k) == Kind.INDEXED) {
                List<String> terms = new ArrayList<>();
                List<Long> strides = spec.inputs().get(k).strides();
                for (int d = 0; d < shape.size(); d++) {
                    if (shape.get(d) > 1 && strides.get(d) != 0) {
                        terms.add(strides.get(d) == 1 ? "i" + d : "i" + d + " * " + strides.get(d) + "LL");
                    }
                }
                e.linef("const long long off%d = %s;", k, terms.isEmpty() ? "0" : String.join(" + ", terms));
            }
        }
    }

    private String offset(int k) {
        return switch (kinds.get(k)) {
            case FULL -> "i";
            case SCALAR -> "0";
            case INDEXED -> "off" + k;
        };
    }

    private void emitVectorBody(CudaEmitter e) {
        emitIndex(e);
        int last = spec.shape().size() - 1;
        for (int k = 0; k < kinds.size(); k++) {
            String t = CudaPrelude.cType(spec.inputs().get(k).dtype());
            long lastStride = spec.shape().get(last) == 1 ? 0 : spec.inputs().get(k).strides().get(last);
            boolean splat = kinds.get(k) == Kind.SCALAR || (kinds.get(k) == Kind.INDEXED && lastStride == 0);
            e.linef("float x%d[V];", k);
            if (splat) {
                int kk = k;
                e.block("", () -> {
                    e.linef("const float s = lt_f32(in%d[%s]);", kk, offset(kk));
                    e.unrolled("j", "V", () -> e.linef("x%d[j] = s;", kk));
                });
            } else {
                e.linef("lt_load<%s, V>(in%d + %s, x%d);", t, k, offset(k), k);
            }
        }
        e.line("float y[V];");
        e.unrolled("j", "V", () -> {
            for (int k = 0; k < kinds.size(); k++) {
                e.linef("const float v%d = x%d[j];", k, k);
            }
            emitSteps(e);
            e.linef("y[j] = v%d;", spec.inputs().size() + spec.steps().size() - 1);
        });
        e.linef("lt_store<%s, V>(out + i, y);", CudaPrelude.cType(spec.outDtype()));
    }

    private void emitScalarBody(CudaEmitter e) {
        emitIndex(e);
        for (int k = 0; k < kinds.size(); k++) {
            e.linef("const float v%d = lt_f32(in%d[%s]);", k, k, offset(k));
        }
        emitSteps(e);
        e.linef("out[i] = lt_from<%s>(v%d);", CudaPrelude.cType(spec.outDtype()),
                spec.inputs().size() + spec.steps().size() - 1);
    }

    private void emitSteps(CudaEmitter e) {
        int base = spec.inputs().size();
        for (int s = 0; s < spec.steps().size(); s++) {
            ElementwiseSpec.Step step = spec.steps().get(s);
            String a = step.args().isEmpty() ? "" : "v" + step.args().get(0);
            String b = step.args().size() > 1 ? "v" + step.args().get(1) : "";
            String c = floatLiteral(step.constant());
            String t = step.roundTo() == null ? "float" : CudaPrelude.cType(step.roundTo());
            e.linef("const float v%d = %s;", base + s, step.op().render(a, b, c, t));
        }
    }

    /** A C float literal that round-trips the double's f32 value (never locale-dependent). */
    static String floatLiteral(double v) {
        if (Double.isNaN(v)) {
            return "__int_as_float(0x7fc00000)";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "LT_INF" : "(-LT_INF)";
        }
        String s = Float.toString((float) v).replace("E", "e") + "f";
        return v < 0 ? "(" + s + ")" : s;
    }
}
