package dev.lantern.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class KernelArgsTest {
    @Test
    void valuesLandInEightByteSlotsPointedAtByTheArray() {
        long params = KernelArgs.marshal("k", new Object[] {0x1234_5678_9abcL, -7, 1.5f, 2.25, (short) -2, (byte) 5});
        assertEquals(0x1234_5678_9abcL, KernelArgs.slot(0));
        assertEquals(-7, (int) KernelArgs.slot(1));
        assertEquals(0, KernelArgs.slot(1) >>> 32, "high bytes of a narrow slot are cleared");
        assertEquals(1.5f, Float.intBitsToFloat((int) KernelArgs.slot(2)));
        assertEquals(2.25, Double.longBitsToDouble(KernelArgs.slot(3)));
        assertEquals((short) -2, (short) KernelArgs.slot(4));
        assertEquals(5, (byte) KernelArgs.slot(5));
        MemorySegment ptrs = MemorySegment.ofAddress(params).reinterpret(8 * 6);
        long slot0 = ptrs.getAtIndex(ValueLayout.JAVA_LONG, 0);
        for (int i = 1; i < 6; i++) {
            assertEquals(slot0 + 8L * i, ptrs.getAtIndex(ValueLayout.JAVA_LONG, i));
        }
        assertEquals(0x1234_5678_9abcL, MemorySegment.ofAddress(slot0).reinterpret(8).get(ValueLayout.JAVA_LONG, 0));
    }

    @Test
    void badArgumentsAreRejectedWithTheirPosition() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> KernelArgs.marshal("axpb", new Object[] {1L, "two"}));
        assertTrue(e.getMessage().contains("argument 1 has type String"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> KernelArgs.marshal("k", new Object[] {null}));
        assertThrows(IllegalArgumentException.class, () -> KernelArgs.marshal("k", new Object[KernelArgs.MAX_ARGS + 1]));
    }
}
