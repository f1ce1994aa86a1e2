package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.Step;
import dev.lantern.cuda.lower.StepText;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.IrPrinter;
import dev.lantern.ir.LanternException;
import dev.lantern.kernel.Kernel;
import dev.lantern.kernel.KernelDump;
import dev.lantern.sign.SignedManifest;
import dev.lantern.sign.SignedPackage;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * {@code lantern compile MODEL --device cpu|cuda --package OUT.lpk [--key-env NAME]}: one signed file
 * ({@link SignedPackage}) holding the model as given, the optimised IR, the kernel list and memory
 * plan (the compiled plan, hashed into {@link PackageInfo#planSha256}), the kernel cache keys, the
 * autotune record, and for cuda the device steps, each kernel's CUDA C and, where nvcc is present,
 * its cubin for the H200 ({@code sm_90}, {@code sm_90a} for wgmma kernels). Signed with the release key
 * {@code --key-env} names, else a throwaway key whose public half is embedded (docs/security.md says
 * what each proves).
 */
final class ModelPackager {
    static final String OPTIMISED_IR = "ir/optimised.ir";
    static final String KERNELS = "plan/kernels.txt";
    static final String MEMORY_PLAN = "plan/memory.txt";
    static final String KERNEL_KEYS = "kernel-keys.txt";
    static final String AUTOTUNE = "autotune.txt";
    static final String STEPS = "cuda/steps.txt";

    private ModelPackager() {}

    static int run(Args a, RepeatedOptions repeated, PrintStream out) {
        String file = a.positional().getFirst();
        Path source = Path.of(file);
        if (!Files.isRegularFile(source)) {
            throw new UsageException("compile --package: " + file + " is not a file (a package takes an .ir file or an ONNX model)");
        }
        Device device = UsageException.option("compile", () -> Device.parse(a.get("device", "cpu")));
        KeyPair key = key(a.get("key-env", null));
        CompileCommand.Compiled c = CompileCommand.compile(a, repeated, device, file);
        SortedMap<String, byte[]> entries = planEntries(c.model());
        String modelEntry = "model/" + source.getFileName();
        try {
            entries.put(modelEntry, Files.readAllBytes(source));
        } catch (IOException e) {
            throw new LanternException("compile --package: cannot read " + file + ": " + TextFiles.reason(e), e);
        }
        StringBuilder keys = new StringBuilder("# kind key (cpu kernels: the kernel cache key; cuda kernels: entry arch source-sha256 variant)\n");
        for (Kernel k : c.model().kernels()) {
            keys.append("cpu ").append(k.key().hash()).append('\n');
        }
        String arch;
        String cubins;
        if (device.kind().equals("cuda")) {
            arch = CudaTarget.H200.arch();
            cubins = cudaEntries(c.model(), entries, keys);
        } else {
            arch = System.getProperty("os.arch");
            cubins = "none: a cpu package";
        }
        entries.put(KERNEL_KEYS, text(keys.toString()));
        // Autotuning measures on the GPU; compile runs without one, so the plan uses the target's defaults.
        entries.put(AUTOTUNE, text("# autotune choices: none; compiled without a GPU, every kernel uses the target's default tiles\n"));
        PackageInfo info = new PackageInfo(device.kind(), arch, modelEntry, c.options(), planSha256(entries), cubins);
        entries.put(PackageInfo.ENTRY, info.bytes());
        Path target = Path.of(a.get("package", null));
        SignedPackage.write(target, entries, key);
        out.println("wrote " + target + ": " + info.target() + ", " + (entries.size() + 3) + " entries, plan sha256 "
                + info.planSha256().substring(0, 16) + ", cubins: " + cubins);
        out.println("signed with " + (a.get("key-env", null) == null ? "a throwaway key" : "the key in $" + a.get("key-env", null))
                + "; public key " + SignedManifest.encode(key.getPublic()));
        return ExitStatus.OK;
    }

    /** The compiled plan's entries: optimised IR, kernel list, memory plan. */
    static SortedMap<String, byte[]> planEntries(CompiledModel m) {
        SortedMap<String, byte[]> e = new TreeMap<>();
        e.put(OPTIMISED_IR, text(IrPrinter.print(m.graph())));
        e.put(KERNELS, text(KernelDump.print(m.kernels())));
        e.put(MEMORY_PLAN, text(m.plan().dump()));
        return e;
    }

    /** SHA-256 over the plan entries in name order, each as name, NUL, length, NUL, bytes. */
    static String planSha256(Map<String, byte[]> entries) {
        try {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            for (String name : List.of(KERNELS, MEMORY_PLAN, OPTIMISED_IR)) {
                byte[] b = entries.get(name);
                if (b == null) {
                    throw new dev.lantern.sign.VerificationException(name, "missing from the package");
                }
                md.update((name + "\0" + b.length + "\0").getBytes(StandardCharsets.UTF_8));
                md.update(b);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    /** Adds the steps, sources and cubins of the H200 lowering; returns how the cubins were built. */
    private static String cudaEntries(CompiledModel m, SortedMap<String, byte[]> entries, StringBuilder keys) {
        CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
        entries.put(STEPS, text(StepText.steps(l)));
        Map<String, CudaKernelSource> kernels = new TreeMap<>();
        for (Step s : l.steps()) {
            if (s instanceof Step.Launch launch) {
                kernels.put(launch.source().entry(), launch.source());
            }
        }
        Optional<CubinBuilder> nvcc = CubinBuilder.find();
        for (CudaKernelSource k : kernels.values()) {
            String arch = k.arch(CudaTarget.H200);
            entries.put("cuda/" + k.entry() + ".cu", text(k.source()));
            keys.append("cuda ").append(k.entry()).append(' ').append(arch).append(' ').append(k.sourceHash()).append(' ')
                    .append(k.variant()).append('\n');
            nvcc.ifPresent(b -> entries.put("cuda/" + k.entry() + "." + arch + ".cubin", b.cubin(k, arch)));
        }
        // the device fill kernels: random weights on the GPU (Weights.random) launch them
        dev.lantern.cuda.nvrtc.KernelSource fill = dev.lantern.cuda.engine.DeviceFill.source();
        String fillArch = fill.archFor(CudaTarget.H200.arch());
        entries.put("cuda/" + fill.name() + ".cu", text(fill.code()));
        nvcc.ifPresent(b -> entries.put("cuda/" + fill.name() + "." + fillArch + ".cubin", b.cubin(fill.name(), fill.code(), fillArch)));
        return nvcc.map(b -> (kernels.size() + 1) + " built with " + b.version()).orElse("none: " + CubinBuilder.missing());
    }

    private static KeyPair key(String env) {
        if (env == null) {
            return SignedManifest.newKeyPair();
        }
        String text = System.getenv(env);
        if (text == null || text.isBlank()) {
            throw new UsageException("compile: --key-env " + env + ": no such environment variable, or empty");
        }
        return VerifyCommand.releaseKey(text);
    }

    private static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
