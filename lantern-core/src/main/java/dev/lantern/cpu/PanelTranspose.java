package dev.lantern.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static dev.lantern.cpu.GemmKernel.MR;

/**
 * Eight f32 rows read straight from their tensor into one packed 8-row A panel ({@link GemmKernel#PACKED_A}:
 * A[r, p] at {@code 8·p + r}), sixteen columns at a time: eight 512-bit row loads, three rounds of
 * two-vector permutes (rows paired, then pairs, then quadruples: 24 {@code selectFrom}s, vpermt2ps on
 * AVX-512), eight stores. {@link GemmPacking#packA} otherwise copies the rows into a scratch block
 * and gathers each column of eight: 0.12 against 0.16 ns an element for the interleave alone (one
 * core, rows in L1, 2026-12-04), and no row copy before it.
 */
final class PanelTranspose {
    private PanelTranspose() {}

    /** Whether this path runs: 8-row panels of 16-lane (512-bit) vectors. */
    static final boolean AVAILABLE = CpuConfig.VECTOR && MR == 8 && FloatVector.SPECIES_PREFERRED.length() == 16;

    private static final VectorSpecies<Float> F = FloatVector.SPECIES_512;
    private static final ValueLayout.OfFloat FL = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    // selectFrom indices (lanes 0..15 pick the first vector, 16..31 the second), for units of 1, 2 and 4
    // floats: lo interleaves the first halves of the two vectors' units, hi the second halves
    private static final FloatVector LO1 = index(1, false);
    private static final FloatVector HI1 = index(1, true);
    private static final FloatVector LO2 = index(2, false);
    private static final FloatVector HI2 = index(2, true);
    private static final FloatVector LO4 = index(4, false);
    private static final FloatVector HI4 = index(4, true);

    private static FloatVector index(int unit, boolean hi) {
        float[] ix = new float[16];
        int units = 16 / unit;
        for (int u = 0; u < units / 2; u++) {
            for (int e = 0; e < unit; e++) {
                int from = (hi ? 8 : 0) + u * unit + e;
                ix[2 * u * unit + e] = from;
                ix[2 * u * unit + unit + e] = 16 + from;
            }
        }
        return FloatVector.fromArray(F, ix, 0);
    }

    /**
     * Rows r = 0..7 at byte {@code off + r·rowBytes} of {@code s}, f32, contiguous, columns [0, cols),
     * into {@code dst[at + 8·p + r]}.
     */
    static void fromRows(MemorySegment s, long off, long rowBytes, int cols, float[] dst, int at) {
        int p = 0;
        for (; p + 16 <= cols; p += 16, at += 128) {
            long o = off + 4L * p;
            FloatVector r0 = FloatVector.fromMemorySegment(F, s, o, LE);
            FloatVector r1 = FloatVector.fromMemorySegment(F, s, o + rowBytes, LE);
            FloatVector r2 = FloatVector.fromMemorySegment(F, s, o + 2 * rowBytes, LE);
            FloatVector r3 = FloatVector.fromMemorySegment(F, s, o + 3 * rowBytes, LE);
            FloatVector r4 = FloatVector.fromMemorySegment(F, s, o + 4 * rowBytes, LE);
            FloatVector r5 = FloatVector.fromMemorySegment(F, s, o + 5 * rowBytes, LE);
            FloatVector r6 = FloatVector.fromMemorySegment(F, s, o + 6 * rowBytes, LE);
            FloatVector r7 = FloatVector.fromMemorySegment(F, s, o + 7 * rowBytes, LE);
            // rows paired: columns 0..7 (lo) and 8..15 (hi) of rows (0, 1), (2, 3), (4, 5), (6, 7)
            FloatVector a0 = LO1.selectFrom(r0, r1);
            FloatVector a1 = HI1.selectFrom(r0, r1);
            FloatVector a2 = LO1.selectFrom(r2, r3);
            FloatVector a3 = HI1.selectFrom(r2, r3);
            FloatVector a4 = LO1.selectFrom(r4, r5);
            FloatVector a5 = HI1.selectFrom(r4, r5);
            FloatVector a6 = LO1.selectFrom(r6, r7);
            FloatVector a7 = HI1.selectFrom(r6, r7);
            // quadruples: columns 0..3, 4..7, 8..11, 12..15 of rows 0..3, then of rows 4..7
            FloatVector b0 = LO2.selectFrom(a0, a2);
            FloatVector b1 = HI2.selectFrom(a0, a2);
            FloatVector b2 = LO2.selectFrom(a1, a3);
            FloatVector b3 = HI2.selectFrom(a1, a3);
            FloatVector b4 = LO2.selectFrom(a4, a6);
            FloatVector b5 = HI2.selectFrom(a4, a6);
            FloatVector b6 = LO2.selectFrom(a5, a7);
            FloatVector b7 = HI2.selectFrom(a5, a7);
            // all eight rows: two columns a vector, in panel order
            LO4.selectFrom(b0, b4).intoArray(dst, at);
            HI4.selectFrom(b0, b4).intoArray(dst, at + 16);
            LO4.selectFrom(b1, b5).intoArray(dst, at + 32);
            HI4.selectFrom(b1, b5).intoArray(dst, at + 48);
            LO4.selectFrom(b2, b6).intoArray(dst, at + 64);
            HI4.selectFrom(b2, b6).intoArray(dst, at + 80);
            LO4.selectFrom(b3, b7).intoArray(dst, at + 96);
            HI4.selectFrom(b3, b7).intoArray(dst, at + 112);
        }
        for (; p < cols; p++, at += 8) {
            for (int r = 0; r < 8; r++) {
                dst[at + r] = s.get(FL, off + r * rowBytes + 4L * p);
            }
        }
    }

