package dev.lantern.cli;

/**
 * The exit codes of every {@code lantern} command (docs/cli.md), and the one line an internal
 * error prints. 0: done. 1: the input or the environment is at fault (bad IR, a file that cannot
 * be read or written, standard output that cannot be written, a failed correctness gate).
 * 2: a bad command line, or a device the command line asks for that is not there. 3: an internal
 * error, i.e. a bug in Lantern: anything thrown that is not a typed Lantern error.
 */
public final class ExitStatus {
    public static final int OK = 0;
    public static final int BAD_INPUT = 1;
    public static final int USAGE = 2;
    public static final int INTERNAL = 3;

    private ExitStatus() {}

    /**
     * {@code lantern CMD: internal error (a bug in Lantern): WHAT [CLASS at FRAME; --verbose ...]}
     * on one line. The message comes first, so a user reads what went wrong before the class name;
     * an exception without a message is described instead of shown as a bare class name.
     */
    public static String internalError(String command, Throwable e) {
        String what = e.getMessage();
        if (e instanceof StackOverflowError) {
            what = "ran out of stack (an input nested too deeply?)";
        } else if (e instanceof OutOfMemoryError) {
            what = "out of memory" + (what == null ? "" : " (" + what + ")") + "; a larger -Xmx may help";
        } else if (what == null || what.isBlank()) {
            what = "unexpected " + e.getClass().getSimpleName() + " with no message";
        }
        StackTraceElement[] trace = e.getStackTrace();
        String where = trace.length == 0 ? "" : " at " + trace[0].getClassName() + "." + trace[0].getMethodName()
                + (trace[0].getLineNumber() > 0 ? ":" + trace[0].getLineNumber() : "");
        return "lantern " + command + ": internal error (a bug in Lantern): " + oneLine(what)
                + " [" + e.getClass().getName() + where + "; --verbose shows the stack trace]";
    }

    /** A message flattened to one line, for the one-line error contract. */
    public static String oneLine(String message) {
        if (message == null) {
            return "(no message)";
        }
        return message.replace("\r\n", " ").replace('\n', ' ').replace('\r', ' ');
    }
}
