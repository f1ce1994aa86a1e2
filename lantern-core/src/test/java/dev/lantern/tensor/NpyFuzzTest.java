package dev.lantern.tensor;

import com.code_intelligence.jazzer.junit.FuzzTest;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzzes the {@code .npy} reader: any bytes either fail with an {@link NpyException} or give a
 * tensor that the writer turns into a file that reads back to the same dtype, shape and values;
 * nothing else escapes. In CI this runs the regression seeds under src/test/resources;
 * {@code JAZZER_FUZZ=1} fuzzes.
 */
class NpyFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void fuzzRead(byte[] input) {
        Tensor t;
        try {
            t = Npy.read(MemorySegment.ofArray(input), "fuzz");
        } catch (NpyException expected) {
            return;
        }
        Tensor back = Npy.read(MemorySegment.ofArray(Npy.toBytes(t)), "round trip");
        assertEquals(t.dtype(), back.dtype());
        assertEquals(t.shape(), back.shape());
        // compare bits: a NaN read from the fuzzer's bytes must come back as the same NaN
        assertArrayEquals(t.segment().asSlice(0, t.numel() * t.dtype().bytes()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE),
                back.segment().asSlice(0, back.numel() * back.dtype().bytes()).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
    }
}
