package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.lower.Step;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.Operand;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.runtime.alloc.Allocation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;

/**
 * One eager forward (PyTorch eager's memory behaviour): each kernel's output allocated from the
 * caching allocator just before its steps run, bound and launched one by one, and freed after its
 * last reader. The graph outputs stay allocated, readable, until the next forward starts.
 */
final class EagerForward {
    private final CudaDevice device;
    private final CudaStream stream;
    private final BufferMap buffers;
    private final StepBinder binder;
    private final Map<String, Allocation> outputs = new HashMap<>();
    private boolean poisonNext;

    EagerForward(CudaDevice device, CudaStream stream, BufferMap buffers, StepBinder binder) {
        this.device = device;
        this.stream = stream;
        this.buffers = buffers;
        this.binder = binder;
    }

    /** The next forward fills each activation with 0xFF bytes as it is allocated (tests). */
    void poisonNext() {
        poisonNext = true;
    }

    void run(CudaProgram program, IntFunction<String> stepNames) {
        run(program, stepNames, null);
    }

    /**
     * One forward; with {@code marks} (one event per step and one more) an event recorded before
     * each step's launch and after the last, for {@link StepProfiler#eager}: the time between two
     * marks is the step's kernel plus the host's work before the next launch (binding, the
     * allocator), which is what an eager forward spends on it.
     */
    void run(CudaProgram program, IntFunction<String> stepNames, List<CudaEvent> marks) {
        // the previous forward's outputs stayed readable until now
        for (Map.Entry<String, Allocation> e : outputs.entrySet()) {
            buffers.removeValue(e.getKey());
            buffers.free(e.getValue());
        }
        outputs.clear();
        boolean poison = poisonNext;
        poisonNext = false;
        Map<String, MemoryPlan.Placement> byValue = program.plan().byValue();
        // an output that is a reshape view keeps the value it views alive past its last reader
        Set<String> graphOutputs = new HashSet<>();
        program.model().graph().outputs().forEach(o -> graphOutputs.add(program.storageOf(o)));
        List<Step> steps = program.steps();
        int si = 0;
        for (Kernel k : program.model().kernels()) {
            List<Operand> written = new ArrayList<>(List.of(k.output()));
            written.addAll(k.sideOutputs()); // a side output lives from its writer, like the output
            written.addAll(k.workspace()); // scratch (an attention's roped q and k) lives while its kernel runs
            for (Operand w : written) {
                if (buffers.value(w.value()) == null) {
                    Allocation a = buffers.allocate(w.bytes());
                    if (poison) {
                        stream.memset(CudaStorage.view(device, a.address(), a.size(), () -> { }), 0, (byte) 0xFF, a.size());
                    }
                    buffers.putValue(w.value(), a);
                }
            }
            while (si < steps.size() && steps.get(si).kernel() == k.index()) {
                if (marks != null) {
                    stream.record(marks.get(si));
                }
                device.step(stepNames, si);
                binder.bind(steps.get(si++)).run();
            }
            for (MemoryPlan.Placement p : byValue.values()) {
                String v = p.buffer().value();
                if (p.buffer().last() == k.index() && !buffers.isPersistent(v) && !graphOutputs.contains(v) && buffers.value(v) != null) {
                    buffers.free(buffers.removeValue(v));
                }
            }
        }
        if (marks != null) {
            stream.record(marks.get(steps.size()));
        }
        for (String v : graphOutputs) {
            if (!buffers.isPersistent(v) && buffers.value(v) != null) {
                outputs.put(v, buffers.value(v));
            }
        }
    }

    /** Frees the last forward's outputs. */
    void release() {
        outputs.values().forEach(buffers::free);
        outputs.clear();
    }
}
