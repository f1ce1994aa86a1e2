package dev.lantern.cuda.engine;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.tensor.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A GPU-machine probe (not a test) for {@code scripts/gpu-profile}: the compiled bf16 forward of
 * one block, as {@code bench macro} times it, run a few times inside a profiler capture range.
 * The session is opened and (with {@code --tune}) autotuned from {@code LANTERN_TUNE_CACHE}, then
 * {@code --warmup N} forwards run outside the range; only the {@code --forwards N} forwards
 * after them run between {@code cuProfilerStart} and {@code cuProfilerStop}, so {@code nsys
 * --capture-range=cudaProfilerApi} and {@code ncu --profile-from-start off} see those forwards
 * and nothing of the compile, the tuning or the warm-up. With {@code --io} each profiled forward
 * also uploads its input and downloads its output, as a served forward does: the copies that
 * memcpy/compute overlap is measured on. Usage:
 * {@code ProfileProbe [--tune] [--io] [--warmup N] [--forwards N] BLOCK} (BLOCK as in
 * {@link SanitizeProbe}).
 */
public final class ProfileProbe {
    private ProfileProbe() {}

    public static void main(String[] args) throws Throwable {
        boolean tune = false;
        boolean io = false;
        int warmup = 3;
        int forwards = 5;
        BlockConfig cfg = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--tune" -> tune = true;
                case "--io" -> io = true;
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--forwards" -> forwards = Integer.parseInt(args[++i]);
                default -> cfg = SanitizeProbe.parse(args[i]);
            }
        }
        if (cfg == null || forwards < 1 || warmup < 0) {
            System.err.println("usage: ProfileProbe [--tune] [--io] [--warmup N] [--forwards N] BLOCK");
            System.exit(2);
        }
        long t0 = System.nanoTime();
        Graph graph = TransformerBlock.build(cfg, DType.BF16).graph();
        CudaSession.Options o = CudaSession.Options.compiled();
        if (tune) {
            o = o.withAutotune(new TuneCache(TuneCache.defaultFile()));
        }
        try (CudaDevice device = CudaDevice.open(0);
             CudaSession s = CudaSession.open(device, graph, null, o)) {
            s.fillInputs(7);
            Map<String, Tensor> inputs = new LinkedHashMap<>();
            if (io) {
                for (Node n : s.model().graph().inputs()) {
                    inputs.put(n.attrs().getString("name", n.name()), s.output(n.name()));
                }
            }
            if (tune) {
                s.autotune();
                phase(cfg, "autotuned (cache " + TuneCache.defaultFile() + ")", t0);
            }
            for (int i = 0; i < warmup; i++) {
                forward(s, inputs, io);
            }
            s.synchronize();
            phase(cfg, warmup + " warm-up forwards", t0);
            ProfilerRange range = ProfilerRange.find(device);
            device.makeCurrent(); // cuProfilerStart acts on the calling thread's context
            range.start();
            long f0 = System.nanoTime();
            for (int i = 0; i < forwards; i++) {
                forward(s, inputs, io);
            }
            s.synchronize();
            long f1 = System.nanoTime();
            range.stop();
            System.out.printf(java.util.Locale.ROOT, "[profile] %s %d forwards%s in the capture range: %.3f ms each (wall, "
                    + "under the profiler), profiler API %s%n", cfg.name(), forwards, io ? " with input upload and output download" : "",
                    (f1 - f0) / 1e6 / forwards, range.describe());
            phase(cfg, "done", t0);
        }
    }

    private static void forward(CudaSession s, Map<String, Tensor> inputs, boolean io) {
        if (io) {
            s.setInputs(inputs);
            s.forward();
            s.output(); // downloads, and so synchronises
        } else {
            s.forward();
        }
    }

    private static void phase(BlockConfig cfg, String what, long t0) {
        System.out.printf(java.util.Locale.ROOT, "[profile] %s %s (%.1f s)%n", cfg.name(), what, (System.nanoTime() - t0) / 1e9);
    }

    /**
     * {@code cuProfilerStart}/{@code cuProfilerStop} of the driver, looked up here: only this probe
     * needs them. Missing (no such symbol), the range is a no-op and says so, and the profilers
     * then see nothing (nsys) or nothing past their own filters (ncu).
     */
    private static final class ProfilerRange {
        private final MethodHandle start;
        private final MethodHandle stop;
        private String result;

        private ProfilerRange(MethodHandle start, MethodHandle stop, String result) {
            this.start = start;
            this.stop = stop;
            this.result = result;
        }

        static ProfilerRange find(CudaDevice device) {
            // the driver file Lantern loaded (LibraryLocator may have found it outside the loader's path)
            String at = device.libraries().driver().probe().foundAt();
            String file = at != null && at.startsWith("/") ? at : "libcuda.so.1";
            SymbolLookup lib;
            try {
                lib = SymbolLookup.libraryLookup(file, Arena.global());
            } catch (IllegalArgumentException e) {
                return new ProfilerRange(null, null, "absent (" + file + " did not load: " + e.getMessage() + ")");
            }
            Optional<MemorySegment> a = lib.find("cuProfilerStart");
            Optional<MemorySegment> b = lib.find("cuProfilerStop");
            if (a.isEmpty() || b.isEmpty()) {
                return new ProfilerRange(null, null, "absent (no cuProfilerStart in " + file + ")");
            }
            FunctionDescriptor d = FunctionDescriptor.of(JAVA_INT);
            Linker linker = Linker.nativeLinker();
            return new ProfilerRange(linker.downcallHandle(a.get(), d), linker.downcallHandle(b.get(), d), "");
        }

        void start() throws Throwable {
            if (start != null) {
                result = "cuProfilerStart=" + (int) start.invokeExact();
            }
        }

        void stop() throws Throwable {
            if (stop != null) {
                result += " cuProfilerStop=" + (int) stop.invokeExact();
            }
        }

        String describe() {
            return result;
        }
    }
}
