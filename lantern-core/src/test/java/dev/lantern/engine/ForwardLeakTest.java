package dev.lantern.engine;

import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.LanternException;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CPU executor's memory and thread hygiene, on odd block shapes of the random-shape space:
 * forwards and whole executors leave no native memory or threads behind, and executors of
 * different models running at once on different threads (sharing the backend's one worker pool
 * and its thread-local scratch) each still match the float64 reference.
 */
class ForwardLeakTest {
    static final BlockConfig DEC = new BlockConfig("odd-dec", 3, 37, 3 * 80, 3, 129, true);
    static final BlockConfig ENC = new BlockConfig("odd-enc", 2, 53, 96, 1, 1, false);

    @Test
    void forwardsAndExecutorsLeaveNoNativeMemoryOrThreads() throws InterruptedException {
        Model m = TransformerBlock.build(DEC, DType.F32);
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16));
        Map<String, Tensor> params = m.parameters(3);
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), 3);
        long outBytes = 4L * DEC.batch() * DEC.seq() * DEC.hidden();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(params)) {
            for (int i = 0; i < 5; i++) {
                exec.run(inputs);
            }
            long before = settledDirectBytes(Long.MAX_VALUE);
            int threads = Thread.activeCount();
            for (int i = 0; i < 300; i++) {
                exec.run(inputs);
            }
            // 300 forwards each keeping even one output (outBytes) would hold 300 · outBytes
            long after = settledDirectBytes(before + 8 * outBytes);
            assertTrue(after <= before + 8 * outBytes, "native memory grew over 300 forwards: " + before + " -> " + after + " B");
            assertTrue(Thread.activeCount() <= threads, "threads grew over 300 forwards: " + threads + " -> " + Thread.activeCount());
        }
        long before = settledDirectBytes(Long.MAX_VALUE);
        for (int i = 0; i < 50; i++) {
            try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(params)) {
                exec.run(inputs);
            }
        }
        long arena = c.plan().arenaBytes();
        long after = settledDirectBytes(before + arena);
        assertTrue(after <= before + arena, "50 closed executors (arena " + arena + " B each) left " + (after - before) + " B behind");
    }

    @Test
    void closedOrBusyExecutorRefusesWithTypedError() {
        Model m = TransformerBlock.build(ENC, DType.F32);
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), 5);
        CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(m.parameters(5));
        // a second forward while one is running (here re-entered from the input lookup, deterministically)
        LanternException[] inner = {null};
        Map<String, Tensor> reentering = new HashMap<>(inputs) {
            @Override
            public Tensor get(Object key) {
                if (inner[0] == null) {
                    inner[0] = assertThrows(LanternException.class, () -> exec.run(inputs));
                }
                return super.get(key);
            }
        };
        exec.run(reentering);
        assertTrue(inner[0] != null && inner[0].getMessage().contains("already running a forward"), String.valueOf(inner[0]));
        exec.run(inputs); // the refusal left the executor usable
        exec.close();
        exec.close(); // twice is harmless
        LanternException e = assertThrows(LanternException.class, () -> exec.run(inputs));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void executorsOnTwoThreadsAtOnceMatchTheReference() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<Double> a = pool.submit(() -> worstOf(DEC, CompileOptions.Amp.NONE, 11));
            Future<Double> b = pool.submit(() -> worstOf(ENC, CompileOptions.Amp.NONE, 12));
            assertTrue(a.get() <= 1e-5, "decoder on one thread while the encoder runs on another: " + a.get());
            assertTrue(b.get() <= 1e-5, "encoder on one thread while the decoder runs on another: " + b.get());
        } finally {
            pool.shutdownNow();
        }
    }

    /** The worst relative error over 30 poisoned forwards of {@code cfg} against the float64 reference. */
    private static double worstOf(BlockConfig cfg, CompileOptions.Amp amp, long seed) {
        Model m = TransformerBlock.build(cfg, DType.F32);
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults().withAmp(amp));
        Map<String, Tensor> params = m.parameters(seed);
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), seed);
        Map<String, Tensor> all = new HashMap<>(params);
        all.putAll(inputs);
        String out = m.graph().outputs().getFirst();
        double[] ref = ReferenceInterpreter.run(m.graph(), all).get(out).data();
        double worst = 0;
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(params)) {
            for (int i = 0; i < 30; i++) {
                exec.poisonArena();
                Tensor y = exec.run(inputs).get(out);
                assertEquals(ref.length, y.numel());
                worst = Math.max(worst, RandomShapeBlockTest.relErr(y, ref));
            }
        }
        return worst;
    }

    /**
     * Native ("direct") memory in use once garbage collection has freed what it can: tensors are
     * {@code Arena.ofAuto} segments, freed by a cleaner after GC, so this collects until the figure
     * is at most {@code target} or stops falling.
     */
    static long settledDirectBytes(long target) throws InterruptedException {
        BufferPoolMXBean direct = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(p -> p.getName().equals("direct")).findFirst().orElseThrow();
        long last = Long.MAX_VALUE;
        for (int i = 0; i < 40; i++) {
            System.gc();
            Thread.sleep(25);
            long now = direct.getMemoryUsed();
            if (now <= target || i >= 5 && now >= last) {
                return now;
            }
            last = now;
        }
        return direct.getMemoryUsed();
    }
}
