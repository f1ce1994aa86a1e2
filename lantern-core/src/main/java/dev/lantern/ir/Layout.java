package dev.lantern.ir;

import java.util.Arrays;

/**
 * Element strides of a tensor. {@code null} strides mean contiguous row-major, the layout of
 * every value that no pass has made a strided view.
 */
public final class Layout {
    public static final Layout CONTIGUOUS = new Layout(null);

    private final long[] strides;

    private Layout(long[] strides) {
        this.strides = strides;
    }

    public static Layout strided(long... strides) {
        return new Layout(strides.clone());
    }

    public boolean isContiguous() {
        return strides == null;
    }

    /** Strides for {@code shape}: the stored ones, or the contiguous ones. */
    public long[] strides(Shape shape) {
        return strides == null ? shape.contiguousStrides() : strides.clone();
    }

    /** This layout with contiguous strides folded to {@link #CONTIGUOUS}, so that equal layouts compare equal. */
    public Layout normalize(Shape shape) {
        return strides != null && Arrays.equals(strides, shape.contiguousStrides()) ? CONTIGUOUS : this;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Layout l && Arrays.equals(strides, l.strides);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(strides);
    }

    /** "" for contiguous, else "@[s0,s1,...]" as in the text format. */
    @Override
    public String toString() {
        if (strides == null) {
            return "";
        }
        StringBuilder b = new StringBuilder("@[");
        for (int i = 0; i < strides.length; i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(strides[i]);
        }
        return b.append(']').toString();
    }
}
