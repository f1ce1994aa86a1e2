package dev.lantern.ir;

/** What an op does to memory, which is what fusion and code generation decide on. */
public enum OpKind {
    /** Graph inputs, parameters and constants: no computation. */
    SOURCE,
    /** One output element from the same-index (broadcast) elements of the inputs. */
    ELEMENTWISE,
    /** Reads whole rows of the last axis: norms, softmax, RoPE. */
    ROWWISE,
    /** Sums over whole axes (reduce_sum) and the loss: the result has fewer elements than the input. */
    REDUCTION,
    /** Matrix products. */
    GEMM,
    /** A reinterpretation of the same elements: reshape, permute, transpose, slice. */
    VIEW,
    /** Copies that change which elements are where: concat. */
    MOVEMENT,
    /** Composite ops that fusion produces (attention, fused kernels). */
    COMPOSITE
}
