package dev.lantern.runtime;

/** Whether a compiled forward is captured and replayed as a CUDA graph. */
public enum GraphPolicy {
    /** Capture or fail: a capture failure is an error. */
    REQUIRE,
    /** Capture when possible; a failure falls back to eager launches, counted and logged. */
    PREFER,
    /** Never capture. */
    OFF
}
