package dev.lantern.bench.report;

/**
 * One figure of a results file: {@code value} of {@code metric} (in {@code unit}) for one
 * benchmark case run by one implementation ({@code lantern}, {@code lantern-graph}, {@code torch},
 * {@code onnxruntime}, ...). {@code higherIsBetter} for rates (GFLOP/s), false for times.
 */
public record Figure(String caseName, String impl, String metric, String unit, double value, boolean higherIsBetter) {
    /** Whether Lantern produced it; the others are the peers shown beside it. */
    public boolean lantern() {
        return impl.startsWith("lantern");
    }
}
