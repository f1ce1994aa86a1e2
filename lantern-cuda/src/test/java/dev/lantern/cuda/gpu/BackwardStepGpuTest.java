package dev.lantern.cuda.gpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.Device;
import dev.lantern.Lantern;
import dev.lantern.Program;
import dev.lantern.RunMode;
import dev.lantern.Session;
import dev.lantern.Weights;
import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledCpuExecutor;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.reference.Accuracy;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.run.LanguageModel;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A whole training step's graph (the {@link LanguageModel}: embedding, decoder block, norm, LM head,
 * cross-entropy, and {@link Gradients#ofParams} of it) on the GPU against the compiled CPU step, on
 * the same weights and batch: the loss and every parameter's gradient. cpu-small (the size
 * {@code lantern train} uses) and an odd shape (seq 11, hidden 24, 3 heads, MLP 40, vocab 29), f32
 * within 1e-4 and bf16/f16 autocast within 5e-2 (both sides round their GEMM operands, in different
 * places), fused and eager.
 */
@Tag("gpu")
class BackwardStepGpuTest {
    static Stream<Arguments> cases() {
        BlockConfig odd = new BlockConfig("odd-train", 2, 11, 24, 3, 40, true);
        BlockConfig small = BlockConfig.named("cpu-small");
        return Stream.of(
                Arguments.of(odd, 29, CompileOptions.Amp.NONE), Arguments.of(small, 64, CompileOptions.Amp.NONE),
                Arguments.of(odd, 29, CompileOptions.Amp.BF16), Arguments.of(small, 64, CompileOptions.Amp.BF16),
                Arguments.of(small, 64, CompileOptions.Amp.F16));
    }

    @ParameterizedTest(name = "{0} vocab {1} amp {2}")
    @MethodSource("cases")
    void gradientsOnTheGpuMatchTheCpu(BlockConfig cfg, int vocab, CompileOptions.Amp amp) {
        Gpu.device();
        LanguageModel lm = LanguageModel.of(cfg, vocab, 5);
        BackwardGraph bg = Gradients.ofParams(lm.graph(), lm.scaledLoss());
        SplittableRandom r = new SplittableRandom(cfg.hidden() * 31L + vocab);
        Tensor ids = Tensor.allocate(DType.I64, Shape.of(cfg.batch(), cfg.seq()));
        Tensor targets = Tensor.allocate(DType.I64, Shape.of(cfg.batch(), cfg.seq()));
        for (long i = 0; i < ids.numel(); i++) {
            ids.set(i, r.nextInt(vocab));
            targets.set(i, r.nextInt(vocab));
        }
        Tensor scale = Tensor.allocate(DType.F32, Shape.of());
        scale.set(0, 1f);
        Map<String, Tensor> in = Map.of(lm.ids(), ids, lm.targets(), targets, lm.scale(), scale);
        CompileOptions co = CompileOptions.defaults().withAmp(amp);
        Map<String, Tensor> cpu;
        try (CompiledCpuExecutor exec = new CompiledCpuExecutor(Compiler.compile(bg.graph(), co))) {
            exec.bind(castParams(lm.initial(), Compiler.compile(bg.graph(), co)));
            cpu = exec.run(in);
        }
        double tol = amp == CompileOptions.Amp.NONE ? 1e-4 : 5e-2;
        for (RunMode mode : new RunMode[] {RunMode.COMPILED, RunMode.EAGER}) {
            Program p = Lantern.compile(bg.graph(), co.withTarget("cuda"));
            try (Session s = p.load(Device.cuda(0), Weights.of(lm.initial()), mode)) {
                Map<String, Tensor> gpu = s.run(in);
                assertEquals(cpu.keySet(), gpu.keySet());
                for (String name : cpu.keySet()) {
                    double e = Accuracy.relErr(gpu.get(name).toDoubles(), cpu.get(name).toDoubles());
                    assertTrue(e <= tol, cfg.name() + " " + amp + " " + mode + ": output " + name + " rel err " + e + " > " + tol);
                }
            }
        }
    }

    /** The initial f32 weights in the dtypes the compiled step declares (autocast may make them bf16/f16). */
    static Map<String, Tensor> castParams(Map<String, Tensor> initial, dev.lantern.engine.CompiledModel m) {
        Map<String, Tensor> out = new HashMap<>();
        m.graph().params().forEach(n -> {
            String name = n.attrs().getString("name", n.name());
            Tensor t = initial.get(name);
            out.put(name, t.dtype() == n.type().dtype() ? t : t.cast(n.type().dtype()));
        });
        return out;
    }
}
