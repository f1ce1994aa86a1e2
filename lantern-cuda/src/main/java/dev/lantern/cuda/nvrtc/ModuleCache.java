package dev.lantern.cuda.nvrtc;

import dev.lantern.trace.RuntimeCounters;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.trace.Span;
import dev.lantern.trace.Tracing;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * CUDA C → cubin for one target, cached on disk.
 *
 * <p>Key = SHA-256 over {arch, SHA-256(source), options, compiler version, driver version,
 * caller's specialisation key}, each field length-prefixed so no two field lists collide.
 * Entry = {@code <dir>/<key>.cubin}: a 48-byte header (magic "LNTNCUB1", payload length as a
 * big-endian int64, SHA-256 of the payload) then the cubin. An entry is written to a temp
 * file in the same folder and renamed into place atomically, so a reader sees either no
 * entry or a whole one; on load the length and hash are checked, and a truncated or corrupt
 * entry is deleted and recompiled, never loaded.
 *
 * <p>The compiler is a function ({@link Compiler}) so tests can stand in for NVRTC; on a device it is
 * NVRTC loaded on first need ({@link LazyNvrtc}), and cubins of a verified package
 * ({@link PrebuiltCubins}) come before the disk and the compiler.
 */
public final class ModuleCache {
    private static final System.Logger LOG = System.getLogger(ModuleCache.class.getName());
    static final byte[] MAGIC = "LNTNCUB1".getBytes(StandardCharsets.US_ASCII);
    static final int HEADER_BYTES = 8 + 8 + 32;
    public static final String DIR_ENV = "LANTERN_KERNEL_CACHE";

    /** Source + options → cubin; throws {@link KernelCompileException}-like errors with the log. */
    public interface Compiler {
        /** Compiler output: a cubin, or null with the compiler's log explaining why not. */
        record Result(byte[] cubin, String log) {}

        Result compile(String source, String name, String arch, List<String> options);

        /** Part of the cache key, e.g. "nvrtc 13.0". */
        String version();
    }

    /** Where an entry came from, with its key: for logs, metrics and tests. */
    public record Entry(String key, byte[] cubin, boolean fromDisk) {}

    private final Path dir;
    private final Compiler compiler;
    private final String arch;
    private final int driverVersion;
    private final AtomicLong hits = new AtomicLong();
    private final AtomicLong compiles = new AtomicLong();
    private final AtomicLong discarded = new AtomicLong();

    public ModuleCache(Path dir, Compiler compiler, String arch, int driverVersion) {
        this.dir = dir;
        this.compiler = compiler;
        this.arch = arch;
        this.driverVersion = driverVersion;
    }

    /** The NVRTC-backed cache for a device, under {@link #defaultDirectory()}. */
    public static ModuleCache forDevice(CudaDevice device) {
        return forDevice(device, defaultDirectory());
    }

    public static ModuleCache forDevice(CudaDevice device, Path dir) {
        return new ModuleCache(dir, new LazyNvrtc(device.libraries()), device.target().arch(),
                device.driver().driverVersion());
    }

    /** {@code $LANTERN_KERNEL_CACHE}, else {@code ~/.cache/lantern/kernels}. */
    public static Path defaultDirectory() {
        String env = System.getenv(DIR_ENV);
        if (env != null && !env.isBlank()) {
            return Path.of(env);
        }
        return Path.of(System.getProperty("user.home"), ".cache", "lantern", "kernels");
    }

    public Path directory() {
        return dir;
    }

    /** The cache key of {@code src} for this target, compiler and driver (64 hex digits). */
    public String keyOf(KernelSource src) {
        MessageDigest key = sha256();
        field(key, "arch", src.archFor(arch));
        field(key, "source", HexFormat.of().formatHex(sha256().digest(src.code().getBytes(StandardCharsets.UTF_8))));
        field(key, "options", String.join("\u0000", src.options()));
        field(key, "compiler", compiler.version());
        field(key, "driver", Integer.toString(driverVersion));
        field(key, "spec", src.specKey());
        return HexFormat.of().formatHex(key.digest());
    }

    private static void field(MessageDigest md, String name, String value) {
        byte[] v = value.getBytes(StandardCharsets.UTF_8);
        md.update(name.getBytes(StandardCharsets.US_ASCII));
        md.update(ByteBuffer.allocate(4).putInt(v.length).array());
        md.update(v);
    }

    /**
     * The cubin for {@code src}: a {@link PrebuiltCubins} one when registered (NVRTC and the disk untouched),
     * else from disk when a valid entry exists, else compiled and stored.
     */
    public Entry get(KernelSource src) {
        java.util.Optional<byte[]> prebuilt = PrebuiltCubins.lookup(src.archFor(arch), src.code());
        if (prebuilt.isPresent()) {
            hits.incrementAndGet();
            RuntimeCounters.cacheHits(1); // compile_cache_hits_total
            return new Entry("prebuilt-" + PrebuiltCubins.key(src.archFor(arch), src.code()).replace(':', '-'), prebuilt.get(), true);
        }
        String key = keyOf(src);
        Path file = entryPath(key);
        byte[] cached = read(file);
        if (cached != null) {
            hits.incrementAndGet();
            RuntimeCounters.cacheHits(1);
            return new Entry(key, cached, true);
        }
        Compiler.Result result;
        try (Span span = Tracing.span("nvrtc " + src.name(), "nvrtc")) {
            result = compiler.compile(src.code(), src.name(), src.archFor(arch), src.options());
        }
        compiles.incrementAndGet();
        RuntimeCounters.compiled(1); // compiles_total, a failed compile included: NVRTC ran
        if (result.cubin() == null) {
            throw new KernelCompileException(src.name(), src.archFor(arch), result.log(), writeFailedSource(src, key));
        }
        write(file, result.cubin());
        return new Entry(key, result.cubin(), false);
    }

    /** Compiles (or loads) and loads the module onto {@code device}. */
    public CudaModule load(CudaDevice device, KernelSource src) {
        Entry e = get(src);
        return device.loadModule(e.cubin(), e.key());
    }

    public Path entryPath(String key) {
        return dir.resolve(key + ".cubin");
    }

    public long hits() {
        return hits.get();
    }

    public long compiles() {
        return compiles.get();
    }

    /** Entries found truncated or corrupt, deleted and recompiled. */
    public long discarded() {
        return discarded.get();
    }

    /** The payload of a valid entry, or null when absent; a bad entry is deleted. */
    private byte[] read(Path file) {
        byte[] all;
        try {
            all = Files.readAllBytes(file);
        } catch (java.nio.file.NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            LOG.log(Level.WARNING, "kernel cache entry {0} unreadable, recompiling: {1}", file, e.getMessage());
            return null;
        }
        String problem = validate(all);
        if (problem == null) {
            return Arrays.copyOfRange(all, HEADER_BYTES, all.length);
        }
        discarded.incrementAndGet();
        LOG.log(Level.WARNING, "kernel cache entry {0} is {1}; deleting and recompiling", file, problem);
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            LOG.log(Level.WARNING, "could not delete {0}: {1}", file, e.getMessage());
        }
        return null;
    }

    /** Null when {@code entry} is whole and matches its hash, else what is wrong with it. */
    static String validate(byte[] entry) {
        if (entry.length < HEADER_BYTES) {
            return "truncated (" + entry.length + " bytes, header needs " + HEADER_BYTES + ")";
        }
        if (!Arrays.equals(entry, 0, 8, MAGIC, 0, 8)) {
            return "not a Lantern cubin entry (bad magic)";
        }
        long length = ByteBuffer.wrap(entry, 8, 8).getLong();
        if (length != entry.length - HEADER_BYTES) {
            return "truncated (payload " + (entry.length - HEADER_BYTES) + " of " + length + " bytes)";
        }
        byte[] expected = Arrays.copyOfRange(entry, 16, HEADER_BYTES);
        MessageDigest md = sha256();
        md.update(entry, HEADER_BYTES, entry.length - HEADER_BYTES);
        if (!MessageDigest.isEqual(expected, md.digest())) {
            return "corrupt (SHA-256 mismatch)";
        }
        return null;
    }

    static byte[] encode(byte[] cubin) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES + cubin.length);
        b.put(MAGIC).putLong(cubin.length).put(sha256().digest(cubin)).put(cubin);
        return b.array();
    }

    /** Temp file in the same folder, forced to disk, then renamed over the entry atomically. */
    private void write(Path file, byte[] cubin) {
        Path tmp = null;
        try {
            Files.createDirectories(dir);
            tmp = Files.createTempFile(dir, file.getFileName().toString() + ".", ".tmp");
            try (var ch = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE)) {
                ByteBuffer buf = ByteBuffer.wrap(encode(cubin));
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
            tmp = null;
        } catch (IOException e) {
            // A read-only or full cache folder costs a recompile next time, nothing more.
            LOG.log(Level.WARNING, "could not store kernel cache entry {0}: {1}", file, e.getMessage());
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException ignored) {
                    // best effort
                }
            }
        }
    }

    private Path writeFailedSource(KernelSource src, String key) {
        String fileName = src.name() + "-" + key.substring(0, 12) + ".cu";
        for (Path folder : List.of(dir.resolve("failed"), Path.of(System.getProperty("java.io.tmpdir")))) {
            try {
                Files.createDirectories(folder);
                Path f = folder.resolve(fileName);
                Files.writeString(f, src.code());
                return f;
            } catch (IOException e) {
                // try the next folder
            }
        }
        return Path.of("<could not write " + fileName + ">");
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
