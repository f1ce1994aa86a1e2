package dev.lantern.kernel;

import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.GraphHash;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class KernelKeyTest {
    static KernelKey key(String dtype, int tile, String eps) {
        TreeMap<String, String> spec = new TreeMap<>();
        spec.put("eps", eps);
        spec.put("D", "256");
        return new KernelKey("cpu-amd64-v256", List.of(dtype, dtype), List.of("contiguous", "contiguous"),
                Tile.of("rows", 1, "cols", tile), spec, "abc", new TreeMap<>(java.util.Map.of("jdk", "25")));
    }

    @Test
    void hashIsSha256OfACanonicalLineAndEveryFieldCounts() {
        KernelKey k = key("f32", 256, "1e-6");
        assertEquals("arch=cpu-amd64-v256;dtypes=[f32, f32];layouts=[contiguous, contiguous];tile=rows=1 cols=256;"
                + "spec={D=256, eps=1e-6};source=abc;compilers={jdk=25}", k.canonical());
        assertEquals(GraphHash.sha256(k.canonical()), k.hash());
        assertEquals(k.hash(), key("f32", 256, "1e-6").hash());
        assertNotEquals(k.hash(), key("bf16", 256, "1e-6").hash());
        assertNotEquals(k.hash(), key("f32", 128, "1e-6").hash());
        assertNotEquals(k.hash(), key("f32", 256, "1e-5").hash());
    }

    @Test
    void optionsHashIgnoresDumpingButNotAmp() {
        CompileOptions o = CompileOptions.defaults();
        assertEquals(o.hash(), o.withDumpAfterEach(true).hash());
        assertNotEquals(o.hash(), o.withAmp(CompileOptions.Amp.BF16).hash());
        assertEquals(CompileOptions.Amp.F16, CompileOptions.Amp.parse("f16"));
    }
}
