import dev.lantern.bench.cpu.CpuTarget;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.tensor.Tensor;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.LongSupplier;

/** One build's forward (loaded once per build by {@link Ab}): a block config name, or gpt2:MODEL.onnx (gpt2b8:MODEL.onnx) at batch 1 (8), seq 128. */
public class AbTarget implements LongSupplier {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final boolean WALL = System.getProperty("ab.wall") != null;
    private final CompiledCpuExecutor exec;
    private final Map<String, Tensor> in;
    private final Map<String, Tensor> out;

    public AbTarget(String target) {
        CpuTarget t = target.startsWith("gpt2:") ? CpuTarget.onnx(Path.of(target.substring(5)), 1, 128, 42)
                : target.startsWith("gpt2b8:") ? CpuTarget.onnx(Path.of(target.substring(7)), 8, 128, 42)
                : CpuTarget.block(BlockConfig.named(target), 42);
        exec = t.executor();
        in = t.inputs();
        out = exec.newOutputs();
    }

    /** One forward; its CPU time on this thread (or wall time), in ns. */
    @Override
    public long getAsLong() {
        long t0 = WALL ? System.nanoTime() : MX.getCurrentThreadCpuTime();
        exec.run(in, out);
        return (WALL ? System.nanoTime() : MX.getCurrentThreadCpuTime()) - t0;
    }
}
