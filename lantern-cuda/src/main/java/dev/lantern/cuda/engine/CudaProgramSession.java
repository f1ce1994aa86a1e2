package dev.lantern.cuda.engine;

import dev.lantern.Bindings;
import dev.lantern.Device;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.SessionStats;
import dev.lantern.Weights;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.LanternException;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link Program} on one GPU, through the public {@link Session} API: the device opened for the
 * session, the program compiled for cuda (fused, or unfused for eager), parameters resolved on the
 * host and uploaded once, each {@link #run} one forward on the session's stream (a CUDA graph
 * replay in {@link RunMode#GRAPH} mode; a capture that fails runs compiled and is counted with
 * its reason).
 */
final class CudaProgramSession implements Session {
    private final Program program;
    private final Device device;
    private final RunMode mode;
    private final CudaDevice gpu;
    private final CudaSession session;
    private final Map<String, Long> fallbacks = new HashMap<>();
    /** Inputs that a gather or scatter_add reads as ids, by input name, with the rows of the table they index. */
    private final Map<String, Long> idInputs = new HashMap<>();
    /** Inputs that a cross_entropy (or its gradient) reads as targets: {vocabulary, ignore_index}. */
    private final Map<String, long[]> targetInputs = new HashMap<>();
    private long forwards;
    private boolean closed;

    CudaProgramSession(Program program, Device device, Weights weights, RunMode mode) {
        this.program = program;
        this.device = device;
        this.mode = mode;
        CompiledModel model = program.model("cuda", mode.fused());
        for (dev.lantern.kernel.Kernel k : model.kernels()) {
            dev.lantern.ir.Op op = k.node().op();
            if (k.inputs().size() < 2 || k.inputs().get(1).origin() != dev.lantern.kernel.Operand.Origin.INPUT) {
                continue;
            }
            String ids = Bindings.name(model.graph().node(k.inputs().get(1).storage()));
            if (op == dev.lantern.ir.Op.GATHER || op == dev.lantern.ir.Op.SCATTER_ADD) {
                // the table's rows along the axis: gather's input, scatter_add's output
                dev.lantern.kernel.Operand table = op == dev.lantern.ir.Op.GATHER ? k.inputs().getFirst() : k.output();
                int rank = table.shape().rank();
                int axis = k.node().attrs().getInt("axis", 0);
                long rows = table.shape().dim(axis < 0 ? axis + rank : axis);
                idInputs.merge(ids, rows, Math::min);
            } else if (op == dev.lantern.ir.Op.CROSS_ENTROPY || op == dev.lantern.ir.Op.CROSS_ENTROPY_GRAD) {
                targetInputs.put(ids, new long[] {k.inputs().getFirst().shape().last(), k.node().attrs().getLong("ignore_index", -100)});
            }
        }
        this.gpu = CudaDevice.open(device.index());
        try {
            CudaSession.Options o = switch (mode) {
                case EAGER -> CudaSession.Options.eager();
                case COMPILED -> CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF);
                case GRAPH -> CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER);
            };
            this.session = CudaSession.open(gpu, model, Bindings.parameters(model.graph(), weights), o);
        } catch (RuntimeException e) {
            gpu.close();
            throw e;
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
        Map<String, Tensor> bound = Bindings.inputs(session.model().graph(), inputs);
        // the GPU's gather never reads outside its table (a bad id's row is NaN): ids the caller gives
        // are checked here first, so they fail as on the CPU, with a typed error naming the id
        idInputs.forEach((name, rows) -> {
            Tensor ids = bound.get(name);
            for (long i = 0; i < ids.numel(); i++) {
                long id = ids.dtype() == dev.lantern.ir.DType.I64
                        ? ids.segment().getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i)
                        : ids.segment().getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, i);
                dev.lantern.ir.IndexOutOfRangeException.wrap(id, rows, i, "input '" + name + "'");
            }
        });
        // the same for cross-entropy targets: the GPU gives a bad target's token NaN, the CPU a typed error
        targetInputs.forEach((name, vi) -> {
            Tensor t = bound.get(name);
            for (long i = 0; i < t.numel(); i++) {
                long id = t.dtype() == dev.lantern.ir.DType.I64
                        ? t.segment().getAtIndex(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i)
                        : t.segment().getAtIndex(java.lang.foreign.ValueLayout.JAVA_INT_UNALIGNED, i);
                if (id != vi[1] && (id < 0 || id >= vi[0])) {
                    throw new dev.lantern.ir.IndexOutOfRangeException("input '" + name + "': cross_entropy target " + id + " at position "
                            + i + " is outside [0, " + vi[0] + ") and is not ignore_index " + vi[1]);
                }
            }
        });
        session.setInputs(bound);
        if (mode == RunMode.GRAPH) {
            long before = session.forwardStats().graphEagerRuns();
            session.forwardGraph();
            if (session.forwardStats().graphEagerRuns() > before) {
                String why = session.graphFailure();
                fallbacks.merge(why == null ? "policy" : why, 1L, Long::sum);
            }
        } else {
            session.forward();
        }
        // the compiled graph may rename a returned value but keeps the outputs' positions
        List<String> names = program.outputNames();
        List<String> produced = session.model().graph().outputs();
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (int i = 0; i < names.size(); i++) {
            out.put(names.get(i), session.output(produced.get(i)));
        }
        forwards++;
        return out;
    }

    @Override
    public SessionStats stats() {
        return new SessionStats(forwards, session.forwardStats().replays(), fallbacks);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            try {
                session.close();
            } finally {
                gpu.close();
            }
        }
    }
}
