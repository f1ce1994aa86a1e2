package dev.lantern.kernel;

import java.util.List;

/**
 * The loop nest of a kernel: named parallel axes and named reduction axes with their extents,
 * such as {@code (b=2, m=128, n=768) reduce (k=256)} for a GEMM.
 */
public record IterationSpace(List<Axis> parallel, List<Axis> reduction) {
    public IterationSpace {
        parallel = List.copyOf(parallel);
        reduction = List.copyOf(reduction);
    }

    public record Axis(String name, long extent) {
        @Override
        public String toString() {
            return name + "=" + extent;
        }
    }

    /** The number of points of the parallel axes: the independent work items before tiling. */
    public long points() {
        return parallel.stream().mapToLong(Axis::extent).reduce(1, (a, b) -> a * b);
    }

    @Override
    public String toString() {
        String p = parallel.toString().replace('[', '(').replace(']', ')');
        return reduction.isEmpty() ? p : p + " reduce " + reduction.toString().replace('[', '(').replace(']', ')');
    }
}
