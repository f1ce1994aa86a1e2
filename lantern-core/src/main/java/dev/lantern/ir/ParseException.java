package dev.lantern.ir;

/** Malformed IR text. The message starts with {@code line:column} and says what was expected and found. */
public final class ParseException extends LanternException {
    private final int line;
    private final int column;

    public ParseException(int line, int column, String message) {
        super(line + ":" + column + ": " + message);
        this.line = line;
        this.column = column;
    }

    public int line() {
        return line;
    }

    public int column() {
        return column;
    }
}
