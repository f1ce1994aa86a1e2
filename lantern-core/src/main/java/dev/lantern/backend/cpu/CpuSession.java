package dev.lantern.backend.cpu;

import dev.lantern.Bindings;
import dev.lantern.Device;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.SessionStats;
import dev.lantern.Weights;
import dev.lantern.cpu.EagerExecutor;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.Graph;
import dev.lantern.ir.LanternException;
import dev.lantern.tensor.Tensor;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A program on the CPU. Compiled (and graph) mode: the fused kernels over one planned arena
 * ({@link CompiledCpuExecutor}). Eager: the unfused graph op by op ({@link EagerExecutor}), each
 * output a fresh tensor. The CPU has no graphs to replay: a {@link RunMode#GRAPH} session runs
 * compiled and counts every forward as a fallback with the reason {@code "cpu"}.
 */
final class CpuSession implements Session {
    static final String NO_GRAPHS = "cpu";

    private final Program program;
    private final Device device;
    private final RunMode mode;
    private final CompiledModel model;
    private final CompiledCpuExecutor compiled; // null in eager mode
    private final Map<String, Tensor> params;   // eager mode: bound by name on every run
    private long forwards;
    private boolean closed;

    CpuSession(Program program, Device device, Weights weights, RunMode mode) {
        this.program = program;
        this.device = device;
        this.mode = mode;
        this.model = program.sessionModel("cpu", mode.fused()); // the program's compiled kernels: compile-cache hits
        Graph run = mode.fused() ? model.graph() : model.unfused();
        Map<String, Tensor> p = Bindings.parameters(run, weights);
        if (mode.fused()) {
            this.compiled = new CompiledCpuExecutor(model).bind(p);
            this.params = Map.of();
        } else {
            this.compiled = null;
            this.params = p;
        }
    }

    @Override
    public Program program() {
        return program;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public RunMode mode() {
        return mode;
    }

    @Override
    public Map<String, Tensor> run(Map<String, Tensor> inputs) {
        if (closed) {
            throw new LanternException("session on " + device + " is closed");
        }
        Graph g = mode.fused() ? model.graph() : model.unfused();
        Map<String, Tensor> in = Bindings.inputs(g, inputs);
        Map<String, Tensor> out;
        if (compiled != null) {
            out = compiled.run(in); // keyed by the source graph's output names already
        } else {
            Map<String, Tensor> feeds = new HashMap<>(params);
            feeds.putAll(in);
            Map<String, Tensor> byValue = new EagerExecutor().run(g, feeds);
            // passes may rename a returned value but keep the outputs' positions
            List<String> names = program.outputNames();
            out = new LinkedHashMap<>();
            for (int i = 0; i < names.size(); i++) {
                out.put(names.get(i), byValue.get(g.outputs().get(i)));
            }
        }
        forwards++;
        return out;
    }

    @Override
    public SessionStats stats() {
        return new SessionStats(forwards, 0, mode == RunMode.GRAPH ? Map.of(NO_GRAPHS, forwards) : Map.of());
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (compiled != null) {
                compiled.close();
            }
        }
    }
}
