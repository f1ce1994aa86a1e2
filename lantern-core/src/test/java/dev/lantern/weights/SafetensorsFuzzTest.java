package dev.lantern.weights;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fuzzes the safetensors reader: any bytes either fail with a {@link SafetensorsException} or
 * give a file whose tensors tile its data exactly and that survives a round trip through
 * {@link SafetensorsWriter} (same names, dtypes, shapes, metadata and bytes); nothing else escapes.
 *
 * <p>An input that starts with {@code '{'} is a header and data split at the first NUL byte
 * ({@code {json}\0data}), framed here with its 8-byte length: so the fuzzer (and a person writing a
 * seed) works on the JSON without having to keep the length in step. Any other input is a whole file.
 * In CI this runs the regression seeds under src/test/resources; {@code JAZZER_FUZZ=1} fuzzes.
 */
class SafetensorsFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void fuzzReader(byte[] input) throws IOException {
        byte[] file = frame(input);
        SafetensorsFile f;
        try {
            f = SafetensorsFile.of(MemorySegment.ofArray(file), "fuzz");
        } catch (SafetensorsException expected) {
            return;
        }
        long dataBytes = file.length - f.header().dataStart();
        long covered = 0;
        SafetensorsWriter w = new SafetensorsWriter();
        f.metadata().forEach(w::metadata);
        for (TensorInfo t : f.tensors()) {
            TensorView v = f.tensor(t.name());
            assertEquals(t.numel() * t.dtype().bytes(), v.data().byteSize());
            covered += t.byteSize();
            w.add(t.name(), t.dtype(), t.shape(), v.data());
        }
        assertEquals(dataBytes, covered);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        w.writeTo(Channels.newChannel(out));
        SafetensorsFile back = SafetensorsFile.of(MemorySegment.ofArray(out.toByteArray()), "round trip");
        assertEquals(f.metadata(), back.metadata());
        assertEquals(f.tensors().size(), back.tensors().size());
        for (TensorInfo t : f.tensors()) {
            TensorInfo u = back.info(t.name());
            assertTrue(u != null, t.name());
            assertEquals(t.dtype(), u.dtype());
            assertArrayEquals(t.shape(), u.shape());
            assertArrayEquals(f.tensor(t.name()).data().toArray(ValueLayout.JAVA_BYTE),
                    back.tensor(t.name()).data().toArray(ValueLayout.JAVA_BYTE));
        }
    }

    /** {@code {json}\0data} becomes {@code [u64 len][json][data]}; anything else is taken as a file. */
    static byte[] frame(byte[] input) {
        if (input.length == 0 || input[0] != '{') {
            return input;
        }
        int nul = 0;
        while (nul < input.length && input[nul] != 0) {
            nul++;
        }
        byte[] data = nul < input.length ? Arrays.copyOfRange(input, nul + 1, input.length) : new byte[0];
        return ByteBuffer.allocate(8 + nul + data.length).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(nul).put(input, 0, nul).put(data).array();
    }
}
