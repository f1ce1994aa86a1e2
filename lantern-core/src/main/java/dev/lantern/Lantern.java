package dev.lantern;

import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.Graph;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Lantern's front door: compile a graph, load it on a device, run it.
 *
 * <pre>{@code
 * Graph g = IrParser.parse(Files.readString(Path.of("mlp.ir")));
 * Program p = Lantern.compile(g, CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16));
 * try (Session s = p.load(Lantern.bestDevice(), Weights.random(0))) {
 *     Map<String, Tensor> out = s.run(p.randomInputs(1));
 * }
 * }</pre>
 *
 * Backends are found on the class path ({@link Backend}): lantern-core brings the CPU, lantern-cuda
 * the GPU.
 */
public final class Lantern {
    private static volatile List<Backend> backends;

    private Lantern() {}

    /** Runs the pass pipeline on {@code graph} for {@code options}' target; errors in the graph surface here. */
    public static Program compile(Graph graph, CompileOptions options) {
        return new Program(graph, options);
    }

    /** {@link #compile(Graph, CompileOptions)} with {@link CompileOptions#defaults()}. */
    public static Program compile(Graph graph) {
        return compile(graph, CompileOptions.defaults());
    }

    /** Every usable device: {@code cpu}, then {@code cuda:0..N-1} where GPUs are present. */
    public static List<Device> devices() {
        List<Device> out = new ArrayList<>();
        out.add(Device.cpu());
        for (Backend b : backends()) {
            if (b.kind().equals("cuda")) {
                for (int i = 0; i < b.deviceCount(); i++) {
                    out.add(Device.cuda(i));
                }
            }
        }
        return out;
    }

    /** {@code cuda:0} when a usable GPU is present, else {@code cpu}. */
    public static Device bestDevice() {
        List<Device> all = devices();
        return all.size() > 1 ? all.get(1) : all.getFirst();
    }

    /** The backend serving {@code device}; a typed error when none does or the device is not present. */
    public static Backend backend(Device device) {
        for (Backend b : backends()) {
            if (b.kind().equals(device.kind())) {
                int n = b.deviceCount();
                if (device.index() >= n) {
                    String why = b.unavailableReason();
                    throw new DeviceUnavailableException("device " + device + " is not available"
                            + (n > 0 ? " (" + n + " present)" : why == null ? "" : ": " + why));
                }
                return b;
            }
        }
        throw new DeviceUnavailableException("no backend for " + device.kind() + " on the class path"
                + (device.kind().equals("cuda") ? " (add lantern-cuda)" : ""));
    }

    private static List<Backend> backends() {
        List<Backend> b = backends;
        if (b == null) {
            List<Backend> found = new ArrayList<>();
            ServiceLoader.load(Backend.class, Lantern.class.getClassLoader()).forEach(found::add);
            backends = b = List.copyOf(found);
        }
        return b;
    }
}
