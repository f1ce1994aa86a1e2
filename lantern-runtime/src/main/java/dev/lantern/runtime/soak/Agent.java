package dev.lantern.runtime.soak;

/**
 * One source of allocation traffic, bound to one stream. Each {@link #step} performs exactly
 * one allocator operation, so the soak can interleave agents operation by operation.
 */
sealed interface Agent permits TrainingAgent, DecodeAgent, ScratchAgent, RandomAgent {
    void step(Traffic t);

    /** Frees everything the agent holds (end of the run). */
    void releaseAll(Traffic t);
}
