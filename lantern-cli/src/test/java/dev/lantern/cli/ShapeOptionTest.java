package dev.lantern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** {@code demo --shape} and {@code bench macro --shape}: a block of any size instead of a named config. */
class ShapeOptionTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource({"'1,16,64,2,128', '1,16,64,2,128,decoder'", "'2,8,32,4,96,encoder', '2,8,32,4,96,encoder'"})
    void demoRunsAnyShapeOnTheCpu(String shape, String name) {
        MainTest.Run r = MainTest.run("demo", "--device", "cpu", "--shape", shape, "--json", "--runs", "1");
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().contains("\"config\": \"" + name + "\""), r.out());
        String[] f = shape.split(",");
        assertTrue(r.out().contains("\"shape\": \"" + f[0] + "x" + f[1] + "x" + f[2] + "\""), r.out());
        Matcher m = Pattern.compile("\"rel_err\": ([-0-9.Ee+]+)").matcher(r.out());
        assertTrue(m.find(), r.out());
        double e = Double.parseDouble(m.group(1));
        assertTrue(e > 0 && e <= 1e-5, "against the float64 reference: " + e);
    }

    @Test
    void theShapeChangesTheGraph() {
        MainTest.Run a = MainTest.run("demo", "--device", "cpu", "--shape", "1,16,64,2,128", "--json", "--runs", "1");
        MainTest.Run b = MainTest.run("demo", "--device", "cpu", "--shape", "1,16,64,2,128,encoder", "--json", "--runs", "1");
        assertEquals(0, a.code(), a.err());
        assertEquals(0, b.code(), b.err());
        Pattern hash = Pattern.compile("\"graph_hash\": \"([0-9a-f]+)\"");
        Matcher ma = hash.matcher(a.out());
        Matcher mb = hash.matcher(b.out());
        assertTrue(ma.find() && mb.find());
        assertTrue(!ma.group(1).equals(mb.group(1)), "a decoder and an encoder of one size differ");
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            both                 | demo --config cpu-small --shape 1,16,64,2,128 | lantern demo: --config and --shape both name the block
            bad shape            | demo --shape 1,16,64                          | lantern demo: bad block shape '1,16,64': 3 fields
            heads do not divide  | demo --shape 1,16,64,3,128                    | lantern demo: bad block shape '1,16,64,3,128': hidden 64 must divide into 3 heads
            bench bad shape      | bench macro --shape 1,16,x,2,128              | lantern bench: bad block shape
            bench both           | bench macro --config decoder --shape 1,16,64,2,128 | lantern bench: --config and --shape both
            bench micro shape    | bench micro --shape 1,16,64,2,128             | lantern bench: --shape applies to bench macro only
            """)
    void badShapesAreBadCommandLines(String what, String argLine, String message) {
        MainTest.Run r = MainTest.run(argLine.split(" "));
        assertEquals(2, r.code(), () -> what + ": " + r.err());
        assertTrue(r.err().startsWith(message), () -> what + ": " + r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    @Test
    void benchMacroTakesAShapeAndThenNeedsAGpu() {
        assumeTrue(dev.lantern.cuda.driver.CudaDevice.count() == 0, "a GPU is present: the bench would run");
        MainTest.Run r = MainTest.run("bench", "macro", "--shape", "1,16,64,2,128");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("lantern bench: no CUDA device"), r.err());
    }
}
