package dev.lantern.kernel;

/** The shape of a kernel's loop nest, which decides how a backend schedules it. */
public enum KernelKind {
    /** (batch, m, n) output tiles, reduction over k, epilogue on the accumulator. */
    GEMM,
    /** (batch, head, query block) tasks, reduction over keys (online softmax) and head_dim. */
    ATTENTION,
    /** One task per row of the last axis; reductions over the row (norms, softmax, rope). */
    ROWWISE,
    /** One task per output element (or group of them), summing over the reduced axes in a fixed order. */
    REDUCTION,
    /** One pass over the output's elements in chunks; an expression per element. */
    ELEMENTWISE,
    /** A strided copy (a permute that could not stay a view, a slice, a concat). */
    COPY
}
