package dev.lantern.sign;

import dev.lantern.ir.LanternException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;

/**
 * Signed artifacts with nothing but the JDK's {@code java.security}: a checksum manifest of files
 * (one line {@code <sha256 hex>  <path>} each, paths relative to the manifest's folder, sorted, the
 * form {@code sha256sum -c} reads) and an Ed25519 signature over the manifest's bytes, beside it as
 * {@code MANIFEST.sha256.sig} (Base64). The public key travels as X.509 DER in Base64
 * ({@link #encode}). {@link #verify} checks the signature before it trusts any hash in the manifest,
 * then every file's hash, and throws {@link VerificationException} naming the first file at fault.
 * CI signs with a throwaway key made for the run ({@link #newKeyPair}); a release key would be
 * loaded from the environment in its place.
 */
public final class SignedManifest {
    public static final String MANIFEST = "MANIFEST.sha256";
    public static final String SIGNATURE = MANIFEST + ".sig";

    private SignedManifest() {}

    /** A fresh Ed25519 key pair. */
    public static KeyPair newKeyPair() {
        try {
            return KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JDK has no Ed25519 (every JDK since 15 has)", e);
        }
    }

    /** The public key as Base64 of its X.509 encoding, one line. */
    public static String encode(PublicKey key) {
        return Base64.getEncoder().encodeToString(key.getEncoded());
    }

    /** A public key from {@link #encode}'s text. */
    public static PublicKey decodePublicKey(String base64) {
        try {
            return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(Base64.getDecoder().decode(base64.strip())));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new LanternException("not an Ed25519 public key (Base64 of its X.509 encoding): " + e.getMessage(), e);
        }
    }

    /**
     * Writes {@code dir/MANIFEST.sha256} over {@code files} (each inside {@code dir}) and its signature
     * by {@code key}; returns the manifest's path.
     */
    public static Path sign(Path dir, List<Path> files, PrivateKey key) {
        TreeMap<String, String> lines = new TreeMap<>();
        for (Path f : files) {
            String rel = relative(dir, f);
            if (rel.equals(MANIFEST) || rel.equals(SIGNATURE)) {
                throw new LanternException("sign: " + rel + " is the manifest itself, not a file to sign");
            }
            lines.put(rel, sha256(f));
        }
        if (lines.isEmpty()) {
            throw new LanternException("sign: no files to sign");
        }
        StringBuilder b = new StringBuilder();
        lines.forEach((path, hash) -> b.append(hash).append("  ").append(path).append('\n'));
        byte[] manifest = b.toString().getBytes(StandardCharsets.UTF_8);
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initSign(key);
            s.update(manifest);
            Path m = dir.resolve(MANIFEST);
            Files.write(m, manifest);
            Files.writeString(dir.resolve(SIGNATURE), Base64.getEncoder().encodeToString(s.sign()) + "\n");
            return m;
        } catch (GeneralSecurityException e) {
            throw new LanternException("sign: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new LanternException("sign: cannot write the manifest in " + dir + ": " + e.getMessage(), e);
        }
    }

    /**
     * Verifies {@code manifest} (and the signature beside it) with {@code key}, then every file it
     * lists; returns the paths checked. Throws {@link VerificationException} naming the file at fault.
     */
    public static List<String> verify(Path manifest, PublicKey key) {
        Path dir = manifest.toAbsolutePath().getParent();
        byte[] bytes;
        String sig;
        try {
            bytes = Files.readAllBytes(manifest);
        } catch (IOException e) {
            throw new VerificationException(manifest.getFileName().toString(), "cannot read: " + e.getMessage());
        }
        Path sigFile = dir.resolve(manifest.getFileName() + ".sig");
        try {
            sig = Files.readString(sigFile).strip();
        } catch (IOException e) {
            throw new VerificationException(sigFile.getFileName().toString(), "no signature beside the manifest");
        }
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(bytes);
            if (!s.verify(Base64.getDecoder().decode(sig))) {
                throw new VerificationException(manifest.getFileName().toString(),
                        "the signature does not match: the manifest was changed, or signed by another key");
            }
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new VerificationException(sigFile.getFileName().toString(), "not a valid Ed25519 signature: " + e.getMessage());
        }
        List<String> checked = new ArrayList<>();
        for (String line : new String(bytes, StandardCharsets.UTF_8).split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            int sp = line.indexOf("  ");
            if (sp != 64) {
                throw new VerificationException(manifest.getFileName().toString(), "not a manifest line: " + line);
            }
            String rel = line.substring(66);
            Path f = dir.resolve(rel).normalize();
            if (!f.startsWith(dir)) {
                throw new VerificationException(rel, "outside the manifest's folder");
            }
            if (!Files.isRegularFile(f)) {
                throw new VerificationException(rel, "missing");
            }
            String actual = sha256(f);
            if (!actual.equals(line.substring(0, 64))) {
                throw new VerificationException(rel, "tampered: its SHA-256 is " + actual + ", the signed manifest says " + line.substring(0, 64));
            }
            checked.add(rel);
        }
        return checked;
    }

    static String sha256(Path f) {
        try (InputStream in = Files.newInputStream(f)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (IOException e) {
            throw new LanternException("cannot read " + f + ": " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String relative(Path dir, Path f) {
        Path abs = f.toAbsolutePath().normalize();
        Path base = dir.toAbsolutePath().normalize();
        if (!abs.startsWith(base) || !Files.isRegularFile(abs)) {
            throw new LanternException("sign: " + f + " is not a file inside " + dir);
        }
        return base.relativize(abs).toString().replace('\\', '/');
    }
}
