package dev.lantern.train.run;

import dev.lantern.Device;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.Map;

/**
 * The training step on the CPU: the graph compiled by the standard pipeline and run by the
 * compiled CPU executor, the weights bound as its parameters before each run (the trainer's
 * tensors themselves, no copy).
 */
public final class CpuStepExecutor implements StepExecutor {
    private final CompiledModel compiled;
    private final CompiledCpuExecutor exec;
    private final Map<String, DType> boundType = new HashMap<>();

    /** Compiles {@code step} with {@code options} for the CPU. */
    public CpuStepExecutor(Graph step, CompileOptions options) {
        this.compiled = Compiler.compile(step, options);
        for (Node n : compiled.graph().params()) {
            boundType.put(n.attrs().getString("name", n.name()), n.type().dtype());
        }
        this.exec = new CompiledCpuExecutor(compiled);
    }

    @Override
    public Device device() {
        return Device.cpu();
    }

    @Override
    public CompiledModel compiled() {
        return compiled;
    }

    @Override
    public DType boundType(String name) {
        return boundType.getOrDefault(name, DType.F32);
    }

    @Override
    public Map<String, Tensor> run(Map<String, Tensor> weights, Map<String, Tensor> inputs) {
        exec.bind(weights);
        return exec.run(inputs);
    }

    @Override
    public void close() {
        exec.close();
    }
}
