package dev.lantern.sign;

import dev.lantern.ir.LanternException;

/**
 * A signed set of files that does not verify: a file changed, missing or added to the manifest, or a
 * signature that the public key does not accept. {@link #file()} names the file at fault (the
 * manifest itself when its signature fails).
 */
public final class VerificationException extends LanternException {
    private final String file;

    public VerificationException(String file, String message) {
        super(file + ": " + message);
        this.file = file;
    }

    /** The file at fault, as the manifest names it (relative to its folder). */
    public String file() {
        return file;
    }
}
