package dev.lantern.weights;

import dev.lantern.weights.SafetensorsException.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Model folders: one file, or shards with their index, and index paths that try to leave the folder. */
class SafetensorsModelTest {
    @TempDir
    Path root;

    private Path model() throws IOException {
        return Files.createDirectories(root.resolve("model"));
    }

    private static void shard(Path file, String... names) {
        SafetensorsWriter w = new SafetensorsWriter();
        for (int i = 0; i < names.length; i++) {
            w.add(names[i], SafetensorsDType.U8, new long[] {2}, MemorySegment.ofArray(new byte[] {(byte) i, (byte) names[i].length()}));
        }
        w.write(file);
    }

    private static void index(Path folder, String weightMap) throws IOException {
        Files.writeString(folder.resolve(SafetensorsIndex.FILE_NAME),
                "{\"metadata\":{\"total_size\":8},\"weight_map\":{" + weightMap + "}}", StandardCharsets.UTF_8);
    }

    private UnsafePathException escapes(String weightMap, String messagePart) throws IOException {
        Path m = model();
        index(m, weightMap);
        UnsafePathException e = assertThrows(UnsafePathException.class, () -> SafetensorsModel.open(m));
        assertTrue(e.getMessage().contains(messagePart), "'" + e.getMessage() + "' lacks '" + messagePart + "'");
        return e;
    }

    @Test
    void opensOneFile() throws IOException {
        Path m = model();
        shard(m.resolve(SafetensorsModel.SINGLE_FILE), "wte", "wpe");
        try (SafetensorsModel model = SafetensorsModel.open(m)) {
            assertEquals(List.of("wpe", "wte"), model.names());
            assertArrayEquals(new byte[] {0, 3}, model.tensor("wte").data().toArray(ValueLayout.JAVA_BYTE));
        }
    }

    @Test
    void opensShardsThroughTheIndex() throws IOException {
        Path m = model();
        shard(m.resolve("model-00001-of-00002.safetensors"), "a.weight", "b.weight");
        shard(m.resolve("model-00002-of-00002.safetensors"), "c.weight", "unlisted");
        index(m, "\"a.weight\":\"model-00001-of-00002.safetensors\",\"c.weight\":\"model-00002-of-00002.safetensors\","
                + "\"b.weight\":\"model-00001-of-00002.safetensors\"");
        SafetensorsIndex idx = SafetensorsIndex.read(m.resolve(SafetensorsIndex.FILE_NAME));
        assertEquals(8, idx.totalSize());
        assertEquals(2, idx.shards().size());
        try (SafetensorsModel model = SafetensorsModel.open(m)) {
            assertEquals(List.of("a.weight", "c.weight", "b.weight"), model.names());
            assertEquals(2, model.files().size());
            assertArrayEquals(new byte[] {0, 8}, model.tensor("c.weight").data().toArray(ValueLayout.JAVA_BYTE));
            assertArrayEquals(new byte[] {1, 8}, model.tensor("b.weight").data().toArray(ValueLayout.JAVA_BYTE));
            // a tensor a shard holds but the index does not name is not part of the model
            SafetensorsException e = assertThrows(SafetensorsException.class, () -> model.tensor("unlisted"));
            assertEquals(Kind.MISSING_TENSOR, e.kind());
        }
    }

