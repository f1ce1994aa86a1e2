package dev.lantern.cuda.nvrtc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cache with a fake compiler standing in for NVRTC: keys, validation, atomic writes. */
class ModuleCacheTest {
    @TempDir
    Path dir;

    /** Deterministic "cubin": random bytes seeded by the source, so tests can check payloads. */
    static final class FakeCompiler implements ModuleCache.Compiler {
        final AtomicInteger calls = new AtomicInteger();
        final String version;
        volatile String lastArch;

        FakeCompiler(String version) {
            this.version = version;
        }

        @Override
        public Result compile(String source, String name, String arch, List<String> options) {
            calls.incrementAndGet();
            lastArch = arch;
            if (source.contains("#error")) {
                return new Result(null, name + ".cu(1): error: this is a planted error");
            }
            return new Result(expectedCubin(source), "");
        }

        @Override
        public String version() {
            return version;
        }
    }

    static byte[] expectedCubin(String source) {
        byte[] b = new byte[4096 + Math.floorMod(source.hashCode(), 512)];
        new SplittableRandom(source.hashCode()).nextBytes(b);
        return b;
    }

    static final KernelSource SRC = new KernelSource("add_one", "extern \"C\" __global__ void add_one(float* x) {}",
            List.of("-lineinfo"), "f32/n=1024");

    ModuleCache cache(FakeCompiler c) {
        return new ModuleCache(dir, c, "sm_90", 13000);
    }

    @Test
    void keyIsStableAcrossInstancesAndPinnedToAGoldenValue() {
        String k1 = cache(new FakeCompiler("nvrtc 13.0")).keyOf(SRC);
        String k2 = new ModuleCache(dir.resolve("elsewhere"), new FakeCompiler("nvrtc 13.0"), "sm_90", 13000).keyOf(SRC);
        assertEquals(k1, k2, "the folder is not part of the key");
        assertEquals(64, k1.length());
        // Golden: the same inputs give this key in every JVM on every machine. Changing the key
        // recipe invalidates every user's cache, so it must be a deliberate edit here too.
        assertEquals(GOLDEN_KEY, k1);
    }

    static final String GOLDEN_KEY = "abee22fd5468bb01b93fa1d2a802f7d19958cc0203802d39d9839aeb35ff0e96";

    @Test
    void everyKeyComponentChangesTheKey() {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        String base = cache(c).keyOf(SRC);
        List<String> variants = List.of(
                new ModuleCache(dir, c, "sm_89", 13000).keyOf(SRC),
                new ModuleCache(dir, c, "sm_90", 13010).keyOf(SRC),
                new ModuleCache(dir, new FakeCompiler("nvrtc 13.1"), "sm_90", 13000).keyOf(SRC),
                cache(c).keyOf(new KernelSource(SRC.name(), SRC.code() + " ", SRC.options(), SRC.specKey())),
                cache(c).keyOf(new KernelSource(SRC.name(), SRC.code(), List.of(), SRC.specKey())),
                cache(c).keyOf(new KernelSource(SRC.name(), SRC.code(), SRC.options(), "bf16/n=1024")),
                // field boundaries matter: moving text between options and spec must not collide
                cache(c).keyOf(new KernelSource(SRC.name(), SRC.code(), List.of("-lineinfof32/n=1024"), "")),
                cache(c).keyOf(new KernelSource(SRC.name(), SRC.code(), SRC.options(), SRC.specKey(), true)));
        for (String v : variants) {
            assertNotEquals(base, v);
        }
        assertEquals(variants.size(), variants.stream().distinct().count());
    }

    @Test
    void archSpecificSourcesAreBuiltForTheATarget() {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        cache(c).get(SRC);
        assertEquals("sm_90", c.lastArch);
        cache(c).get(new KernelSource("wg", "extern \"C\" __global__ void wg() {}", List.of(), "", true));
        assertEquals("sm_90a", c.lastArch, "wgmma kernels need sm_90a");
    }

    @Test
    void aCompileIsTracedAsAnNvrtcSpanAndAHitIsNot() {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        dev.lantern.trace.TraceRecorder rec = new dev.lantern.trace.TraceRecorder();
        try (dev.lantern.trace.Tracing.Installed t = dev.lantern.trace.Tracing.install(rec)) {
            cache(c).get(SRC);
            cache(c).get(SRC); // from disk: no compile, no span
        }
        assertEquals(List.of("nvrtc add_one"), rec.events().stream().map(dev.lantern.trace.TraceEvent::name).toList());
        assertEquals("nvrtc", rec.events().getFirst().category());
        assertEquals(1, c.calls.get());
    }

    @Test
    void compilesAndHitsAreCountedProcessWideForTheMetrics() {
        // compiles_total and compile_cache_hits_total read RuntimeCounters; the tests of one JVM run one at a time
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        long compiles = dev.lantern.trace.RuntimeCounters.compiles();
        long hits = dev.lantern.trace.RuntimeCounters.cacheHits();
        cache(c).get(SRC);
        assertEquals(compiles + 1, dev.lantern.trace.RuntimeCounters.compiles(), "a miss is one compile");
        assertEquals(hits, dev.lantern.trace.RuntimeCounters.cacheHits());
        cache(c).get(SRC);
        new ModuleCache(dir, c, "sm_90", 13000).get(SRC);
        assertEquals(compiles + 1, dev.lantern.trace.RuntimeCounters.compiles(), "hits compile nothing");
        assertEquals(hits + 2, dev.lantern.trace.RuntimeCounters.cacheHits(), "two gets from disk are two hits");
        assertThrows(KernelCompileException.class, () -> cache(c).get(new KernelSource("bad", "#error x", List.of(), "")));
        assertEquals(compiles + 2, dev.lantern.trace.RuntimeCounters.compiles(), "a failed compile ran NVRTC too");
    }

