package dev.lantern.train.run;

import dev.lantern.Device;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.tensor.Tensor;

import java.util.Map;

/**
 * Where {@link Trainer}'s compiled step (forward + backward, one graph) runs: the compiled CPU
 * executor ({@link CpuStepExecutor}), or a {@link dev.lantern.Session} of any backend found by
 * {@link dev.lantern.Lantern} ({@link SessionStepExecutor}: the GPU), so that the trainer's logic
 * (AdamW over f32 masters, clipping, the loss scaler, checkpoints) is one, whatever runs the step.
 * Each {@link #run} takes the current weights and the batch and returns the step's outputs (the
 * scaled loss and the gradients) as host tensors; the optimizer then runs on the host.
 */
public sealed interface StepExecutor extends AutoCloseable permits CpuStepExecutor, SessionStepExecutor {
    /** The device the step runs on. */
    Device device();

    /** The step as compiled for that device. */
    CompiledModel compiled();

    /**
     * The dtype the compiled step reads parameter {@code name} in: f32, or under autocast on the CPU
     * the bf16/f16 low copy; the trainer binds the matching tensor (master or low copy).
     */
    DType boundType(String name);

    /** One step: {@code weights} by parameter name, {@code inputs} by input name; the outputs by value name. */
    Map<String, Tensor> run(Map<String, Tensor> weights, Map<String, Tensor> inputs);

    @Override
    void close();

    /** {@code step} compiled with {@code options} for {@code device}: the CPU's compiled executor, or a session there. */
    static StepExecutor open(Graph step, CompileOptions options, Device device) {
        return device.kind().equals("cpu") ? new CpuStepExecutor(step, options) : new SessionStepExecutor(step, options, device);
    }
}
