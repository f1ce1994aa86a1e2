package dev.lantern.cli;

import dev.lantern.ir.LanternException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A file a command writes ({@code --dump-ir FILE}): a regular file, never left half-written.
 *
 * <ul>
 *   <li>The text goes to a new temporary file beside the target, is forced to disk, then renamed
 *       over the target, so a reader sees the old file or the whole new one; on any failure the
 *       temporary file is removed.</li>
 *   <li>Only regular files are written. A folder, device, FIFO or socket at the path is refused
 *       (the rename would replace it, and writing into it is not what "write FILE" means).</li>
 *   <li>A symbolic link is followed deliberately when it ends at a regular file: that file is
 *       replaced and the link stays. A dangling link, or one that ends at anything else, is refused.</li>
 *   <li>A new file gets the mode the umask gives (0666 less the umask); a replaced file keeps its
 *       mode, and its owner and group where the process may set them.</li>
 * </ul>
 */
final class OutputFile {
    private OutputFile() {}

    static void writeAtomically(Path target, String text) {
        writeAtomically(target, text.getBytes(StandardCharsets.UTF_8));
    }

    /** The same rules for bytes ({@code run --out DIR}'s .npy files). */
    static void writeAtomically(Path target, byte[] content) {
        Path dest = regularFileAt(target);
        Path dir = dest.getParent();
        Path tmp = createTemp(target, dir, dest.getFileName().toString());
        boolean moved = false;
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ByteBuffer bytes = ByteBuffer.wrap(content);
                while (bytes.hasRemaining()) {
                    ch.write(bytes);
                }
                ch.force(true); // the data is on disk before the rename makes it visible
            }
            keepAttributes(dest, tmp);
            try {
                Files.move(tmp, dest, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, dest, StandardCopyOption.REPLACE_EXISTING);
            }
            moved = true;
        } catch (IOException e) {
            throw new LanternException("cannot write " + target + ": " + TextFiles.reason(e), e);
        } finally {
            if (!moved) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // the write already failed and says so; a stray temporary file is the lesser harm
                }
            }
        }
    }

    /** The regular file to replace or create for {@code target}: links resolved, everything else refused. */
    static Path regularFileAt(Path target) {
        Path abs = target.toAbsolutePath();
        if (abs.getFileName() == null) {
            throw refused(target, "it is a folder");
        }
        BasicFileAttributes at;
        try {
            at = Files.readAttributes(abs, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            Path dir = abs.getParent();
            if (!Files.isDirectory(dir)) {
                throw new LanternException("cannot write " + target + ": folder " + dir + " does not exist");
            }
            return abs;
        } catch (IOException e) {
            throw new LanternException("cannot write " + target + ": " + TextFiles.reason(e), e);
        }
        if (at.isSymbolicLink()) {
            Path real;
            try {
                real = abs.toRealPath();
            } catch (IOException e) {
                throw refused(target, "it is a symbolic link to a missing file (" + TextFiles.reason(e) + ")");
            }
            if (!Files.isRegularFile(real)) {
                throw refused(target, "it is a symbolic link to " + real + ", which is " + kind(real));
            }
            return real;
        }
        if (!at.isRegularFile()) {
            throw refused(target, "it is " + kind(abs));
        }
        return abs;
    }

    private static LanternException refused(Path target, String why) {
        return new LanternException("cannot write " + target + ": " + why + "; only regular files are written");
    }

    /** What a non-regular file is, in words. */
    private static String kind(Path p) {
        if (Files.isDirectory(p)) {
            return "a folder";
        }
        try {
            // Linux's "unix" view gives the file type bits; elsewhere say what we know
            int mode = (Integer) Files.getAttribute(p, "unix:mode");
            return switch (mode & 0170000) {
                case 0020000 -> "a character device";
                case 0060000 -> "a block device";
                case 0010000 -> "a FIFO";
                case 0140000 -> "a socket";
                default -> "not a regular file";
            };
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "not a regular file";
        }
    }

    /** A new, empty file beside the target with the umask's mode (Files.createTempFile would force 0600). */
    private static Path createTemp(Path target, Path dir, String name) {
        String base = "." + (name.length() > 100 ? name.substring(0, 100) : name) + ".";
        for (int attempt = 0; ; attempt++) {
            Path tmp = dir.resolve(base + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong()) + ".tmp");
            try {
                Files.newByteChannel(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
                return tmp;
            } catch (FileAlreadyExistsException e) {
                if (attempt >= 100) {
                    throw new LanternException("cannot write " + target + ": no free temporary name in " + dir, e);
                }
            } catch (IOException e) {
                throw new LanternException("cannot write " + target + ": " + TextFiles.reason(e)
                        + " (creating a file in " + dir + ")", e);
            }
        }
    }

    /** A replaced file keeps its mode, owner and group; a new one keeps what the umask gave it. */
    private static void keepAttributes(Path dest, Path tmp) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(tmp, PosixFileAttributeView.class);
        if (view == null || !Files.exists(dest)) {
            return;
        }
        PosixFileAttributes old = Files.readAttributes(dest, PosixFileAttributes.class);
        view.setPermissions(old.permissions());
        PosixFileAttributes now = view.readAttributes();
        try {
            if (!now.group().equals(old.group())) {
                view.setGroup(old.group());
            }
            if (!now.owner().equals(old.owner())) {
                view.setOwner(old.owner());
            }
        } catch (IOException e) {
            // only root (or a member of the group) may hand a file over; the mode is kept either way
        }
    }
}
