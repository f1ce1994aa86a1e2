package dev.lantern.cli;

import dev.lantern.cuda.codegen.CudaKernelSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Ahead-of-time cubins for a package, built with the CUDA toolkit's {@code nvcc} (a separate
 * process, no GPU needed): the options match what NVRTC is given at run time ({@code -std=c++17},
 * the kernel's own arch, sm_90 or sm_90a). Without nvcc the package holds the CUDA C only, and
 * {@link #missing} says why.
 */
final class CubinBuilder {
    private static final long TIMEOUT_SECONDS = 300;
    private final Path nvcc;

    private CubinBuilder(Path nvcc) {
        this.nvcc = nvcc;
    }

    /** The builder for the first nvcc found ($CUDA_HOME/bin, $PATH, /usr/local/cuda/bin), if any. */
    static Optional<CubinBuilder> find() {
        List<Path> candidates = new ArrayList<>();
        String home = System.getenv("CUDA_HOME");
        if (home != null && !home.isBlank()) {
            candidates.add(Path.of(home, "bin", "nvcc"));
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                if (!d.isBlank()) {
                    candidates.add(Path.of(d, "nvcc"));
                }
            }
        }
        candidates.add(Path.of("/usr/local/cuda/bin/nvcc"));
        return candidates.stream().filter(Files::isExecutable).findFirst().map(CubinBuilder::new);
    }

    /** What a package lacks when no nvcc is found. */
    static String missing() {
        return "no nvcc found (CUDA_HOME/bin, PATH, /usr/local/cuda/bin): the package holds the CUDA C only, compiled by NVRTC at run time";
    }

    /** {@code nvcc --version}'s last line, for the package's record. */
    String version() {
        try {
            Process p = new ProcessBuilder(nvcc.toString(), "--version").redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            p.waitFor(30, TimeUnit.SECONDS);
            return text.substring(text.lastIndexOf('\n') + 1).strip();
        } catch (IOException e) {
            return "nvcc (version unknown: " + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "nvcc (version unknown: interrupted)";
        }
    }

    /** {@code src}'s cubin for {@code arch}; a {@link dev.lantern.ir.LanternException} with nvcc's log when it fails. */
    byte[] cubin(CudaKernelSource src, String arch) {
        return cubin(src.entry(), src.source(), arch);
    }

    /** The cubin of {@code source} (named {@code name} in messages) for {@code arch}. */
    byte[] cubin(String name, String source, String arch) {
        Path dir = null;
        try {
            dir = Files.createTempDirectory("lantern-nvcc-");
            Path cu = dir.resolve(name + ".cu");
            Path out = dir.resolve(name + ".cubin");
            Files.writeString(cu, source);
            Process p = new ProcessBuilder(nvcc.toString(), "-cubin", "-arch=" + arch, "-std=c++17", "-o", out.toString(), cu.toString())
                    .redirectErrorStream(true).start();
            byte[] log = p.getInputStream().readAllBytes();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new dev.lantern.ir.LanternException("nvcc took over " + TIMEOUT_SECONDS + " s on kernel " + name);
            }
            if (p.exitValue() != 0 || !Files.isRegularFile(out)) {
                throw new dev.lantern.ir.LanternException("nvcc failed on kernel " + name + " (" + arch + "): "
                        + ExitStatus.oneLine(new String(log, StandardCharsets.UTF_8)));
            }
            return Files.readAllBytes(out);
        } catch (IOException e) {
            throw new dev.lantern.ir.LanternException("nvcc: cannot run " + nvcc + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new dev.lantern.ir.LanternException("nvcc: interrupted", e);
        } finally {
            if (dir != null) {
                try (var s = Files.walk(dir)) {
                    s.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
                } catch (IOException ignored) {
                    // a temp folder
                }
            }
        }
    }
}
