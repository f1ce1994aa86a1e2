package dev.lantern.onnx;

import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.engine.CompileOptions;
import dev.lantern.ir.DType;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link OnnxModel}: the file read once, one import and compilation per concrete shape and options, the
 * same program handed back on a second call, and the results of each compiled shape against float64.
 */
class OnnxModelTest {
    @TempDir
    Path dir;

    private Path write(String name, byte[] bytes) throws IOException {
        return Files.write(dir.resolve(name), bytes);
    }

    @Test
    void theCacheKeepsTheMostRecentShapesUpToItsLimit() throws IOException {
        OnnxModel model = OnnxModel.open(write("embedding.onnx", OnnxGatherTest.embedding(41).toByteArray()), CompileOptions.defaults());
        assertEquals(OnnxModel.DEFAULT_CACHE_LIMIT, model.cacheLimit());
        model.limitCache(3);
        for (int s = 1; s <= 5; s++) {
            model.compile(Map.of("ids", new long[] {1, s}));
        }
        assertEquals(3, model.cached(), "the two oldest shapes were dropped");
        assertEquals(5, model.compilations());
        model.compile(Map.of("ids", new long[] {1, 5}));
        assertEquals(5, model.compilations(), "a recent shape is still compiled");
        model.compile(Map.of("ids", new long[] {1, 1}));
        assertEquals(6, model.compilations(), "an evicted shape compiles again");
        assertEquals(3, model.cached());
        model.limitCache(1);
        assertEquals(1, model.cached());
        assertThrows(dev.lantern.ir.LanternException.class, () -> model.limitCache(0));
    }

    @Test
    void aSecondCallWithTheSameShapeCompilesNothing() throws IOException {
        Path file = write("embedding.onnx", OnnxGatherTest.embedding(41).toByteArray());
        OnnxModel model = OnnxModel.open(file, CompileOptions.defaults());
        Files.delete(file); // read once, at open: nothing below touches the file

        OnnxModel.Compiled a = model.compile(Map.of("ids", new long[] {2, 7}));
        assertEquals(1, model.compilations());
        OnnxModel.Compiled again = model.compile(Map.of("ids", new long[] {2, 7}));
        assertSame(a, again);
        assertSame(a.program(), again.program());
        assertEquals(1, model.compilations(), "a cache hit compiles nothing");

        OnnxModel.Compiled b = model.compile(Map.of("ids", new long[] {1, 16}));
        assertNotSame(a.program(), b.program());
        assertEquals(2, model.compilations());
        assertArrayEquals(new long[] {1, 16}, b.shapes().get("ids"));

        // the options are part of the key
        CompileOptions bf16 = CompileOptions.defaults().withAmp(CompileOptions.Amp.BF16);
        OnnxModel.Compiled c = model.compile(Map.of("ids", new long[] {2, 7}), bf16);
        assertNotSame(a.program(), c.program());
        assertEquals(CompileOptions.Amp.BF16, c.program().options().amp());
        assertEquals(3, model.compilations());
        assertSame(c, model.compile(Map.of("ids", new long[] {2, 7}), bf16));
        assertSame(a, model.compile(Map.of("ids", new long[] {2, 7})));
        assertEquals(3, model.compilations());
        assertEquals(3, model.cached());

        model.clear();
        assertNotSame(a, model.compile(Map.of("ids", new long[] {2, 7})));
        assertEquals(4, model.compilations());
    }

    @Test
    void eachCompiledShapeMatchesFloat64() {
        OnnxModel model = OnnxModel.of(OnnxGatherTest.embedding(42), CompileOptions.defaults());
        for (int[] shape : new int[][] {{2, 7}, {1, 16}, {2, 7}}) {
            OnnxModel.Compiled c = model.compile(Map.of("ids", new long[] {shape[0], shape[1]}));
            Tensor ids = OnnxGatherTest.ids(DType.I64, 7 + shape[1], 37, shape);
            double[] got;
            try (Session s = c.program().load(Device.cpu(), c.weights(), RunMode.COMPILED)) {
                got = s.run(Map.of("ids", ids)).get(c.program().outputNames().getFirst()).toDoubles();
            }
            ImportedModel direct = OnnxImporter.importModel(OnnxGatherTest.embedding(42), Map.of("ids", new long[] {shape[0], shape[1]}));
            double[] ref = Runs.reference(direct, Map.of("ids", ids));
            assertTrue(Runs.relErr(got, ref) <= 1e-5, "rel err " + Runs.relErr(got, ref));
            assertEquals(shape[0] * shape[1] * 11, got.length);
        }
        assertEquals(2, model.compilations());
    }

