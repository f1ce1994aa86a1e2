package dev.lantern.cuda.ffi;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Finds NVIDIA's shared libraries in the order DESIGN.md fixes:
 * <ol>
 *   <li>{@code LANTERN_CUDA_LIBS}: a ':'-separated list of folders or library files;</li>
 *   <li>the usual toolkit and driver folders ({@link #SYSTEM_DIRS});</li>
 *   <li>{@code site-packages/nvidia/*}{@code /lib} of any Python found on the machine (pip wheels);</li>
 *   <li>the dynamic loader's own search ({@code dlopen(name)}: ld.so.cache, LD_LIBRARY_PATH).</li>
 * </ol>
 * Every place tried is recorded in a {@link LibraryProbe}, so doctor can say where it looked.
 * Libraries load into {@link Arena#global()}: they stay loaded for the life of the JVM.
 */
public final class LibraryLocator {
    public static final String ENV = "LANTERN_CUDA_LIBS";
    public static final String LOADER_DEFAULT = "loader default";

    public static final List<Path> SYSTEM_DIRS = List.of(
            Path.of("/usr/local/cuda/targets/x86_64-linux/lib"),
            Path.of("/usr/local/cuda/lib64"),
            Path.of("/usr/lib/x86_64-linux-gnu"),
            Path.of("/usr/local/nvidia/lib64"));

    private final List<Path> userEntries;
    private final List<Path> dirs;
    private final boolean useLoaderDefault;

    /**
     * @param userEntries       from {@code LANTERN_CUDA_LIBS}: folders or files, tried first
     * @param dirs              folders tried next (system folders, then Python's nvidia/*{@literal /}lib)
     * @param useLoaderDefault  whether to end with a bare {@code dlopen(name)}
     */
    public LibraryLocator(List<Path> userEntries, List<Path> dirs, boolean useLoaderDefault) {
        this.userEntries = List.copyOf(userEntries);
        this.dirs = List.copyOf(dirs);
        this.useLoaderDefault = useLoaderDefault;
    }

    /** The locator for this process: environment, system folders, Python wheels, loader. */
    public static LibraryLocator fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    public static LibraryLocator fromEnvironment(Map<String, String> env) {
        List<Path> user = parsePathList(env.get(ENV));
        List<Path> all = new ArrayList<>(SYSTEM_DIRS);
        all.addAll(pythonNvidiaLibDirs(env));
        return new LibraryLocator(user, all, true);
    }

    /** The folders searched after LANTERN_CUDA_LIBS's own entries (system, then Python wheels). */
    public List<Path> searchDirs() {
        List<Path> out = new ArrayList<>();
        for (Path p : userEntries) {
            out.add(Files.isDirectory(p) || p.getParent() == null ? p : p.getParent());
        }
        out.addAll(dirs);
        return out;
    }

    static List<Path> parsePathList(String value) {
        List<Path> out = new ArrayList<>();
        if (value == null) {
            return out;
        }
        for (String part : value.split(":")) {
            if (!part.isBlank()) {
                out.add(Path.of(part.strip()));
            }
        }
        return out;
    }

    /**
     * Python {@code site-packages/nvidia/<pkg>/lib} folders (wheels such as nvidia-cuda-nvrtc,
     * nvidia-cublas, or the cu13 bundle), from virtualenv/conda prefixes, PYTHONPATH and the
     * usual interpreter prefixes. We do not run Python: looking at folders is enough.
     */
    static List<Path> pythonNvidiaLibDirs(Map<String, String> env) {
        LinkedHashSet<Path> sitePackages = new LinkedHashSet<>();
        for (String var : List.of("VIRTUAL_ENV", "CONDA_PREFIX")) {
            String prefix = env.get(var);
            if (prefix != null && !prefix.isBlank()) {
                sitePackages.addAll(globPythonDirs(Path.of(prefix, "lib")));
            }
        }
        for (Path p : parsePathList(env.get("PYTHONPATH"))) {
            sitePackages.add(p);
        }
        String home = env.get("HOME");
        List<Path> prefixes = new ArrayList<>(List.of(Path.of("/usr/local/lib"), Path.of("/usr/lib")));
        if (home != null) {
            prefixes.add(Path.of(home, ".local", "lib"));
        }
        for (Path prefix : prefixes) {
            sitePackages.addAll(globPythonDirs(prefix));
        }
        List<Path> out = new ArrayList<>();
        for (Path sp : sitePackages) {
            Path nvidia = sp.resolve("nvidia");
            if (!Files.isDirectory(nvidia)) {
                continue;
            }
            try (DirectoryStream<Path> pkgs = Files.newDirectoryStream(nvidia)) {
                List<Path> found = new ArrayList<>();
                for (Path pkg : pkgs) {
                    if (Files.isDirectory(pkg.resolve("lib"))) {
                        found.add(pkg.resolve("lib"));
                    }
                }
                found.sort(null); // directory order is not stable between machines
                out.addAll(found);
            } catch (IOException e) {
                // unreadable folder: skip it, as the loader would
            }
        }
        return out;
    }

    /** {@code <prefix>/python3.*{@literal /}{site,dist}-packages}, sorted. */
    private static List<Path> globPythonDirs(Path libPrefix) {
        List<Path> out = new ArrayList<>();
        if (!Files.isDirectory(libPrefix)) {
            return out;
        }
        try (DirectoryStream<Path> pys = Files.newDirectoryStream(libPrefix, "python3*")) {
            for (Path py : pys) {
                for (String sub : List.of("site-packages", "dist-packages")) {
                    if (Files.isDirectory(py.resolve(sub))) {
                        out.add(py.resolve(sub));
                    }
                }
            }
        } catch (IOException e) {
            return out;
        }
        out.sort(null);
        return out;
    }

    /** The result of {@link #locate}: the probe record, and the lookup when found. */
    public record Located(LibraryProbe probe, Optional<SymbolLookup> lookup) {}

    /** Looks for the first of {@code fileNames} that loads, in the documented order. */
    public Located locate(String label, List<String> fileNames) {
        List<String> looked = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        // 1. LANTERN_CUDA_LIBS: a file entry is taken when its name matches; a folder is searched.
        for (Path entry : userEntries) {
            looked.add(entry.toString());
            for (String name : fileNames) {
                Path candidate = Files.isDirectory(entry) ? entry.resolve(name)
                        : (entry.getFileName() != null && entry.getFileName().toString().equals(name) ? entry : null);
                Optional<SymbolLookup> lib = tryPath(candidate, failures);
                if (lib.isPresent()) {
                    return found(label, fileNames, looked, candidate.toString(), failures, lib.get());
                }
            }
        }
        // 2 + 3. System folders, then Python wheels.
        for (Path dir : dirs) {
            looked.add(dir.toString());
            for (String name : fileNames) {
                Path candidate = dir.resolve(name);
                Optional<SymbolLookup> lib = tryPath(candidate, failures);
                if (lib.isPresent()) {
                    return found(label, fileNames, looked, candidate.toString(), failures, lib.get());
                }
            }
        }
        // 4. The loader's default search.
        if (useLoaderDefault) {
            looked.add(LOADER_DEFAULT);
            for (String name : fileNames) {
                try {
                    SymbolLookup lib = SymbolLookup.libraryLookup(name, Arena.global());
                    return found(label, fileNames, looked, LOADER_DEFAULT + " (" + name + ")", failures, lib);
                } catch (IllegalArgumentException | IllegalCallerException e) {
                    // not known to the loader either; the probe already says "loader default"
                }
            }
        }
        return new Located(new LibraryProbe(label, fileNames, looked, null, failures), Optional.empty());
    }

    private static Located found(String label, List<String> names, List<String> looked, String where,
                                 List<String> failures, SymbolLookup lib) {
        return new Located(new LibraryProbe(label, names, looked, where, failures), Optional.of(lib));
    }

    private static Optional<SymbolLookup> tryPath(Path candidate, List<String> failures) {
        if (candidate == null || !Files.isRegularFile(candidate)) {
            return Optional.empty();
        }
        try {
            return Optional.of(SymbolLookup.libraryLookup(candidate, Arena.global()));
        } catch (IllegalArgumentException | IllegalCallerException e) {
            failures.add(candidate + ": " + e.getMessage());
            return Optional.empty();
        }
    }
}
