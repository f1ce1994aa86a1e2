package dev.lantern.cuda.codegen;

/**
 * One kernel argument, in order: its C type as written in the signature and its name.
 * Pointers are {@code const T* __restrict__} or {@code T* __restrict__}; sizes are
 * {@code long long}; scalars {@code float}.
 */
public record KernelParam(String cType, String name) {
    public boolean isPointer() {
        return cType.contains("*");
    }

    /** Size in bytes of the argument value (pointers and long long: 8; float and int: 4). */
    public int argBytes() {
        return isPointer() || cType.equals("long long") ? 8 : 4;
    }

    @Override
    public String toString() {
        return cType + " " + name;
    }
}
