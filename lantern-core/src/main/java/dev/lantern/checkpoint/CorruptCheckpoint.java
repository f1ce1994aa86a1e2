package dev.lantern.checkpoint;

/**
 * A committed checkpoint that did not verify and was passed over: which step, which file of it
 * (the commit record, the manifest or a data file), and what was wrong (a hash or size that does
 * not match, a file missing, unreadable JSON). {@link CheckpointStore#restoreLatest} reports these
 * so that the caller can log or surface them; the message is one line.
 */
public record CorruptCheckpoint(long step, String file, String reason) {
    public String message() {
        return "checkpoint step " + step + ": " + file + ": " + reason;
    }
}
