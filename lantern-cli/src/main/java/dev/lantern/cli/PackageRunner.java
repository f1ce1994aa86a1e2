package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.ir.LanternException;
import dev.lantern.sign.SignedManifest;
import dev.lantern.sign.SignedPackage;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PublicKey;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * {@code lantern run OUT.lpk [--device cpu|cuda] [--public-key KEY.pub] [run options]}: a compiled model
 * package ({@link ModelPackager}). Before anything is loaded the package is verified ({@link SignedPackage#read}:
 * the signature and every entry's hash), its target is checked against this machine (a package for
 * another device or architecture is refused with the reason), and the packaged model is compiled here
 * with the packaged options: the plan this gives must hash to the packaged plan, or the run is refused.
 * Then the packaged model runs as {@code lantern run} would run it, with the packaged {@code --amp} and shapes.
 */
final class PackageRunner {
    private PackageRunner() {}

    /** Whether {@code file} names a package. */
    static boolean isPackage(String file) {
        return file.endsWith(".lpk");
    }

    static int run(List<String> argv, Args a, PrintStream out, PrintStream err) {
        String file = a.positional().getFirst();
        for (String opt : List.of("amp", "batch", "seq", "shape")) {
            if (a.get(opt, null) != null || argv.contains("--" + opt)) {
                throw new UsageException("run: --" + opt + " is fixed by the package " + file + " (compile another package to change it)");
            }
        }
        SignedPackage.Verified pkg = verified("run", file, a.get("public-key", null));
        PackageInfo info = PackageInfo.parse(pkg.entry(PackageInfo.ENTRY));
        String deviceText = a.get("device", "auto");
        Device device = deviceText.equals("auto") ? (info.device().equals("cuda") ? Device.cuda(0) : Device.cpu())
                : UsageException.option("run", () -> Device.parse(deviceText));
        checkTarget(file, info, device);
        int cubins = registerCubins(pkg);
        Path stage = null;
        try {
            stage = Files.createTempDirectory("lantern-lpk-");
            Path model = stage.resolve(Path.of(info.model()).getFileName());
            Files.write(model, pkg.entry(info.model()));
            checkPlan(file, info, pkg, device, model);
            List<String> again = new ArrayList<>();
            again.add(model.toString());
            again.addAll(info.options());
            again.addAll(List.of("--device", device.toString()));
            boolean skip = false;
            for (String s : argv) {
                if (skip) {
                    skip = false;
                } else if (s.equals("--public-key") || s.equals("--device")) {
                    skip = true;
                } else if (!s.equals(file) && !s.startsWith("--public-key=") && !s.startsWith("--device=")) {
                    again.add(s);
                }
            }
            err.println("lantern run: package " + file + " verified (" + info.target() + ", "
                    + (pkg.pinned() ? "the given public key" : "its embedded key " + SignedManifest.encode(pkg.key()).substring(0, 24) + "...")
                    + "), plan sha256 " + info.planSha256().substring(0, 16) + " matches" + (cubins > 0 ? ", " + cubins + " prebuilt cubins" : ""));
            return RunCommand.run(again, out, err);
        } catch (IOException e) {
            throw new LanternException("run: cannot unpack " + file + ": " + TextFiles.reason(e), e);
        } finally {
            deleteTree(stage);
        }
    }

    /** The verified package, with the key in {@code keyFile} when given, else the embedded one. */
    static SignedPackage.Verified verified(String command, String file, String keyFile) {
        PublicKey key = null;
        if (keyFile != null) {
            try {
                key = SignedManifest.decodePublicKey(Files.readString(Path.of(keyFile)));
            } catch (IOException e) {
                throw new UsageException(command + ": --public-key " + keyFile + ": cannot read: " + TextFiles.reason(e));
            }
        }
        if (!Files.isRegularFile(Path.of(file))) {
            throw new UsageException(command + ": " + file + ": no such package file");
        }
        return SignedPackage.read(Path.of(file), key);
    }

    /**
     * Registers each verified {@code cuda/NAME.ARCH.cubin} with the CUDA C it was built from
     * ({@code cuda/NAME.cu}), so that its kernels load through the driver without NVRTC; returns how many.
     */
    static int registerCubins(SignedPackage.Verified pkg) {
        int n = 0;
        for (var e : pkg.entries().entrySet()) {
            String name = e.getKey();
            if (name.startsWith("cuda/") && name.endsWith(".cubin")) {
                String stem = name.substring("cuda/".length(), name.length() - ".cubin".length());
                int dot = stem.lastIndexOf('.');
                String source = new String(pkg.entry("cuda/" + stem.substring(0, dot) + ".cu"), java.nio.charset.StandardCharsets.UTF_8);
                dev.lantern.cuda.nvrtc.PrebuiltCubins.register(stem.substring(dot + 1), source, e.getValue());
                n++;
            }
        }
        return n;
    }

    /** Refuses a package compiled for another device kind or architecture than {@code device}'s. */
    static void checkTarget(String file, PackageInfo info, Device device) {
        if (!info.device().equals(device.kind())) {
            throw new LanternException("refused " + file + ": it is compiled for " + info.target() + " and cannot run on "
                    + device + " (compile a package with --device " + device.kind() + ")");
        }
        String here = device.kind().equals("cuda") ? GpuArch.of(device) : System.getProperty("os.arch");
        if (!info.arch().equals(here)) {
            throw new LanternException("refused " + file + ": it is compiled for " + info.target() + ", this machine's "
                    + device.kind() + " is " + here + " (compile the package for " + here + ")");
        }
    }

    /** Compiles the packaged model here; its plan must be the packaged one, byte for byte (by SHA-256). */
    private static void checkPlan(String file, PackageInfo info, SignedPackage.Verified pkg, Device device, Path model) {
        String packaged = ModelPackager.planSha256(pkg.entries());
        if (!packaged.equals(info.planSha256())) {
            throw new LanternException("refused " + file + ": its plan entries hash to " + packaged + ", its "
                    + PackageInfo.ENTRY + " says " + info.planSha256());
        }
        List<String> argv = new ArrayList<>(List.of(model.toString()));
        argv.addAll(info.options());
        RepeatedOptions repeated = RepeatedOptions.take("compile", argv, Set.of("shape"));
        Args a = Args.parse("compile", repeated.rest(), Set.of(), Set.of("amp", "batch", "seq"));
        CompileCommand.Compiled c = CompileCommand.compile(a, repeated, device, model.toString());
        String here = ModelPackager.planSha256(ModelPackager.planEntries(c.model()));
        if (!here.equals(packaged)) {
            throw new LanternException("refused " + file + ": the plan compiled here (sha256 " + here.substring(0, 16)
                    + ") is not the packaged plan (" + packaged.substring(0, 16) + "): another Lantern version or CPU; recompile the package");
        }
    }

    private static void deleteTree(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp folder
        }
    }
}
