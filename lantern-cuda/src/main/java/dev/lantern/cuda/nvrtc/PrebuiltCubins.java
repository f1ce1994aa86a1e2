package dev.lantern.cuda.nvrtc;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cubins built ahead of time (a verified compiled model package), by architecture and the SHA-256 of
 * the exact CUDA C they were built from. {@link ModuleCache#get} takes a kernel from here before it
 * looks at its disk cache or NVRTC, so a program whose every kernel is here loads through the driver
 * alone; the CUDA backend counts as available without NVRTC once any cubin is registered. The caller
 * registers only cubins whose bytes it has verified: this registry trusts them as given.
 *
 * <p>{@code LANTERN_DISABLE_NVRTC=1} makes Lantern behave as if NVRTC were absent, to show on a GPU
 * machine with NVRTC installed that a package runs without it.
 */
public final class PrebuiltCubins {
    public static final String DISABLE_NVRTC_ENV = "LANTERN_DISABLE_NVRTC";
    private static final Map<String, byte[]> CUBINS = new ConcurrentHashMap<>();

    private PrebuiltCubins() {}

    /** Registers {@code cubin}, built for {@code arch} (e.g. {@code sm_90}, {@code sm_90a}) from {@code source}. */
    public static void register(String arch, String source, byte[] cubin) {
        CUBINS.put(key(arch, source), cubin.clone());
    }

    /** The cubin built for {@code arch} from exactly {@code source}, if registered. */
    public static Optional<byte[]> lookup(String arch, String source) {
        return Optional.ofNullable(CUBINS.get(key(arch, source))).map(byte[]::clone);
    }

    /** How many cubins are registered. */
    public static int count() {
        return CUBINS.size();
    }

    /** Forgets every registered cubin (tests). */
    public static void clear() {
        CUBINS.clear();
    }

    /** Whether {@link #DISABLE_NVRTC_ENV} asks Lantern to act as if NVRTC were absent. */
    public static boolean nvrtcDisabled() {
        return "1".equals(System.getenv(DISABLE_NVRTC_ENV));
    }

    /** {@code arch} and the SHA-256 of {@code source}, the registry's key. */
    static String key(String arch, String source) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(source.getBytes(StandardCharsets.UTF_8));
            return arch + ":" + HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
