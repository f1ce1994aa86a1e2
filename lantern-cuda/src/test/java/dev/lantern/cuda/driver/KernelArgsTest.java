package dev.lantern.cuda.driver;

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
    void aTensorMapIsPassedByValueAndTheNextLaunchGetsItsSlotBack() {
        byte[] bytes = new byte[TensorMap.BYTES];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (i * 7 + 3);
        }
        TensorMap map = TensorMap.ofBytes(bytes);
        long params = KernelArgs.marshal("k", new Object[] {42L, map, 7});
        MemorySegment ptrs = MemorySegment.ofAddress(params).reinterpret(8 * 3);
        long slot0 = ptrs.getAtIndex(ValueLayout.JAVA_LONG, 0);
        assertEquals(map.address(), ptrs.getAtIndex(ValueLayout.JAVA_LONG, 1), "the pointer points at the map itself");
        assertEquals(0, map.address() % 64, "tensor maps are 64-byte aligned");
        byte[] seen = MemorySegment.ofAddress(map.address()).reinterpret(TensorMap.BYTES).toArray(ValueLayout.JAVA_BYTE);
        assertTrue(java.util.Arrays.equals(bytes, seen));
        assertEquals(slot0 + 16, ptrs.getAtIndex(ValueLayout.JAVA_LONG, 2));
        // the same thread's next launch puts an ordinary value in position 1: its slot again
        KernelArgs.marshal("k", new Object[] {1L, 2L});
        assertEquals(slot0 + 8, ptrs.getAtIndex(ValueLayout.JAVA_LONG, 1));
        assertEquals(2L, KernelArgs.slot(1));
        assertThrows(IllegalArgumentException.class, () -> TensorMap.ofBytes(new byte[64]));
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
