package dev.lantern.onnx;

/**
 * The bounds that keep a hostile model from making the importer allocate or loop without end.
 *
 * @param maxModelBytes the largest model file read (protobuf's own limit is 2 GiB; larger models keep
 *                      their weights in external data)
 * @param maxElements   the largest element count of any tensor: input, weight or intermediate
 * @param maxRank       the largest rank of any tensor
 * @param maxFoldElements the largest element count of a value computed on the host at import time
 *                      (shape arithmetic, masks); bigger folds are refused rather than allocated
 * @param maxNodes      the largest node count of a graph
 */
public record ImportLimits(long maxModelBytes, long maxElements, int maxRank, long maxFoldElements, int maxNodes) {
    /** 2 GiB files, 2^31 − 1 elements per tensor (the IR's int dims), rank 8, 16 Mi folded elements, 1 Mi nodes. */
    public static final ImportLimits DEFAULT = new ImportLimits(Integer.MAX_VALUE, Integer.MAX_VALUE, 8, 1 << 24, 1 << 20);
}
