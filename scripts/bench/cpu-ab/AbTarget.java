import dev.lantern.bench.cpu.CpuTarget;
import dev.lantern.cpu.Gemm;
import dev.lantern.cpu.GemmEpilogue;
import dev.lantern.cpu.View;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * One build's forward (loaded once per build by {@link Ab}): a block config name, gpt2:MODEL.onnx (gpt2b8:MODEL.onnx)
 * at batch 1 (8), seq 128, or gemm:MxKxN, one f32 Gemm.matmul of two row-major inputs (B not prepacked, as in MatmulBench).
 */
public class AbTarget implements LongSupplier {
    private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    private static final boolean WALL = System.getProperty("ab.wall") != null;
    private final Runnable forward;

    public AbTarget(String target) {
        if (target.startsWith("gemm:")) {
            String[] d = target.substring(5).split("x");
            int m = Integer.parseInt(d[0]), k = Integer.parseInt(d[1]), n = Integer.parseInt(d[2]);
            Tensor a = Philox.normal(Tensor.allocate(DType.F32, Shape.of(m, k)), Philox.key(1, "A"), 1f);
            Tensor b = Philox.normal(Tensor.allocate(DType.F32, Shape.of(k, n)), Philox.key(1, "B"), 1f);
            Tensor c = Tensor.allocate(DType.F32, Shape.of(m, n));
            forward = () -> Gemm.matmul(View.of(a), View.of(b), View.of(c), false, false, GemmEpilogue.NONE);
            return;
        }
        CpuTarget t = target.startsWith("gpt2:") ? CpuTarget.onnx(Path.of(target.substring(5)), 1, 128, 42)
                : target.startsWith("gpt2b8:") ? CpuTarget.onnx(Path.of(target.substring(7)), 8, 128, 42)
                : CpuTarget.block(BlockConfig.named(target), 42);
        CompiledCpuExecutor exec = t.executor();
        Map<String, Tensor> in = t.inputs();
        Map<String, Tensor> out = exec.newOutputs();
        forward = () -> exec.run(in, out);
    }

    /** One forward; its CPU time on this thread (or wall time), in ns. */
    @Override
    public long getAsLong() {
        long t0 = WALL ? System.nanoTime() : MX.getCurrentThreadCpuTime();
        forward.run();
        return (WALL ? System.nanoTime() : MX.getCurrentThreadCpuTime()) - t0;
    }
}
