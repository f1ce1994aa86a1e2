package dev.lantern.ir;

/** Base of every typed error Lantern throws for bad input. The message is one line for the CLI. */
public class LanternException extends RuntimeException {
    public LanternException(String message) {
        super(message);
    }

    public LanternException(String message, Throwable cause) {
        super(message, cause);
    }
}
