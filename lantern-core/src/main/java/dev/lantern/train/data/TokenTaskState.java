package dev.lantern.train.data;

/**
 * Where the task's stream stands: {@code position} batches drawn, and the generator's state after
 * them. Resuming from it draws the batch a run that never stopped would have drawn next.
 *
 * @param position batches drawn so far
 * @param rngState the {@link SplitMix64} state after them
 */
public record TokenTaskState(long position, long rngState) {}
