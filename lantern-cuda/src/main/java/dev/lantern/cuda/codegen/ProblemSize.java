package dev.lantern.cuda.codegen;

import java.util.List;

/**
 * The run-time sizes a kernel is launched over. What each entry means is fixed per kernel
 * family: elementwise, cast and permute: (elements); norm and softmax: (rows); rope:
 * (rows = batch*heads*seq); attention: (batch*heads, seq_q, seq_k).
 */
public record ProblemSize(List<Long> dims) {
    public ProblemSize {
        dims = List.copyOf(dims);
        for (long d : dims) {
            if (d < 0) {
                throw new CodegenException("negative problem size " + dims);
            }
        }
    }

    public static ProblemSize of(long... dims) {
        return new ProblemSize(java.util.Arrays.stream(dims).boxed().toList());
    }

    public long get(int i) {
        return dims.get(i);
    }
}
