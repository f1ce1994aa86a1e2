package dev.lantern.ir;

import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class GraphHashTest {
    @Test
    void independentOfSsaNames() {
        String a = "graph @g {\n  %x = input {name=\"x\"} : f32[4]\n  %y = gelu(%x) : f32[4]\n  return %y\n}\n";
        String b = "graph @g {\n  %in = input {name=\"x\"} : f32[4]\n  %7 = gelu(%in) : f32[4]\n  return %7\n}\n";
        String c = "graph @g {\n  %x = input {name=\"x\"} : f32[4]\n  %y = relu(%x) : f32[4]\n  return %y\n}\n";
        assertEquals(GraphHash.of(IrParser.parse(a)), GraphHash.of(IrParser.parse(b)));
        assertNotEquals(GraphHash.of(IrParser.parse(a)), GraphHash.of(IrParser.parse(c)));
    }

    /** The same model has the same hash on every JVM and machine: pinned here so that a change shows. */
    @Test
    void pinnedForCpuSmallDecoder() {
        Graph g = TransformerBlock.build(BlockConfig.named("cpu-small"), DType.F32).graph();
        assertEquals("853cc86c790b0d60de8dd86cb75df136e3b1775e21088bcd9490b769f8a2a26c", GraphHash.of(g));
        assertEquals(GraphHash.of(g), GraphHash.of(IrParser.parse(IrPrinter.print(g))));
    }
}
