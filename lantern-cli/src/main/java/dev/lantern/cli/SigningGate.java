package dev.lantern.cli;

import dev.lantern.ir.LanternException;
import dev.lantern.sign.SignedManifest;
import dev.lantern.sign.VerificationException;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyPair;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code lantern gate signing}: the build's artifacts (every module's jar and SBOM, the aggregate SBOM)
 * copied to {@code target/gates/signed}, signed with a throwaway Ed25519 key made for the run
 * ({@link SignedManifest}), and verified; then three tampered copies, one byte flipped in a jar, in an
 * SBOM and in the manifest, each of which verification must refuse, naming that file.
 */
final class SigningGate {
    static final String USAGE = "gate signing [--root DIR]";

    private SigningGate() {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        Args a = Args.parse("gate signing", argv, Set.of(), Set.of("root")).noPositional("gate signing");
        Path root = Path.of(a.get("root", ".")).toAbsolutePath().normalize();
        GateResult g = evaluate(root, root.resolve("target/gates/signed"));
        out.println(g.line());
        return g.exitCode();
    }

    static GateResult evaluate(Path root, Path staging) {
        List<Path> artifacts = new ArrayList<>();
        for (Path m : SecurityGate.modules(root)) {
            artifacts.addAll(list(m.resolve("target"), p -> p.endsWith(".jar") || p.endsWith("-sbom.json")));
        }
        artifacts.addAll(list(root.resolve("target"), p -> p.equals("lantern-sbom.json")));
        if (artifacts.isEmpty()) {
            return new GateResult("signing", false, "no jars or SBOMs under " + root + " (build first: ./lantern test)");
        }
        clean(staging);
        List<Path> staged = new ArrayList<>();
        for (Path p : artifacts) {
            Path to = staging.resolve(p.getFileName().toString().endsWith(".jar") ? "jars" : "sbom").resolve(p.getFileName());
            copy(p, to);
            staged.add(to);
        }
        KeyPair key = SignedManifest.newKeyPair();
        Path manifest = SignedManifest.sign(staging, staged, key.getPrivate());
        try { // for a person to check the staging folder with lantern verify afterwards
            Files.writeString(staging.resolve(VerifyCommand.PUBLIC_KEY), SignedManifest.encode(key.getPublic()) + "\n");
        } catch (IOException e) {
            throw new LanternException("gate signing: cannot write the public key: " + TextFiles.reason(e), e);
        }
        int verified;
        try {
            verified = SignedManifest.verify(manifest, key.getPublic()).size();
        } catch (VerificationException e) {
            return new GateResult("signing", false, "the untouched artifacts do not verify: " + e.getMessage());
        }
        List<String> problems = new ArrayList<>();
        String jar = "jars/" + staged.stream().filter(p -> p.toString().endsWith(".jar")).findFirst().orElseThrow().getFileName();
        String sbom = "sbom/" + staged.stream().filter(p -> p.toString().endsWith(".json")).findFirst().orElseThrow().getFileName();
        for (String victim : List.of(jar, sbom, SignedManifest.MANIFEST)) {
            Path copy = staging.resolveSibling(staging.getFileName() + "-tampered");
            clean(copy);
            copyTree(staging, copy);
            flipOneByte(copy.resolve(victim));
            try {
                SignedManifest.verify(copy.resolve(SignedManifest.MANIFEST), key.getPublic());
                problems.add("a flipped byte in " + victim + " verified");
            } catch (VerificationException e) {
                if (!e.file().equals(victim)) {
                    problems.add("a flipped byte in " + victim + " was refused naming " + e.file());
                }
            }
            clean(copy);
        }
        String figure = verified + " artifacts (" + staged.stream().filter(p -> p.toString().endsWith(".jar")).count() + " jars, "
                + staged.stream().filter(p -> p.toString().endsWith(".json")).count() + " SBOMs) signed with a throwaway Ed25519 key and "
                + "verified; a flipped byte in a jar, an SBOM and the manifest refused, each named";
        return new GateResult("signing", problems.isEmpty(), problems.isEmpty() ? figure : figure + ": " + String.join("; ", problems));
    }

    /** Flips the bits of the byte in the middle of {@code f}. */
    static void flipOneByte(Path f) {
        try {
            byte[] b = Files.readAllBytes(f);
            b[b.length / 2] ^= (byte) 0xff;
            Files.write(f, b);
        } catch (IOException e) {
            throw new LanternException("gate signing: cannot tamper with " + f + ": " + TextFiles.reason(e), e);
        }
    }

    private static List<Path> list(Path dir, java.util.function.Predicate<String> name) {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> Files.isRegularFile(p) && name.test(p.getFileName().toString())).sorted().toList();
        } catch (IOException e) {
            throw new LanternException("gate signing: cannot list " + dir + ": " + TextFiles.reason(e), e);
        }
    }

    private static void copy(Path from, Path to) {
        try {
            Files.createDirectories(to.getParent());
            Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new LanternException("gate signing: cannot copy " + from + ": " + TextFiles.reason(e), e);
        }
    }

    private static void copyTree(Path from, Path to) {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                copy(p, to.resolve(from.relativize(p).toString()));
            }
        } catch (IOException e) {
            throw new LanternException("gate signing: cannot copy " + from + ": " + TextFiles.reason(e), e);
        }
    }

    private static void clean(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new LanternException("gate signing: cannot empty " + dir + ": " + TextFiles.reason(e), e);
        }
    }
}
