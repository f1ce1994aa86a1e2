package dev.lantern.cli;

import dev.lantern.tensor.Npy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The figure: {@code lantern run} on a graph that is not a transformer block
 * (examples/mlp-softmax.ir) gives the same result on cpu and cuda, within bf16's tolerance, in
 * every mode on the GPU. The CPU runs the graph in f32 and with {@code --amp bf16}; the GPU with
 * {@code --amp bf16}; the same seed gives both the same weights and inputs.
 */
@Tag("gpu")
class RunCommandGpuTest {
    @TempDir
    Path dir;

    double[] run(String device, String amp, String mode, Path out) {
        MainTest.Run r = MainTest.run("run", Examples.file(dir, "mlp-softmax.ir").toString(), "--device", device, "--amp", amp,
                "--mode", mode, "--seed", "17", "--runs", "3", "--out", out.toString());
        assertEquals(0, r.code(), r.err());
        System.out.print(r.out());
        return Npy.read(out.resolve("p.npy")).toDoubles();
    }

    @ParameterizedTest(name = "cuda {0}")
    @ValueSource(strings = {"eager", "compiled", "graph"})
    void cudaAgreesWithTheCpu(String mode) {
        double[] cpuF32 = run("cpu", "none", "compiled", dir.resolve("cpu-f32"));
        double[] cpuBf16 = run("cpu", "bf16", "compiled", dir.resolve("cpu-bf16"));
        double[] cuda = run("cuda", "bf16", mode, dir.resolve("cuda-" + mode));
        double vsF32 = RunCommandTest.relErr(cuda, cpuF32);
        double vsBf16 = RunCommandTest.relErr(cuda, cpuBf16);
        System.out.printf("run mlp-softmax cuda %s bf16: rel err %.3e vs cpu f32, %.3e vs cpu bf16%n", mode, vsF32, vsBf16);
        assertTrue(vsF32 <= 2e-2, "vs cpu f32: " + vsF32);
        assertTrue(vsBf16 <= 2e-2, "vs cpu bf16: " + vsBf16);
    }
}
