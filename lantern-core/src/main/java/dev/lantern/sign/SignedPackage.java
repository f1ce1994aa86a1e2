package dev.lantern.sign;

import dev.lantern.ir.LanternException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyPair;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipException;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * One file holding named entries and their {@link SignedManifest}: a zip whose entries are the
 * payload, {@code MANIFEST.sha256} over every payload entry, its Ed25519 signature and the signer's
 * public key ({@link #PUBLIC_KEY}). Entries are stored uncompressed, so a changed byte reaches the
 * hash check unaltered. {@link #write} builds the zip in a temp file beside the target and moves it
 * into place, so a reader sees no file or a whole one. {@link #read} checks the signature (with a
 * pinned key, or the embedded one) and every entry's hash before returning any entry, and refuses
 * an entry the manifest does not list, and then requires the file to be, byte for byte, the zip
 * {@link #write} makes of those entries (so a changed zip header byte is refused too); every refusal
 * is a {@link VerificationException} naming the entry at fault.
 *
 * <p>What the embedded key proves: that no byte changed since whoever held the key signed the
 * package. Anyone can re-sign a changed package with a key of their own, so authorship is proved
 * only when the reader pins the key ({@code publicKey} of {@link #read}).
 */
public final class SignedPackage {
    /** The signer's public key entry (Base64 of its X.509 encoding). */
    public static final String PUBLIC_KEY = "signing-key.pub";
    /** The most bytes {@link #read} accepts in all entries together: a bound against zip bombs. */
    public static final long MAX_BYTES = 4L << 30;
    private static final Set<String> RESERVED = Set.of(SignedManifest.MANIFEST, SignedManifest.SIGNATURE, PUBLIC_KEY);

    /** A verified package: its payload entries by name, and the key that signed it. */
    public record Verified(SortedMap<String, byte[]> entries, PublicKey key, boolean pinned) {
        /** The entry's bytes; a {@link VerificationException} when the package lacks it. */
        public byte[] entry(String name) {
            byte[] b = entries.get(name);
            if (b == null) {
                throw new VerificationException(name, "missing from the package");
            }
            return b;
        }
    }

    private SignedPackage() {}

    /**
     * Writes {@code entries} (names of letters, digits, {@code _ . - /}, no {@code ..}) and their signed
     * manifest by {@code key} into {@code out}, atomically: on any failure {@code out} is left as it was.
     */
    public static void write(Path out, SortedMap<String, byte[]> entries, KeyPair key) {
        if (entries.isEmpty()) {
            throw new LanternException("package: no entries to write");
        }
        entries.keySet().forEach(SignedPackage::checkName);
        Path target = out.toAbsolutePath();
        Path stage = null;
        Path tmp = null;
        try {
            Files.createDirectories(target.getParent());
            stage = Files.createTempDirectory("lantern-package-");
            List<Path> files = new ArrayList<>();
            for (Map.Entry<String, byte[]> e : entries.entrySet()) {
                Path f = stage.resolve(e.getKey());
                Files.createDirectories(f.getParent());
                Files.write(f, e.getValue());
                files.add(f);
            }
            SignedManifest.sign(stage, files, key.getPrivate());
            TreeMap<String, byte[]> all = new TreeMap<>(entries);
            all.put(SignedManifest.MANIFEST, Files.readAllBytes(stage.resolve(SignedManifest.MANIFEST)));
            all.put(SignedManifest.SIGNATURE, Files.readAllBytes(stage.resolve(SignedManifest.SIGNATURE)));
            all.put(PUBLIC_KEY, (SignedManifest.encode(key.getPublic()) + "\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            tmp = Files.createTempFile(target.getParent(), "." + target.getFileName() + ".", ".tmp");
            Files.write(tmp, zipBytes(all, new ArrayList<>()));
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
        } catch (IOException e) {
            throw new LanternException("package: cannot write " + out + ": " + e.getMessage(), e);
        } finally {
            deleteQuietly(tmp);
            deleteTree(stage);
        }
    }

    /**
     * Reads and verifies {@code lpk}: the signature with {@code publicKey}, or with the embedded key when it
     * is null, then every entry's hash; nothing is returned before all of it holds.
     */
    public static Verified read(Path lpk, PublicKey publicKey) {
        String name = lpk.getFileName().toString();
        TreeMap<String, byte[]> all = new TreeMap<>();
        try (ZipFile zip = new ZipFile(lpk.toFile())) {
            long total = 0;
            for (Enumeration<? extends ZipEntry> en = zip.entries(); en.hasMoreElements(); ) {
                ZipEntry e = en.nextElement();
                if (e.isDirectory()) {
                    throw new VerificationException(e.getName(), "a folder entry; a package holds files only");
                }
                checkEntryName(e.getName());
                byte[] bytes;
                try (InputStream in = zip.getInputStream(e)) {
                    bytes = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 16, MAX_BYTES - total + 1));
                } catch (IOException x) {
                    throw new VerificationException(e.getName(), "unreadable (changed bytes or a cut-off file): " + x.getMessage());
                }
                total += bytes.length;
                if (total > MAX_BYTES) {
                    throw new VerificationException(e.getName(), "the package holds more than " + MAX_BYTES + " bytes");
                }
                if (all.put(e.getName(), bytes) != null) {
                    throw new VerificationException(e.getName(), "appears twice in the package");
                }
            }
        } catch (ZipException e) {
            throw new VerificationException(name, "not a whole package (cut off, or its zip structure changed): " + e.getMessage());
        } catch (IOException e) {
            throw new VerificationException(name, "cannot read: " + e.getMessage());
        }
        PublicKey key = publicKey;
        if (key == null) {
            byte[] embedded = all.get(PUBLIC_KEY);
            if (embedded == null) {
                throw new VerificationException(PUBLIC_KEY, "missing, and no public key was given");
            }
            try {
                key = SignedManifest.decodePublicKey(new String(embedded, java.nio.charset.StandardCharsets.US_ASCII));
            } catch (LanternException e) {
                throw new VerificationException(PUBLIC_KEY, e.getMessage());
            }
        }
        Path stage = null;
        try {
            stage = Files.createTempDirectory("lantern-verify-");
            for (Map.Entry<String, byte[]> e : all.entrySet()) {
                Path f = stage.resolve(e.getKey());
                Files.createDirectories(f.getParent());
                Files.write(f, e.getValue());
            }
            if (!all.containsKey(SignedManifest.MANIFEST)) {
                throw new VerificationException(SignedManifest.MANIFEST, "missing: the package is not signed");
            }
            Set<String> listed = new HashSet<>(SignedManifest.verify(stage.resolve(SignedManifest.MANIFEST), key));
            TreeMap<String, byte[]> payload = new TreeMap<>();
            for (Map.Entry<String, byte[]> e : all.entrySet()) {
                if (RESERVED.contains(e.getKey())) {
                    continue;
                }
                if (!listed.contains(e.getKey())) {
                    throw new VerificationException(e.getKey(), "not in the signed manifest (added after signing)");
                }
                payload.put(e.getKey(), e.getValue());
            }
            checkCanonical(lpk, all);
            return new Verified(Collections.unmodifiableSortedMap(payload), key, publicKey != null);
        } catch (IOException e) {
            throw new LanternException("package: cannot stage " + name + " for verification: " + e.getMessage(), e);
        } finally {
            deleteTree(stage);
        }
    }

    /**
     * The zip of {@code all} as {@link #write} lays it out (sorted, stored, time zero); {@code starts}
     * receives each entry's offset, then the central directory's.
     */
    private static byte[] zipBytes(SortedMap<String, byte[]> all, List<Long> starts) throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (ZipOutputStream zip = new ZipOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> e : all.entrySet()) {
                zip.flush();
                starts.add((long) bytes.size());
                zip.putNextEntry(stored(e.getKey(), e.getValue()));
                zip.write(e.getValue());
                zip.closeEntry();
            }
            zip.flush();
            starts.add((long) bytes.size());
        }
        return bytes.toByteArray();
    }

    /**
     * Every byte of the file must be the zip {@link #write} makes of the verified entries: a changed
     * header byte (a time, a CRC, a flag) changes no entry's content, and is refused here, named by
     * the entry whose header holds it.
     */
    private static void checkCanonical(Path lpk, SortedMap<String, byte[]> all) throws IOException {
        List<Long> starts = new ArrayList<>();
        byte[] expected = zipBytes(all, starts);
        byte[] actual = Files.readAllBytes(lpk);
        int n = Math.min(expected.length, actual.length);
        int at = java.util.Arrays.mismatch(expected, 0, n, actual, 0, n);
        if (at < 0 && expected.length == actual.length) {
            return;
        }
        long off = at < 0 ? n : at;
        List<String> names = new ArrayList<>(all.keySet());
        String where = lpk.getFileName() + " (zip directory)";
        for (int i = 0; i < names.size(); i++) {
            if (off >= starts.get(i) && off < starts.get(i + 1)) {
                where = names.get(i);
            }
        }
        throw new VerificationException(where, "the package's bytes differ from its verified entries at offset " + off
                + " (a changed zip header, extra bytes, or a package not written by Lantern)");
    }

    private static ZipEntry stored(String name, byte[] bytes) {
        ZipEntry e = new ZipEntry(name);
        CRC32 crc = new CRC32();
        crc.update(bytes);
        e.setMethod(ZipEntry.STORED);
        e.setSize(bytes.length);
        e.setCompressedSize(bytes.length);
        e.setCrc(crc.getValue());
        e.setTime(0); // the same inputs give the same bytes, whenever they are packaged
        return e;
    }

    private static void checkName(String name) {
        if (RESERVED.contains(name)) {
            throw new LanternException("package: " + name + " is reserved for the signature");
        }
        if (!validName(name)) {
            throw new LanternException("package: entry name '" + name + "' must be letters, digits, _ . - / with no '..'");
        }
    }

    private static void checkEntryName(String name) {
        if (!validName(name)) {
            throw new VerificationException(name, "not a valid entry name (letters, digits, _ . - /, no '..', not absolute)");
        }
    }

    private static boolean validName(String name) {
        List<String> parts = List.of(name.split("/", -1)); // a list: a name may repeat a part
        return name.matches("[A-Za-z0-9_.\\-]+(/[A-Za-z0-9_.\\-]+)*") && !parts.contains("..") && !parts.contains(".");
    }

    private static void deleteQuietly(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // a temp file left behind is harmless; the error that got us here matters more
            }
        }
    }

    private static void deleteTree(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(SignedPackage::deleteQuietly);
        } catch (IOException ignored) {
            // best effort: a temp folder
        }
    }
}
