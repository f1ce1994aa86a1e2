package dev.lantern.cli;

import dev.lantern.ir.LanternException;
import dev.lantern.sign.SignedManifest;
import dev.lantern.sign.VerificationException;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;

/**
 * {@code lantern sign} and {@code lantern verify}: signed artifacts ({@link SignedManifest}).
 * <pre>
 * lantern sign --dir DIR FILE...  [--key-env NAME]   writes DIR/MANIFEST.sha256, its .sig, and DIR/signing-key.pub
 * lantern verify DIR/MANIFEST.sha256 --public-key FILE.pub
 * lantern verify OUT.lpk [--public-key FILE.pub]           a compiled model package (embedded key unless one is given)
 * </pre>
 * {@code sign} signs with a throwaway Ed25519 key made for this call (its private half is never
 * written), or with the release key pair in the environment variable {@code --key-env} names
 * ({@link #releaseKey}). {@code verify} exits 0 when the signature and every hash match, 1 naming the file at fault.
 */
final class VerifyCommand {
    static final String PUBLIC_KEY = "signing-key.pub";

    private VerifyCommand() {}

    static int sign(List<String> argv, PrintStream out) {
        Args a = Args.parse("sign", argv, Set.of(), Set.of("dir", "key-env"));
        if (a.get("dir", null) == null || a.positional().isEmpty()) {
            throw new UsageException("sign: give --dir DIR and the files inside it to sign");
        }
        Path dir = Path.of(a.get("dir", null));
        List<Path> files = new ArrayList<>();
        a.positional().forEach(f -> files.add(Path.of(f)));
        KeyPair pair;
        if (a.get("key-env", null) != null) {
            String text = System.getenv(a.get("key-env", null));
            if (text == null || text.isBlank()) {
                throw new UsageException("sign: --key-env " + a.get("key-env", null) + ": no such environment variable, or empty");
            }
            pair = releaseKey(text);
        } else {
            pair = SignedManifest.newKeyPair();
        }
        Path manifest = SignedManifest.sign(dir, files, pair.getPrivate());
        Path pub = dir.resolve(PUBLIC_KEY);
        try {
            Files.writeString(pub, SignedManifest.encode(pair.getPublic()) + "\n");
        } catch (IOException e) {
            throw new LanternException("sign: cannot write " + pub + ": " + TextFiles.reason(e), e);
        }
        out.println("signed " + files.size() + " files: " + manifest + " (public key " + pub + ")");
        return ExitStatus.OK;
    }

    static int verify(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("verify", argv, Set.of(), Set.of("public-key"));
        if (a.positional().size() == 1 && PackageRunner.isPackage(a.positional().getFirst())) {
            return verifyPackage(a.positional().getFirst(), a.get("public-key", null), out, err);
        }
        if (a.positional().size() != 1 || a.get("public-key", null) == null) {
            throw new UsageException("verify: give the manifest and --public-key FILE.pub (lantern verify DIR/MANIFEST.sha256 --public-key KEY.pub)");
        }
        Path key = Path.of(a.get("public-key", null));
        String text;
        try {
            text = Files.readString(key);
        } catch (IOException e) {
            throw new UsageException("verify: --public-key " + key + ": cannot read: " + TextFiles.reason(e));
        }
        try {
            List<String> checked = SignedManifest.verify(Path.of(a.positional().getFirst()), SignedManifest.decodePublicKey(text));
            out.println("verified: the signature and " + checked.size() + " files match");
            return ExitStatus.OK;
        } catch (VerificationException e) {
            err.println("lantern verify: REFUSED " + ExitStatus.oneLine(e.getMessage()));
            return ExitStatus.BAD_INPUT;
        }
    }

    /**
     * A release key pair from its text {@code PRIVATE:PUBLIC}: Base64 of the PKCS#8 private key and of the
     * X.509 public key (the standard API derives no public key from a private one).
     */
    static KeyPair releaseKey(String text) {
        String[] parts = text.strip().split(":");
        if (parts.length != 2) {
            throw new UsageException("sign: a release key is PRIVATE:PUBLIC (Base64 PKCS#8 and X.509 Ed25519 keys)");
        }
        try {
            PrivateKey priv = KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(parts[0])));
            return new KeyPair(SignedManifest.decodePublicKey(parts[1]), priv);
        } catch (java.security.GeneralSecurityException | IllegalArgumentException | LanternException e) {
            throw new UsageException("sign: the release key is not an Ed25519 PRIVATE:PUBLIC pair in Base64: " + ExitStatus.oneLine(e.getMessage()));
        }
    }

    /** A package ({@link PackageRunner#verified}): exit 0 with its target, or 1 with the entry at fault. */
    private static int verifyPackage(String file, String keyFile, PrintStream out, PrintStream err) {
        try {
            var pkg = PackageRunner.verified("verify", file, keyFile);
            PackageInfo info = PackageInfo.parse(pkg.entry(PackageInfo.ENTRY));
            String plan = ModelPackager.planSha256(pkg.entries());
            if (!plan.equals(info.planSha256())) {
                throw new VerificationException(PackageInfo.ENTRY, "its plan sha256 is not the plan entries' (" + plan + ")");
            }
            pkg.entry(info.model());
            out.println("verified: " + file + ": the signature and " + pkg.entries().size() + " entries match ("
                    + (pkg.pinned() ? "the given public key" : "its embedded public key: pin one with --public-key to prove who signed it")
                    + "); compiled for " + info.target() + ", cubins: " + info.cubins());
            return ExitStatus.OK;
        } catch (VerificationException e) {
            err.println("lantern verify: REFUSED " + ExitStatus.oneLine(e.getMessage()));
            return ExitStatus.BAD_INPUT;
        }
    }
}
