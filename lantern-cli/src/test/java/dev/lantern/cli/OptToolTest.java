package dev.lantern.cli;

import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.IrPrinter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OptToolTest {
    @TempDir
    Path dir;

    record Result(int code, String out, String err) {}

    static Result opt(String... args) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int code = OptTool.run(args, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        return new Result(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    Path block() throws IOException {
        Path f = dir.resolve("block.ir");
        Files.writeString(f, IrPrinter.print(TransformerBlock.build(BlockConfig.named("cpu-small"), DType.F32).graph()));
        return f;
    }

    @Test
    void noPassesPrintsTheFileBack() throws IOException {
        Path f = block();
        Result r = opt(f.toString());
        assertEquals(0, r.code(), r.err());
        assertEquals(Files.readString(f), r.out());
    }

    @Test
    void standardPipelinePrintsFusedIrKernelsAndPlanAsValidIr() throws IOException {
        Result r = opt(block().toString(), "--passes", "standard");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("attention(") && r.out().contains("# memory plan:"), r.out());
        IrParser.parse(r.out()); // the dump lines are comments
    }

    @Test
    void namedPassesAndDumpAfterEach() throws IOException {
        Result r = opt(block().toString(), "--passes", "canonicalize,layout-normalize,fuse-attention,autocast,fuse,partition", "--dump-after-each");
        assertEquals(0, r.code(), r.err());
        for (String p : new String[] {"canonicalize", "layout-normalize", "fuse-attention", "autocast", "fuse", "partition"}) {
            assertTrue(r.out().contains("# ----- after " + p + ":"), p);
        }
        assertTrue(r.out().contains("bf16"), "autocast shows in the dump");
        assertTrue(r.out().contains("# 9 kernels"), r.out());
    }

    @Test
    void errorsAreOneLineWithExitOne() throws IOException {
        Path bad = dir.resolve("bad.ir");
        Files.writeString(bad, "graph @g {\n  %x = input {name=\"x\"} : f32[4]\n  %0 = frobnicate(%x) : f32[4]\n  return %0\n}\n");
        Result r = opt(bad.toString());
        assertEquals(1, r.code());
        assertEquals("lantern opt: 3:8: unknown op 'frobnicate'\n", r.err());

        Result missing = opt(dir.resolve("nope.ir").toString());
        assertEquals(1, missing.code());
        assertTrue(missing.err().startsWith("lantern opt: no such file: ") && missing.err().lines().count() == 1, missing.err());

        Result unknown = opt(block().toString(), "--passes", "fuse-everything");
        assertEquals(2, unknown.code(), "an unknown pass is a bad command line");
        assertEquals(1, unknown.err().lines().count(), unknown.err());

        Result verbose = opt(bad.toString(), "--verbose");
        assertEquals(1, verbose.code());
        assertTrue(verbose.err().lines().count() > 2 && verbose.err().contains("at dev.lantern"), verbose.err());
    }

    @Test
    void passErrorsNameThePassAndNode() throws IOException {
        Path ints = dir.resolve("ints.ir");
        Files.writeString(ints, "graph @g {\n  %a = input {name=\"a\"} : i32[4]\n  %0 = add(%a, %a) : i32[4]\n  return %0\n}\n");
        Result r = opt(ints.toString(), "--passes", "partition");
        assertEquals(1, r.code());
        assertTrue(r.err().startsWith("lantern opt: partition: %0 = add(%a, %a) : i32[4]: "), r.err());
    }

    @Test
    void listsPasses() {
        Result r = opt("--passes", "list");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("fuse-attention") && r.out().contains("plan-memory"), r.out());
    }
}