    /** As {@link #fromRows(MemorySegment, long, long, int, float[], int)}, rows r = 0..7 at {@code src[off + r·ld]}. */
    static void fromRows(float[] src, int off, int ld, int cols, float[] dst, int at) {
        int p = 0;
        for (; p + 16 <= cols; p += 16, at += 128) {
            int o = off + p;
            // the permutes written out again, not shared with the segment form: a helper taking the eight
            // vectors was not inlined by C2, and vectors passed to a call are boxed (3x slower)
            FloatVector r0 = FloatVector.fromArray(F, src, o);
            FloatVector r1 = FloatVector.fromArray(F, src, o + ld);
            FloatVector r2 = FloatVector.fromArray(F, src, o + 2 * ld);
            FloatVector r3 = FloatVector.fromArray(F, src, o + 3 * ld);
            FloatVector r4 = FloatVector.fromArray(F, src, o + 4 * ld);
            FloatVector r5 = FloatVector.fromArray(F, src, o + 5 * ld);
            FloatVector r6 = FloatVector.fromArray(F, src, o + 6 * ld);
            FloatVector r7 = FloatVector.fromArray(F, src, o + 7 * ld);
            // rows paired: columns 0..7 (lo) and 8..15 (hi) of rows (0, 1), (2, 3), (4, 5), (6, 7)
            FloatVector a0 = LO1.selectFrom(r0, r1);
            FloatVector a1 = HI1.selectFrom(r0, r1);
            FloatVector a2 = LO1.selectFrom(r2, r3);
            FloatVector a3 = HI1.selectFrom(r2, r3);
            FloatVector a4 = LO1.selectFrom(r4, r5);
            FloatVector a5 = HI1.selectFrom(r4, r5);
            FloatVector a6 = LO1.selectFrom(r6, r7);
            FloatVector a7 = HI1.selectFrom(r6, r7);
            // quadruples: columns 0..3, 4..7, 8..11, 12..15 of rows 0..3, then of rows 4..7
            FloatVector b0 = LO2.selectFrom(a0, a2);
            FloatVector b1 = HI2.selectFrom(a0, a2);
            FloatVector b2 = LO2.selectFrom(a1, a3);
            FloatVector b3 = HI2.selectFrom(a1, a3);
            FloatVector b4 = LO2.selectFrom(a4, a6);
            FloatVector b5 = HI2.selectFrom(a4, a6);
            FloatVector b6 = LO2.selectFrom(a5, a7);
            FloatVector b7 = HI2.selectFrom(a5, a7);
            // all eight rows: two columns a vector, in panel order
            LO4.selectFrom(b0, b4).intoArray(dst, at);
            HI4.selectFrom(b0, b4).intoArray(dst, at + 16);
            LO4.selectFrom(b1, b5).intoArray(dst, at + 32);
            HI4.selectFrom(b1, b5).intoArray(dst, at + 48);
            LO4.selectFrom(b2, b6).intoArray(dst, at + 64);
            HI4.selectFrom(b2, b6).intoArray(dst, at + 80);
            LO4.selectFrom(b3, b7).intoArray(dst, at + 96);
            HI4.selectFrom(b3, b7).intoArray(dst, at + 112);
        }
        for (; p < cols; p++, at += 8) {
            for (int r = 0; r < 8; r++) {
                dst[at + r] = src[off + r * ld + p];
            }
        }
    }
}