    @Test
    void indexNamingATensorItsShardLacks() throws IOException {
        Path m = model();
        shard(m.resolve("s1.safetensors"), "a");
        index(m, "\"a\":\"s1.safetensors\",\"b\":\"s1.safetensors\"");
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsModel.open(m));
        assertEquals(Kind.MISSING_TENSOR, e.kind());
        assertTrue(e.getMessage().contains("the index puts tensor \"b\" in s1.safetensors, which has no such tensor"), e.getMessage());
    }

    @Test
    void escapingShardPathWithDotDot() throws IOException {
        shard(root.resolve("outside.safetensors"), "a");
        escapes("\"a\":\"../outside.safetensors\"", "shard path \"../outside.safetensors\" has a '..' step");
    }

    @Test
    void dotDotThatComesBackIsStillRefused() throws IOException {
        escapes("\"a\":\"sub/../s.safetensors\"", "has a '..' step");
    }

    @Test
    void absoluteShardPath() throws IOException {
        shard(root.resolve("outside.safetensors"), "a");
        String abs = root.resolve("outside.safetensors").toString();
        escapes("\"a\":\"" + abs + "\"", "is absolute");
    }

    @Test
    void shardLinkLeadingOutOfTheFolder() throws IOException {
        shard(root.resolve("outside.safetensors"), "a");
        Path m = model();
        Files.createSymbolicLink(m.resolve("s1.safetensors"), root.resolve("outside.safetensors"));
        escapes("\"a\":\"s1.safetensors\"", "outside " + m.toRealPath() + " (through a link)");
    }

    @Test
    void folderLinkLeadingOut() throws IOException {
        Path outside = Files.createDirectories(root.resolve("elsewhere"));
        shard(outside.resolve("s1.safetensors"), "a");
        Path m = model();
        Files.createSymbolicLink(m.resolve("sub"), outside);
        escapes("\"a\":\"sub/s1.safetensors\"", "(through a link)");
    }

    @Test
    void linkInsideTheFolderIsFine() throws IOException {
        Path m = model();
        Files.createDirectories(m.resolve("blobs"));
        shard(m.resolve("blobs/abc"), "a");
        Files.createSymbolicLink(m.resolve("s1.safetensors"), m.resolve("blobs/abc"));
        index(m, "\"a\":\"s1.safetensors\"");
        try (SafetensorsModel model = SafetensorsModel.open(m)) {
            assertEquals(List.of("a"), model.names());
        }
    }

    @Test
    void singleFileLinkLeadingOut() throws IOException {
        shard(root.resolve("outside.safetensors"), "a");
        Path m = model();
        Files.createSymbolicLink(m.resolve(SafetensorsModel.SINGLE_FILE), root.resolve("outside.safetensors"));
        assertThrows(UnsafePathException.class, () -> SafetensorsModel.open(m));
    }

    @Test
    void emptyAndNulShardPaths() throws IOException {
        escapes("\"a\":\"\"", "shard path is empty");
        escapes("\"a\":\"s\\u0000.safetensors\"", "contains a NUL character");
    }

    @Test
    void malformedIndexes() throws IOException {
        Path m = model();
        Files.writeString(m.resolve(SafetensorsIndex.FILE_NAME), "{\"weight_map\":[]}");
        assertEquals(Kind.BAD_INDEX, assertThrows(SafetensorsException.class, () -> SafetensorsModel.open(m)).kind());
        Files.writeString(m.resolve(SafetensorsIndex.FILE_NAME), "{\"weight_map\":{\"a\":1}}");
        assertEquals(Kind.BAD_INDEX, assertThrows(SafetensorsException.class, () -> SafetensorsModel.open(m)).kind());
        Files.writeString(m.resolve(SafetensorsIndex.FILE_NAME), "{\"weight_map\":{\"a\":\"x\",\"a\":\"y\"}}");
        assertEquals(Kind.DUPLICATE_NAME, assertThrows(SafetensorsException.class, () -> SafetensorsModel.open(m)).kind());
        Files.writeString(m.resolve(SafetensorsIndex.FILE_NAME), "{\"metadata\":{\"total_size\":-1},\"weight_map\":{}}");
        assertEquals(Kind.BAD_INDEX, assertThrows(SafetensorsException.class, () -> SafetensorsModel.open(m)).kind());
    }

    @Test
    void emptyFolder() throws IOException {
        Path m = model();
        SafetensorsException e = assertThrows(SafetensorsException.class, () -> SafetensorsModel.open(m));
        assertEquals(Kind.IO, e.kind());
    }
}
