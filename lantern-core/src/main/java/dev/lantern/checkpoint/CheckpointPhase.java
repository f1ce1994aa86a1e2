package dev.lantern.checkpoint;

/**
 * The points of {@link CheckpointStore#write} in their order. A crash between any two leaves the
 * folder either with the previous checkpoint as the latest, or (from {@link #COMMITTED} on) with
 * the new one; never with a half-written one visible. A phase listener (tests, the crash harness)
 * hears each as it is reached, and may throw to simulate a crash there.
 */
public enum CheckpointPhase {
    /** A partial folder for the step was created; nothing is written yet. */
    BEGIN,
    /** One data file is written and forced to disk (heard once per file). */
    DATA_FILE_WRITTEN,
    /** The manifest (name, size and SHA-256 of every data file, the metadata) is written and forced. */
    MANIFEST_WRITTEN,
    /** The partial folder is renamed to its step's name (still invisible: no commit record yet). */
    FOLDER_RENAMED,
    /** The commit record is written and forced under its temporary name. */
    COMMIT_RECORD_WRITTEN,
    /** The commit record is renamed into place: from here the checkpoint is visible. */
    COMMITTED,
    /** The folder is forced to disk: the commit survives a power loss too. */
    DURABLE,
    /** Checkpoints past the retention count are deleted. */
    RETAINED
}
