package dev.lantern.cli;

import dev.lantern.ir.LanternException;

import java.util.function.Supplier;

/** A bad command line: printed as one line, exit code 2. */
final class UsageException extends RuntimeException {
    UsageException(String message) {
        super(message);
    }

    /**
     * The value an option names ({@code --config NAME}, {@code --amp X}), with the library's typed
     * "unknown name" error turned into a bad command line: the user typed it, no input file did.
     */
    static <T> T option(String command, Supplier<T> parse) {
        try {
            return parse.get();
        } catch (LanternException e) {
            throw new UsageException(command + ": " + e.getMessage());
        }
    }
}
