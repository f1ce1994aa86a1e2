package dev.lantern.cli;

import dev.lantern.ir.LanternException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Reading the text files a command is given, with errors a user can act on: which file, and why
 * ("permission denied", "is a folder", "is not UTF-8 text: byte 0xFF at offset 3, line 1"), never
 * a bare path or "Input length = 1".
 */
public final class TextFiles {
    private TextFiles() {}

    /** The file's text, decoded strictly as UTF-8; a {@link LanternException} that names the path otherwise. */
    public static String readUtf8(Path path) {
        byte[] bytes;
        try {
            if (Files.isDirectory(path)) {
                throw new LanternException("cannot read " + path + ": it is a folder, not a file");
            }
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            throw new LanternException("no such file: " + path);
        } catch (IOException e) {
            throw new LanternException("cannot read " + path + ": " + reason(e), e);
        } catch (OutOfMemoryError e) {
            // Files.readAllBytes refuses files over 2 GiB with an OutOfMemoryError
            throw new LanternException("cannot read " + path + ": too large to read as text (" + e.getMessage() + ")");
        }
        return decode(path, bytes);
    }

    /**
     * Why an I/O operation failed, in a few words: the operating system's reason where Java has
     * it. An {@link AccessDeniedException}'s message is only the path, so the reason is spelled out.
     */
    public static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or folder";
        }
        if (e instanceof NotDirectoryException) {
            return "a part of the path is not a folder";
        }
        if (e instanceof FileSystemException f && f.getReason() != null) {
            return f.getReason().toLowerCase(Locale.ROOT);
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }

    private static String decode(Path path, byte[] bytes) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length); // UTF-8 never gives more chars than bytes
        CoderResult r = decoder.decode(in, out, true);
        if (r.isUnderflow()) {
            r = decoder.flush(out);
        }
        if (r.isError()) {
            int at = in.position(); // the decoder stops at the first byte it cannot take
            int line = 1;
            for (int i = 0; i < at; i++) {
                if (bytes[i] == '\n') {
                    line++;
                }
            }
            throw new LanternException(String.format(Locale.ROOT,
                    "%s is not UTF-8 text (byte 0x%02X at offset %d, line %d); convert it to UTF-8",
                    path, bytes[at] & 0xff, at, line));
        }
        if (r.isOverflow()) {
            throw new IllegalStateException("UTF-8 decoding of " + path + " overflowed its buffer");
        }
        return out.flip().toString();
    }
}
