package dev.lantern.train.run;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.tensor.Tensor;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The training step on another device (the GPU) through the public {@link Session} API, so that
 * lantern-core needs no backend module: the step's parameters are turned into inputs of the same
 * names, compiled for the device, and each {@link #run} uploads the current weights with the batch
 * and returns the loss and the gradients to the host. A first, correct version: the weights cross
 * to the device and the gradients back every step (for a 13 M-parameter decoder-small, about
 * 100 MB each way); an optimizer on the device would keep both there. Under autocast the device
 * rounds the f32 masters to bf16/f16 itself, to the same values as the CPU's low copies (nearest even).
 */
public final class SessionStepExecutor implements StepExecutor {
    private final Device device;
    private final Program program;
    private final Session session;

    /** Compiles {@code step} with {@code options} for {@code device} and opens a session there. */
    public SessionStepExecutor(Graph step, CompileOptions options, Device device) {
        this.device = device;
        this.program = Lantern.compile(paramsAsInputs(step), options.withTarget(device.target()));
        this.session = program.load(device, Weights.of(Map.of()), RunMode.COMPILED);
    }

    /** {@code g} with every {@code param} node replaced by an {@code input} of the same name and type. */
    static Graph paramsAsInputs(Graph g) {
        List<Node> nodes = new ArrayList<>();
        for (Node n : g.nodes()) {
            nodes.add(n.op() != Op.PARAM ? n
                    : new Node(n.name(), Op.INPUT, List.of(), Attrs.of("name", n.attrs().getString("name", n.name())), n.type()));
        }
        return new Graph(g.name(), nodes, g.outputs());
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public CompiledModel compiled() {
        return program.model();
    }

    @Override
    public DType boundType(String name) {
        return DType.F32; // inputs are given as the f32 masters; the device converts what it reads in a low dtype
    }

    @Override
    public Map<String, Tensor> run(Map<String, Tensor> weights, Map<String, Tensor> inputs) {
        Map<String, Tensor> all = new HashMap<>(weights);
        all.putAll(inputs);
        return session.run(all);
    }

    @Override
    public void close() {
        session.close();
    }
}
