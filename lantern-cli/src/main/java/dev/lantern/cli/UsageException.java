package dev.lantern.cli;

/** A bad command line: printed as one line, exit code 2. */
final class UsageException extends RuntimeException {
    UsageException(String message) {
        super(message);
    }
}
