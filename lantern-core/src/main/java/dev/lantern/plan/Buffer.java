package dev.lantern.plan;

/**
 * One tensor the arena must hold: the value (or kernel scratch) it stores, its size rounded up
 * to the arena's alignment, and its lifetime as kernel indices [first, last], both inclusive:
 * written by kernel {@code first}, last read by kernel {@code last}.
 */
public record Buffer(String value, long bytes, int first, int last) {
    public boolean overlaps(Buffer o) {
        return first <= o.last && o.first <= last;
    }
}
