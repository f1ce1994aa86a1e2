package dev.lantern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code lantern compile --emit steps|cuda} of the hand-written graphs under examples/ (none a
 * transformer block) against golden files in src/test/resources/compile-golden: the H200's device
 * steps and kernel sources, with no GPU. A change to the lowering shows as a diff here. Regenerate
 * after an intended change with {@code -Dlantern.updateSnapshots=true} and review it.
 */
class CompileGoldenTest {
    static final Path DIR = Path.of("src/test/resources/compile-golden");
    private static final boolean UPDATE = Boolean.getBoolean("lantern.updateSnapshots");

    @TempDir
    Path dir;

    @ParameterizedTest(name = "{0} --emit {1} --amp {2}")
    @CsvSource({
            "mlp-softmax.ir, steps, none", "mlp-softmax.ir, cuda, none",
            "mlp-softmax.ir, steps, bf16", "mlp-softmax.ir, cuda, bf16",
            "residual-mlp-bf16.ir, steps, none", "residual-mlp-bf16.ir, cuda, none",
            "bmm-softmax.ir, steps, none", "bmm-softmax.ir, cuda, none"})
    void matchesGolden(String example, String emit, String amp) throws IOException {
        Path ir = Examples.file(dir, example);
        MainTest.Run r = MainTest.run("compile", ir.toString(), "--emit", emit, "--amp", amp);
        assertEquals(0, r.code(), r.err());
        // the header names the file as a user in the repository's root would
        String text = r.out().replace(ir.toString(), "examples/" + example);
        assertTrue(text.lines().findFirst().orElseThrow().contains("CUDA target H200 (sm_90"), text);
        String name = example.replace(".ir", "") + (amp.equals("none") ? "" : "-" + amp) + "." + (emit.equals("cuda") ? "cu" : emit);
        Path golden = DIR.resolve(name);
        if (UPDATE) {
            Files.createDirectories(DIR);
            Files.writeString(golden, text);
            return;
        }
        assertTrue(Files.exists(golden), "no golden file " + golden.toAbsolutePath() + "; run with -Dlantern.updateSnapshots=true");
        assertEquals(Files.readString(golden), text, "lantern compile " + example + " --emit " + emit + " changed");
    }

    @Test
    void theOtherStagesPrintForTheirTarget() {
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        MainTest.Run irOut = MainTest.run("compile", ir.toString(), "--emit", "ir");
        assertEquals(0, irOut.code(), irOut.err());
        // the optimised IR parses back: fused GEMMs with their epilogues
        dev.lantern.ir.Graph g = dev.lantern.ir.IrParser.parse(irOut.out());
        assertTrue(g.computeNodes().stream().anyMatch(n -> n.op() == dev.lantern.ir.Op.GEMM), irOut.out());
        MainTest.Run kernels = MainTest.run("compile", ir.toString(), "--emit", "kernels", "--device", "cuda");
        assertEquals(0, kernels.code(), kernels.err());
        assertTrue(kernels.out().contains("target cuda"), kernels.out());
        assertTrue(kernels.out().contains("# 3 kernels"), kernels.out());
        MainTest.Run plan = MainTest.run("compile", ir.toString(), "--emit", "plan");
        assertEquals(0, plan.code(), plan.err());
        assertTrue(plan.out().contains("# memory plan: "), plan.out());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            no emit          | IR                              | 2 | lantern compile: --emit takes ir, kernels, plan, cuda, steps
            bad emit         | IR --emit ptx                   | 2 | found 'ptx'
            steps on the cpu | IR --emit steps --device cpu    | 2 | it takes --device cuda
            bad device       | IR --emit ir --device tpu       | 2 | unknown device 'tpu'
            no file          | --emit ir                       | 2 | expected one FILE.ir
            missing file     | /no/such.ir --emit ir           | 1 | no such file: /no/such.ir
            """)
    void badCommandLines(String what, String argLine, int code, String message) {
        Path ir = Examples.file(dir, "mlp-softmax.ir");
        String[] args = ("compile " + argLine.replace("IR", ir.toString())).split(" ");
        MainTest.Run r = MainTest.run(args);
        assertEquals(code, r.code(), () -> what + ": " + r.err());
        assertTrue(r.err().contains(message), () -> what + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }
}
