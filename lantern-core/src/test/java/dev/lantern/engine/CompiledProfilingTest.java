package dev.lantern.engine;

import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.LanternException;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The compiled executor's per-kernel profile (issue 15): off by default, changes no output, and accounts for the forward's time. */
class CompiledProfilingTest {
    private static final BlockConfig SMALL = new BlockConfig("profiled", 2, 64, 128, 4, 512, true);

    @Test
    void offByDefaultAndOutputsBitIdenticalEitherWay() {
        Model m = TransformerBlock.build(SMALL, DType.F32);
        long seed = 1515;
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), seed);
        String out = m.graph().outputs().getFirst();
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(m.parameters(seed))) {
            assertFalse(exec.profiling());
            // warm: the JIT's first compilations may round exp differently from the interpreter (CompiledExecutorTest)
            for (int i = 0; i < 40; i++) {
                exec.run(inputs);
            }
            int[] off = bits(exec.run(inputs).get(out));
            assertEquals(0, exec.profiledForwards(), "nothing is profiled while the profile is off");
            assertTrue(Arrays.stream(exec.kernelNanos()).allMatch(t -> t == 0), "no kernel time recorded while off");
            assertEquals(0, exec.outputCopyNanos(), "no copy time recorded while off");
            exec.profiling(true);
            int[] on = bits(exec.run(inputs).get(out));
            exec.profiling(false);
            int[] offAgain = bits(exec.run(inputs).get(out));
            assertTrue(Arrays.stream(off).anyMatch(v -> Float.intBitsToFloat(v) != 0f), "the block's output is not all zeros");
            assertArrayEquals(off, on, "profiling on changes no output bit");
            assertArrayEquals(off, offAgain, "profiling off again changes no output bit");
            assertEquals(1, exec.profiledForwards(), "only the forward run while on counts");
        }
    }

    @Test
    void kernelTimesSumToAboutTheForward() {
        Model m = TransformerBlock.build(SMALL, DType.F32);
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), 7);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(m.parameters(7))) {
            for (int i = 0; i < 40; i++) {
                exec.run(inputs);
            }
            // the best of a few rounds: on a shared machine one round may be preempted anywhere
            double best = 0;
            for (int round = 0; round < 5 && best < 0.5; round++) {
                int runs = 20;
                exec.profiling(true);
                long t0 = System.nanoTime();
                for (int i = 0; i < runs; i++) {
                    exec.run(inputs);
                }
                long wall = System.nanoTime() - t0;
                exec.profiling(false);
                assertEquals(runs, exec.profiledForwards());
                long[] k = exec.kernelNanos();
                assertEquals(c.kernels().size(), k.length);
                assertTrue(Arrays.stream(k).allMatch(t -> t > 0), "every kernel of the block ran and took time: " + Arrays.toString(k));
                long sum = Arrays.stream(k).sum();
                long copies = exec.outputCopyNanos();
                assertTrue(copies > 0, "the output copies took time");
                assertTrue(sum + copies <= wall, "kernel times " + sum + " ns and copies " + copies + " ns lie within the forwards' " + wall + " ns");
                best = Math.max(best, (double) sum / wall);
            }
            // the rest is the executor's own work: input views, arena views, output copies
            assertTrue(best >= 0.5, "the kernels account for most of the forward: " + best);
        }
    }

    @Test
    void turningOnClearsTheSums() {
        Model m = TransformerBlock.build(SMALL, DType.F32);
        CompiledModel c = Compiler.compile(m.graph(), CompileOptions.defaults());
        Map<String, Tensor> inputs = Feeds.inputs(m.graph(), 3);
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(c).bind(m.parameters(3))) {
            exec.profiling(true);
            exec.run(inputs);
            exec.run(inputs);
            assertEquals(2, exec.profiledForwards());
            exec.profiling(false);
            exec.profiling(true);
            assertEquals(0, exec.profiledForwards());
            assertTrue(Arrays.stream(exec.kernelNanos()).allMatch(t -> t == 0));
            exec.close();
            assertThrows(LanternException.class, () -> exec.run(inputs));
        }
    }

    private static int[] bits(Tensor t) {
        int[] f = new int[Math.toIntExact(t.numel())];
        for (int i = 0; i < f.length; i++) {
            f[i] = Float.floatToRawIntBits(t.get(i));
        }
        return f;
    }
}
