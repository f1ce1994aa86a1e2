package dev.lantern.checkpoint;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.stream.Stream;

/** The file-system steps a checkpoint write is made of: written-and-forced files, forced folders, hashes. */
final class DurableFiles {
    private DurableFiles() {}

    /** A writer of one file that hashes what it writes and forces it to disk on {@link #finish}. */
    static final class HashingFile implements WritableByteChannel {
        private final FileChannel ch;
        private final MessageDigest sha = sha256();
        private long bytes;

        HashingFile(Path file) throws IOException {
            ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        }

        @Override
        public int write(ByteBuffer src) throws IOException {
            ByteBuffer seen = src.duplicate();
            int n = ch.write(src);
            seen.limit(seen.position() + n);
            sha.update(seen);
            bytes += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return ch.isOpen();
        }

        @Override
        public void close() throws IOException {
            ch.close();
        }

        /** Forces the bytes to disk, closes, and returns the SHA-256 (hex). */
        String finish() throws IOException {
            ch.force(true);
            ch.close();
            return HexFormat.of().formatHex(sha.digest());
        }

        long bytes() {
            return bytes;
        }
    }

    /** Writes {@code bytes} to a new file and forces it; returns the SHA-256 (hex). */
    static String writeForced(Path file, byte[] bytes) throws IOException {
        try (HashingFile f = new HashingFile(file)) {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                f.write(b);
            }
            return f.finish();
        }
    }

    /** So that renames and deletions in it survive a power loss. Linux can open a folder to force it. */
    static void forceFolder(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }

    static void renameAtomically(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Deletes a file or a folder with everything in it (links are deleted, not followed). */
    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        if (Files.isDirectory(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> s = Files.walk(p)) {
                for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(q);
                }
            }
        } else {
            Files.deleteIfExists(p);
        }
    }

    static String sha256Hex(byte[] bytes) {
        return HexFormat.of().formatHex(sha256().digest(bytes));
    }

    /** SHA-256 of a file, read in 1 MiB pieces. */
    static String sha256Hex(Path file) throws IOException {
        MessageDigest sha = sha256();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.allocate(1 << 20);
            while (ch.read(buf) >= 0) {
                buf.flip();
                sha.update(buf);
                buf.clear();
            }
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
