package dev.lantern.onnx;

import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Shape;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.ir.DType;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

/** Running imported graphs in tests: on the compiled CPU backend, and through the float64 reference interpreter. */
final class Runs {
    private Runs() {}

    /** A seeded N(0, 1) float input. */
    static Tensor input(long seed, int... dims) {
        Random r = new Random(seed);
        Tensor t = Tensor.allocate(DType.F32, Shape.of(dims));
        for (long i = 0; i < t.numel(); i++) {
            t.set(i, (float) r.nextGaussian());
        }
        return t;
    }

    /** The graph's first output from the compiled CPU executor, with the arena poisoned first. */
    static double[] cpu(ImportedModel m, Map<String, Tensor> inputs) {
        Graph g = m.graph();
        CompiledModel c = Compiler.compile(g, CompileOptions.defaults());
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(m.params())) {
            exec.poisonArena();
            return exec.run(inputs).get(g.outputs().getFirst()).toDoubles();
        }
    }

    /** The graph's first output from Lantern's float64 reference interpreter. */
    static double[] reference(ImportedModel m, Map<String, Tensor> inputs) {
        Map<String, Tensor> all = new HashMap<>(m.params());
        all.putAll(inputs);
        return ReferenceInterpreter.run(m.graph(), all).get(m.graph().outputs().getFirst()).data();
    }

    /** ‖a − b‖₂ / ‖b‖₂ ({@link dev.lantern.reference.Accuracy#relErr}), refusing arrays of two lengths. */
    static double relErr(double[] a, double[] b) {
        if (a.length != b.length) {
            throw new AssertionError("lengths differ: " + a.length + " vs " + b.length);
        }
        return dev.lantern.reference.Accuracy.relErr(a, b);
    }
}
