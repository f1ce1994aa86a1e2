package dev.lantern.ir;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** {@code graph_hash}: SHA-256 of the canonical printed graph with SSA names renumbered. Same model, same hash, on any JVM. */
public final class GraphHash {
    private GraphHash() {}

    public static String of(Graph g) {
        return sha256(IrPrinter.print(g.renumbered()));
    }

    public static String sha256(String text) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(md.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError("SHA-256 is required of every JVM", e);
        }
    }
}
