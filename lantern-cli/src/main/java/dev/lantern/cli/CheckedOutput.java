package dev.lantern.cli;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.Charset;

/**
 * Standard output that remembers why a write failed. A PrintStream swallows IOExceptions and
 * keeps only a flag ({@link #checkError()}); this one also keeps the first exception, so
 * {@code lantern opt F > /dev/full} can say "No space left on device" and exit nonzero.
 */
final class CheckedOutput extends PrintStream {
    private final Recorder recorder;

    private CheckedOutput(Recorder recorder, Charset charset) {
        super(new BufferedOutputStream(recorder, 8192), true, charset);
        this.recorder = recorder;
    }

    /** The process's standard output, in the encoding the JVM chose for it. */
    static CheckedOutput stdout() {
        String enc = System.getProperty("stdout.encoding");
        Charset cs = enc != null && Charset.isSupported(enc) ? Charset.forName(enc) : Charset.defaultCharset();
        return over(new FileOutputStream(FileDescriptor.out), cs);
    }

    static CheckedOutput over(OutputStream raw, Charset charset) {
        return new CheckedOutput(new Recorder(raw), charset);
    }

    /** The first write or flush failure, or {@code null}. */
    IOException failure() {
        return recorder.first;
    }

    /** Passes bytes through; notes the first failure before PrintStream swallows it. */
    private static final class Recorder extends FilterOutputStream {
        private IOException first;

        Recorder(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            try {
                out.write(b);
            } catch (IOException e) {
                throw noted(e);
            }
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            try {
                out.write(b, off, len);
            } catch (IOException e) {
                throw noted(e);
            }
        }

        @Override
        public void flush() throws IOException {
            try {
                out.flush();
            } catch (IOException e) {
                throw noted(e);
            }
        }

        private IOException noted(IOException e) {
            if (first == null) {
                first = e;
            }
            return e;
        }
    }
}