    @Test
    void secondGetIsAHitFromMemoryAndFromAFreshInstance() {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        ModuleCache.Entry first = cache(c).get(SRC);
        assertFalse(first.fromDisk());
        assertArrayEquals(expectedCubin(SRC.code()), first.cubin());

        ModuleCache.Entry again = cache(c).get(SRC);
        assertTrue(again.fromDisk());
        assertArrayEquals(first.cubin(), again.cubin());
        assertEquals(1, c.calls.get());
        assertTrue(Files.isRegularFile(dir.resolve(first.key() + ".cubin")));
    }

    @Test
    void corruptEntryIsDeletedAndRecompiledNeverLoaded() throws Exception {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        ModuleCache cache = cache(c);
        String key = cache.get(SRC).key();
        Path file = cache.entryPath(key);
        byte[] bytes = Files.readAllBytes(file);
        bytes[ModuleCache.HEADER_BYTES + 100] ^= 0x40; // one flipped bit in the payload
        Files.write(file, bytes);

        ModuleCache.Entry e = cache.get(SRC);

        assertFalse(e.fromDisk(), "a corrupt entry must not be served");
        assertArrayEquals(expectedCubin(SRC.code()), e.cubin());
        assertEquals(2, c.calls.get());
        assertEquals(1, cache.discarded());
        assertNull(ModuleCache.validate(Files.readAllBytes(file)), "the rewritten entry is valid");
    }

    @Test
    void truncatedEntriesAreRecompiled() throws Exception {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        ModuleCache cache = cache(c);
        Path file = cache.entryPath(cache.get(SRC).key());
        byte[] whole = Files.readAllBytes(file);
        for (int len : new int[] {0, 7, ModuleCache.HEADER_BYTES - 1, ModuleCache.HEADER_BYTES, whole.length - 1}) {
            Files.write(file, java.util.Arrays.copyOf(whole, len));
            assertTrue(ModuleCache.validate(Files.readAllBytes(file)).startsWith("truncated"), "len " + len);
            ModuleCache.Entry e = cache.get(SRC);
            assertFalse(e.fromDisk(), "len " + len);
            assertArrayEquals(expectedCubin(SRC.code()), e.cubin());
        }
        assertEquals(6, c.calls.get());
        assertEquals(5, cache.discarded());
    }

    @Test
    void foreignFileUnderTheKeyIsRejected() throws Exception {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        ModuleCache cache = cache(c);
        Path file = cache.entryPath(cache.keyOf(SRC));
        Files.createDirectories(dir);
        Files.write(file, "this is not a cubin entry at all, but long enough for a header....".getBytes(
                StandardCharsets.US_ASCII));
        assertEquals("not a Lantern cubin entry (bad magic)", ModuleCache.validate(Files.readAllBytes(file)));
        assertFalse(cache.get(SRC).fromDisk());
        assertEquals(1, cache.discarded());
    }

    @Test
    void writesAreAtomicUnderConcurrencyAndLeaveNoTempFiles() throws Exception {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        // a leftover temp file from a crashed writer must be ignored
        Files.createDirectories(dir);
        Files.write(dir.resolve(cache(c).keyOf(SRC) + ".cubin.123.tmp"), new byte[] {1, 2, 3});
        List<KernelSource> sources = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            sources.add(new KernelSource("k" + i, "// kernel " + i + "\n" + SRC.code()));
        }
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<ModuleCache.Entry>> futures = new ArrayList<>();
            for (int round = 0; round < 4; round++) {
                for (KernelSource s : sources) {
                    // separate instances, as separate JVMs would be
                    futures.add(pool.submit(() -> cache(c).get(s)));
                }
            }
            for (int i = 0; i < futures.size(); i++) {
                ModuleCache.Entry e = futures.get(i).get();
                assertArrayEquals(expectedCubin(sources.get(i % sources.size()).code()), e.cubin());
            }
        } finally {
            pool.shutdown();
        }
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> all = files.toList();
            assertEquals(sources.size() + 1, all.size(), all.toString()); // 8 entries + the planted temp
            for (Path p : all) {
                if (p.toString().endsWith(".cubin")) {
                    assertNull(ModuleCache.validate(Files.readAllBytes(p)), p.toString());
                }
            }
        }
    }

    @Test
    void compileFailureCarriesTheLogAndWritesTheSource() throws Exception {
        FakeCompiler c = new FakeCompiler("nvrtc 13.0");
        KernelSource bad = new KernelSource("broken", "#error planted\nextern \"C\" __global__ void k() {}");
        KernelCompileException e = assertThrows(KernelCompileException.class, () -> cache(c).get(bad));
        assertTrue(e.log().contains("planted error"));
        assertTrue(e.getMessage().contains("planted error"), e.getMessage());
        assertTrue(e.getMessage().contains(e.sourceFile().toString()), e.getMessage());
        assertEquals(bad.code(), Files.readString(e.sourceFile()));
        assertFalse(Files.exists(cache(c).entryPath(cache(c).keyOf(bad))), "no entry for a failed compile");
    }
}
