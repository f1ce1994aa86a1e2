package dev.lantern.cuda.codegen;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/** Whether nvcc is on the PATH: the {@code @Tag("nvcc")} tests skip themselves when it is not. */
public final class NvccOnPath {
    private NvccOnPath() {}

    public static boolean found() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String dir : path.split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "nvcc"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * nvcc's architecture flag for a generated kernel: {@code -arch=sm_90}, or for an
     * arch-specific (wgmma) kernel the {@code -gencode} form for sm_90a (the {@code -arch=sm_90a}
     * shorthand also runs a plain sm_90 pass that rejects wgmma on nvcc 13.0).
     */
    public static String archFlag(dev.lantern.cuda.codegen.CudaKernelSource src, dev.lantern.cuda.codegen.CudaTarget target) {
        String arch = src.arch(target);
        return src.archSpecific() ? "-gencode=arch=compute_" + arch.substring(3) + ",code=" + arch : "-arch=" + arch;
    }

    /**
     * {@code src} compiled to a cubin for {@code target} in {@code dir} ({@code -O3}); the empty string
     * when nvcc succeeds, else the entry, nvcc's output and the command that reproduces it.
     */
    public static String compileCubin(CudaKernelSource src, CudaTarget target, Path dir, int timeoutSeconds) throws Exception {
        Path cu = dir.resolve(src.entry() + ".cu");
        Files.writeString(cu, src.source());
        java.util.List<String> cmd = java.util.List.of("nvcc", archFlag(src, target), "-cubin", "-O3", "-std=c++17",
                "-o", dir.resolve(src.entry() + ".cubin").toString(), cu.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (!p.waitFor(timeoutSeconds, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return src.entry() + ": nvcc timed out\n";
        }
        return p.exitValue() == 0 ? "" : src.entry() + ":\n" + log + "\nreproduce: " + String.join(" ", cmd) + "\n";
    }

    /**
     * What {@code ptxas -v} said of one kernel: {@code failure} is empty when nvcc succeeded (else the
     * entry, nvcc's output and the command that reproduces it); registers and spill bytes are −1 when
     * the log does not report them.
     */
    public record Ptxas(String failure, String log, int registers, int spillStores, int spillLoads) {
        /** Spill stores and loads together. */
        public int spillBytes() {
            return spillStores + spillLoads;
        }
    }

    /** {@code src} compiled to a cubin for {@code target} in {@code dir} ({@code -O3}, {@code -Xptxas -v}), with ptxas's figures. */
    public static Ptxas ptxas(CudaKernelSource src, CudaTarget target, Path dir, int timeoutSeconds) throws Exception {
        Path cu = dir.resolve(src.entry() + ".cu");
        Files.writeString(cu, src.source());
        java.util.List<String> cmd = java.util.List.of("nvcc", archFlag(src, target), "-cubin", "-O3", "-std=c++17", "-Xptxas", "-v",
                "-o", dir.resolve(src.entry() + ".cubin").toString(), cu.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        if (!p.waitFor(timeoutSeconds, java.util.concurrent.TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return new Ptxas(src.entry() + ": nvcc timed out\n", log, -1, -1, -1);
        }
        if (p.exitValue() != 0) {
            return new Ptxas(src.entry() + ":\n" + log + "\nreproduce: " + String.join(" ", cmd) + "\n", log, -1, -1, -1);
        }
        java.util.regex.Matcher r = java.util.regex.Pattern.compile("Used (\\d+) registers").matcher(log);
        java.util.regex.Matcher sp = java.util.regex.Pattern.compile("(\\d+) bytes spill stores, (\\d+) bytes spill loads").matcher(log);
        boolean spills = sp.find();
        return new Ptxas("", log, r.find() ? Integer.parseInt(r.group(1)) : -1, spills ? Integer.parseInt(sp.group(1)) : -1,
                spills ? Integer.parseInt(sp.group(2)) : -1);
    }
}
