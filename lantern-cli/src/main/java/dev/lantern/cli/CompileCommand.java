package dev.lantern.cli;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.cuda.codegen.CudaTarget;
import dev.lantern.cuda.lower.CudaLowering;
import dev.lantern.cuda.lower.StepText;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.ir.IrPrinter;
import dev.lantern.kernel.KernelDump;

import dev.lantern.onnx.OnnxModel;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Locale;
import java.util.Set;

/**
 * {@code lantern compile FILE.ir --emit ir|kernels|plan|cuda|steps}: one stage of the compiler's
 * output for a graph, as text. {@code ir}, {@code kernels} and {@code plan} are the pass
 * pipeline's for {@code --device}'s target (cpu by default); {@code cuda} (the CUDA C of every
 * kernel) and {@code steps} (the device steps: launches with grid, block, shared memory and
 * arguments, cuBLASLt GEMMs) lower for the H200 ({@link CudaTarget#H200}) and need no GPU.
 * The first line is a comment naming the file, the options and the target. An ONNX model
 * ({@link ModelFormat}) is compiled for the shapes {@code --batch}, {@code --seq} and {@code --shape}
 * bind ({@link OnnxShapes}); the header names them.
 */
final class CompileCommand {
    static final String USAGE = "compile FILE.ir|MODEL.onnx --emit ir|kernels|plan|cuda|steps [--device cpu|cuda] [--amp none|bf16|f16] "
            + "[--batch B --seq S | --shape NAME=d0,d1,... (ONNX)]  |  compile FILE.ir|MODEL.onnx --package OUT.lpk [--device cpu|cuda] "
            + "[--key-env NAME] (the same options; a signed package, docs/security.md)";
    private static final List<String> STAGES = List.of("ir", "kernels", "plan", "cuda", "steps");

    private CompileCommand() {}

    /** A compiled model with the shapes text for headers and the options that rebuild it ({@link ModelPackager}). */
    record Compiled(CompiledModel model, Device device, CompileOptions.Amp amp, String shapes, List<String> options) {}

    static int run(List<String> argv, PrintStream out, PrintStream err) {
        RepeatedOptions repeated = RepeatedOptions.take("compile", argv, Set.of("shape"));
        Args a = Args.parse("compile", repeated.rest(), Set.of(), Set.of("emit", "device", "amp", "batch", "seq", "package", "key-env"));
        if (a.positional().size() != 1) {
            throw new UsageException("compile: expected one FILE.ir (usage: lantern " + USAGE + ")");
        }
        String emit = a.get("emit", null);
        if (a.get("package", null) != null) {
            if (emit != null) {
                throw new UsageException("compile: --package writes every stage; it takes no --emit");
            }
            return ModelPackager.run(a, repeated, out);
        }
        if (a.get("key-env", null) != null) {
            throw new UsageException("compile: --key-env signs a package; it needs --package OUT.lpk");
        }
        if (emit == null || !STAGES.contains(emit)) {
            throw new UsageException("compile: --emit takes " + String.join(", ", STAGES)
                    + (emit == null ? "" : ", found '" + emit + "'"));
        }
        boolean cudaStage = emit.equals("cuda") || emit.equals("steps");
        String deviceText = a.get("device", cudaStage ? "cuda" : "cpu");
        Device device = UsageException.option("compile", () -> Device.parse(deviceText));
        if (cudaStage && !device.kind().equals("cuda")) {
            throw new UsageException("compile: --emit " + emit + " is the CUDA lowering; it takes --device cuda (the default) or none");
        }
        String file = a.positional().getFirst();
        Compiled c = compile(a, repeated, device, file);
        CompiledModel m = c.model();
        CompileOptions.Amp amp = c.amp();
        String shapes = c.shapes();
        String what = "target " + device.target() + ", amp " + amp.name().toLowerCase(Locale.ROOT) + shapes;
        String header = "lantern compile " + file + " --emit " + emit + ": ";
        switch (emit) {
            case "ir" -> out.print("# " + header + "the optimised IR, " + what + "\n" + IrPrinter.print(m.graph()));
            case "kernels" -> out.print("# " + header + "the kernel list, " + what + "\n" + KernelDump.print(m.kernels()));
            case "plan" -> out.print("# " + header + "the memory plan, " + what + "\n" + m.plan().dump());
            default -> {
                CudaLowering.Lowered l = CudaLowering.lower(m, CudaTarget.H200);
                String target = "CUDA target H200 (" + CudaTarget.H200.arch() + ", " + CudaTarget.H200.smCount() + " SMs), amp "
                        + amp.name().toLowerCase(Locale.ROOT) + shapes;
                if (emit.equals("cuda")) {
                    out.print("// " + header + "the CUDA C of every kernel, " + target + "\n" + StepText.sources(l));
                } else {
                    out.print("# " + header + "the device steps, " + target + "\n" + StepText.steps(l));
                }
            }
        }
        return 0;
    }

    /**
     * {@code file} (an IR file, an ONNX model or a model folder) compiled for {@code device} with the
     * command line's {@code --amp} and shape options, which {@link Compiled#options} repeats.
     */
    static Compiled compile(Args a, RepeatedOptions repeated, Device device, String file) {
        CompileOptions.Amp amp = UsageException.option("compile", () -> CompileOptions.Amp.parse(a.get("amp", "none")));
        CompileOptions options = CompileOptions.defaults().withAmp(amp).withTarget(device.target());
        List<String> again = new java.util.ArrayList<>(List.of("--amp", amp.name().toLowerCase(Locale.ROOT)));
        String shapes = "";
        CompiledModel m;
        if (HfRunCommand.isModelFolder(file)) {
            if (!repeated.get("shape").isEmpty()) {
                throw new UsageException("compile: --shape applies to ONNX models; a model folder takes --batch and --seq");
            }
            int batch = a.getInt("compile", "batch", 1, 1, 1 << 20);
            int seq = a.getInt("compile", "seq", 8, 1, 1 << 20);
            m = Lantern.compile(dev.lantern.frontend.hf.HfModel.open(Path.of(file)).graph(batch, seq), options).model();
            shapes = ", batch " + batch + ", seq " + seq;
        } else if (ModelFormat.isOnnx(file)) {
            OnnxModel model = OnnxModel.open(Path.of(file), options);
            Long batch = a.get("batch", null) == null ? null : (long) a.getInt("compile", "batch", 1, 1, Integer.MAX_VALUE);
            Long seq = a.get("seq", null) == null ? null : (long) a.getInt("compile", "seq", 1, 1, Integer.MAX_VALUE);
            Map<String, long[]> bound = OnnxShapes.bind("compile", model, OnnxShapes.parse("compile", repeated.get("shape")), batch, seq);
            OnnxModel.Compiled c = OnnxRunCommand.compile(model, bound, options, file);
            m = c.program().model();
            shapes = ", shapes " + OnnxShapes.text(c.shapes());
            for (String opt : List.of("batch", "seq")) {
                if (a.get(opt, null) != null) {
                    again.addAll(List.of("--" + opt, a.get(opt, null)));
                }
            }
            repeated.get("shape").forEach(s -> again.addAll(List.of("--shape", s)));
        } else {
            if (a.get("batch", null) != null || a.get("seq", null) != null || !repeated.get("shape").isEmpty()) {
                throw new UsageException("compile: --batch, --seq and --shape apply to ONNX models (MODEL.onnx); an IR file's shapes are in the file");
            }
            m = Lantern.compile(GraphFile.read(file), options).model();
        }
        return new Compiled(m, device, amp, shapes, List.copyOf(again));
    }
}
