package dev.lantern.train.data;

import dev.lantern.tensor.Tensor;

/**
 * One batch of the next-token task: {@code targets[b][t]} is the token that follows
 * {@code tokens[b][t]}, both of shape (batch, seq).
 *
 * @param tokens the model's input ids, (batch, seq), i32 or i64
 * @param targets the ids to predict, (batch, seq), same dtype
 * @param position the data position of this batch (batches drawn before it)
 */
public record TokenBatch(Tensor tokens, Tensor targets, long position) {}
