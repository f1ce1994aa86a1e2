package dev.lantern.ir;

/**
 * A run-time index (a gather's token id) outside the axis it indexes. Thrown before anything is
 * read or written, by the reference and by the CPU kernel alike, so bad ids never read past a table.
 */
public final class IndexOutOfRangeException extends LanternException {
    public IndexOutOfRangeException(String message) {
        super(message);
    }

    /**
     * {@code id} made non-negative for an axis of {@code n} entries: a negative id counts from the end
     * once (ONNX Gather: {@code -n..n-1}); anything else outside is this error. {@code where} is the
     * id's flat position among the ids, for the message.
     */
    public static long wrap(long id, long n, long where, String what) {
        long j = id < 0 ? id + n : id;
        if (j < 0 || j >= n) {
            throw new IndexOutOfRangeException(what + ": id " + id + " at position " + where + " is outside [" + -n + ", " + n + ")");
        }
        return j;
    }
}