    @Test
    void aStaticInputLeftOutAndGivenIsOneEntry() {
        OnnxModel model = OnnxModel.of(OnnxGatherTest.alongAxis1(), CompileOptions.defaults());
        OnnxModel.Compiled a = model.compile(Map.of());
        assertSame(a, model.compile(Map.of("x", new long[] {2, 9, 5}, "ids", new long[] {4})));
        assertEquals(1, model.compilations());
        assertArrayEquals(new long[] {2, 9, 5}, a.shapes().get("x"));
    }

    @Test
    void inputsDescribeTheDeclaredTypesAndSymbols() {
        OnnxModel model = OnnxModel.of(OnnxGatherTest.embedding(1), CompileOptions.defaults());
        assertEquals(1, model.inputs().size());
        OnnxInput ids = model.inputs().getFirst();
        assertEquals("ids int64[batch,seq]", ids.toString());
        assertEquals(DType.I64, ids.dtype());
        assertEquals(List.of("batch", "seq"), ids.dims().stream().map(OnnxInput.Dim::symbol).toList());
        assertTrue(!ids.isStatic() && ids.staticShape() == null);
        assertEquals(List.of("y"), model.outputNames());
        assertEquals(13, model.opset());
        assertEquals(37, model.embeddingRows("ids").orElseThrow());
        assertTrue(model.embeddingRows("y").isEmpty());

        OnnxModel mlp = OnnxModel.of(TestModels.mlp(1), CompileOptions.defaults());
        assertEquals("x float[batch,16]", mlp.inputs().getFirst().toString());
        assertTrue(mlp.embeddingRows("x").isEmpty());
    }

    @Test
    void failuresAreTypedAndNotCached() {
        OnnxModel model = OnnxModel.of(OnnxGatherTest.embedding(3), CompileOptions.defaults());
        OnnxImportException e = assertThrows(OnnxImportException.class, () -> model.compile(Map.of()));
        assertTrue(e.getMessage().contains("input 'ids' has symbolic dim 0 ('batch'): give its shape"), e.getMessage());
        assertEquals(0, model.cached());
        e = assertThrows(OnnxImportException.class, () -> model.compile(Map.of("ids", new long[] {2, 7}, "nope", new long[] {1})));
        assertTrue(e.getMessage().contains("'nope', which is not an input"), e.getMessage());
        assertEquals(0, model.cached());
        assertEquals(2, model.compilations());
    }

    @Test
    void openRefusesMissingAndMalformedFilesWithTheirNames() throws IOException {
        Path missing = dir.resolve("missing.onnx");
        assertEquals("no such file: " + missing,
                assertThrows(OnnxImportException.class, () -> OnnxModel.open(missing, CompileOptions.defaults())).getMessage());
        Path bad = write("bad.onnx", new byte[] {0x08, (byte) 0x80}); // a varint cut short
        String msg = assertThrows(OnnxImportException.class, () -> OnnxModel.open(bad, CompileOptions.defaults())).getMessage();
        assertTrue(msg.startsWith(bad + ": malformed ONNX model (2 bytes)"), msg);
    }

    @Test
    void concurrentCallsForOneShapeCompileOnce() throws Exception {
        OnnxModel model = OnnxModel.of(TestModels.mlp(9), CompileOptions.defaults());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<OnnxModel.Compiled>> calls = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                calls.add(() -> model.compile(Map.of("x", new long[] {3, 16})));
            }
            List<Future<OnnxModel.Compiled>> results = pool.invokeAll(calls);
            for (Future<OnnxModel.Compiled> f : results) {
                assertSame(results.getFirst().get(), f.get());
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, model.compilations());
    }
}
