package dev.lantern.passes;

import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.ir.LanternException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A pass given a graph it cannot handle fails with its own name and the node in text syntax. */
class PassErrorTest {
    @Test
    void partitionRejectsIntegerKernels() {
        Graph g = IrParser.parse("""
                graph @ints {
                  %a = input {name="a"} : i32[4]
                  %b = input {name="b"} : i32[4]
                  %0 = add(%a, %b) : i32[4]
                  return %0
                }
                """);
        PassException e = assertThrows(PassException.class, () -> Passes.byName("partition").run(g));
        assertEquals("partition", e.pass());
        assertEquals("%0 = add(%a, %b) : i32[4]", e.node());
        assertTrue(e.getMessage().startsWith("partition: %0 = add(%a, %b) : i32[4]: "), e.getMessage());
    }

    @Test
    void layoutNormalizeRejectsReshapeOfStridedView() {
        Graph g = IrParser.parse("""
                graph @bad_view {
                  %x = input {name="x"} : f32[4,8]
                  %0 = permute(%x) {perm=[1,0]} : f32[8,4]@[1,8]
                  %1 = reshape(%0) {shape=[32]} : f32[32]
                  return %1
                }
                """);
        PassException e = assertThrows(PassException.class, () -> Passes.byName("layout-normalize").run(g));
        assertEquals("layout-normalize", e.pass());
        assertEquals("%1 = reshape(%0) {shape=[32]} : f32[32]", e.node());
    }

    @Test
    void everyPassVerifiesItsInputAndNamesItself() {
        Graph bad = IrParser.parse("""
                graph @bad_type {
                  %x = input {name="x"} : f32[4,8]
                  %0 = exp(%x) : f32[4,9]
                  return %0
                }
                """);
        for (String name : List.of("canonicalize", "layout-normalize", "fuse-attention", "autocast", "fuse-gemm", "fuse-norm",
                "fuse-elementwise", "fuse", "partition", "plan-memory", "verify")) {
            LanternException e = assertThrows(LanternException.class, () -> Passes.byName(name).run(bad), name);
            assertTrue(e.getMessage().startsWith(name + ": %0 = exp(%x) : f32[4,9]: "), e.getMessage());
        }
    }

    @Test
    void unknownPassListsTheKnownOnes() {
        LanternException e = assertThrows(LanternException.class, () -> Passes.byName("fuse-everything"));
        assertTrue(e.getMessage().contains("unknown pass 'fuse-everything'") && e.getMessage().contains("canonicalize"), e.getMessage());
    }

    @Test
    void aCyclingRuleTableIsAnErrorNotAHang() {
        Graph g = IrParser.parse("""
                graph @cycle {
                  %x = input {name="x"} : f32[4]
                  %0 = neg(%x) : f32[4]
                  return %0
                }
                """);
        Rule flip = Rule.of("flip", (n, cx) -> n.op() == dev.lantern.ir.Op.NEG
                ? Rule.Rewrite.to(n.withAttrs(n.attrs().with("x", n.attrs().getLong("x", 0) + 1))) : null);
        PassException e = assertThrows(PassException.class, () -> RewriteEngine.run("test", g, List.of(flip)));
        assertTrue(e.getMessage().contains("fixed point"), e.getMessage());
    }

    @Test
    void aRuleThatChangesTheTypeIsCaught() {
        Graph g = IrParser.parse("""
                graph @retype {
                  %x = input {name="x"} : f32[4]
                  %0 = neg(%x) : f32[4]
                  return %0
                }
                """);
        Rule bad = Rule.of("bad", (n, cx) -> n.op() == dev.lantern.ir.Op.NEG
                ? Rule.Rewrite.to(n.withType(n.type().withDtype(dev.lantern.ir.DType.BF16))) : null);
        PassException e = assertThrows(PassException.class, () -> RewriteEngine.run("test", g, List.of(bad)));
        assertTrue(e.getMessage().startsWith("test: %0 = neg(%x) : f32[4]: rule bad"), e.getMessage());
    }
}
