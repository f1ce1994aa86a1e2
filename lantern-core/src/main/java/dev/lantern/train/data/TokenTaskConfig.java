package dev.lantern.train.data;

import dev.lantern.ir.DType;

/**
 * The generated next-token task's shape.
 *
 * @param vocab vocabulary size, including the two marker tokens (at least 8)
 * @param batch sequences per batch
 * @param seq tokens per sequence
 * @param seed the seed of the data generator
 * @param idType i32 or i64, the dtype of the token and target tensors
 */
public record TokenTaskConfig(int vocab, int batch, int seq, long seed, DType idType) {
    /** Checks the sizes and the id dtype. */
    public TokenTaskConfig {
        if (vocab < 8) {
            throw new IllegalArgumentException("vocabulary must hold at least 8 tokens, got " + vocab);
        }
        if (batch < 1 || seq < 1) {
            throw new IllegalArgumentException("batch and sequence must be positive, got " + batch + "x" + seq);
        }
        if (idType != DType.I32 && idType != DType.I64) {
            throw new IllegalArgumentException("token ids must be i32 or i64, got " + idType);
        }
    }

    /** A task with i64 ids (what an ONNX language model takes). */
    public static TokenTaskConfig of(int vocab, int batch, int seq, long seed) {
        return new TokenTaskConfig(vocab, batch, seq, seed, DType.I64);
    }
}
