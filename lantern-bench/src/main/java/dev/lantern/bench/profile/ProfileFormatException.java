package dev.lantern.bench.profile;

import dev.lantern.ir.LanternException;

/**
 * A profiler export (nsys stats CSV, ncu raw CSV) that cannot be read as the documented format:
 * no header with the columns needed, a row of the wrong width, an unterminated quote, a figure
 * that is not a number. The message names the file and the line.
 */
public final class ProfileFormatException extends LanternException {
    public ProfileFormatException(String message) {
        super(message);
    }
}
