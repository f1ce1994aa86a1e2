package dev.lantern.cuda.driver;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The {@code void** kernelParams} array for cuLaunchKernel: one 8-byte value slot per
 * argument and a pointer array whose i-th entry points at slot i. One per thread, reused:
 * cuLaunchKernel (and stream capture) copies the values before it returns, so a launch
 * allocates nothing.
 *
 * <p>Accepted argument types and their C types: Long → 64-bit (pointers, int64), Integer →
 * int32, Float → float, Double → double, Short → int16, Byte → int8, any
 * {@link dev.lantern.runtime.TensorStorage} → its address, and a {@link TensorMap} → its 128
 * bytes by value (the pointer slot then points at the map itself).
 */
final class KernelArgs {
    static final int MAX_ARGS = 128;
    private static final ThreadLocal<KernelArgs> PER_THREAD = ThreadLocal.withInitial(KernelArgs::new);

    private final MemorySegment values;   // (MAX_ARGS) 8-byte slots
    private final MemorySegment pointers; // (MAX_ARGS) void*, pointers[i] = &values[i]

    private KernelArgs() {
        Arena arena = Arena.ofAuto();
        values = arena.allocate(8L * MAX_ARGS, 16);
        pointers = arena.allocate(ValueLayout.ADDRESS, MAX_ARGS);
        for (int i = 0; i < MAX_ARGS; i++) {
            pointers.setAtIndex(ValueLayout.JAVA_LONG, i, values.address() + 8L * i);
        }
    }

    /** Writes {@code args} into this thread's slots; returns the address of the pointer array. */
    static long marshal(String kernel, Object[] args) {
        if (args.length > MAX_ARGS) {
            throw new IllegalArgumentException("kernel " + kernel + ": " + args.length + " arguments, at most "
                    + MAX_ARGS);
        }
        KernelArgs k = PER_THREAD.get();
        for (int i = 0; i < args.length; i++) {
            k.put(kernel, i, args[i]);
        }
        return k.pointers.address();
    }

    private void put(String kernel, int i, Object arg) {
        long off = 8L * i;
        values.set(ValueLayout.JAVA_LONG, off, 0L); // clear the high bytes of narrow values
        pointers.setAtIndex(ValueLayout.JAVA_LONG, i, arg instanceof TensorMap m ? m.address() : values.address() + off);
        switch (arg) {
            case TensorMap m -> { }
            case Long v -> values.set(ValueLayout.JAVA_LONG, off, v);
            case Integer v -> values.set(ValueLayout.JAVA_INT, off, v);
            case Float v -> values.set(ValueLayout.JAVA_FLOAT, off, v);
            case Double v -> values.set(ValueLayout.JAVA_DOUBLE, off, v);
            case Short v -> values.set(ValueLayout.JAVA_SHORT, off, v);
            case Byte v -> values.set(ValueLayout.JAVA_BYTE, off, v);
            case dev.lantern.runtime.TensorStorage s -> values.set(ValueLayout.JAVA_LONG, off, s.address());
            case null -> throw new IllegalArgumentException("kernel " + kernel + ": argument " + i + " is null");
            default -> throw new IllegalArgumentException("kernel " + kernel + ": argument " + i + " has type "
                    + arg.getClass().getSimpleName() + "; expected Long, Integer, Float, Double, Short, Byte "
                    + ", TensorStorage or TensorMap");
        }
    }

    /** For tests: the bytes of slot {@code i} of this thread after the last marshal. */
    static long slot(int i) {
        return PER_THREAD.get().values.get(ValueLayout.JAVA_LONG, 8L * i);
    }
}
