package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.lower.Step;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.runtime.GraphPolicy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A GPU-machine probe (not a test): the compiled forward of a big block with each fusion
 * switch on and off ({@code BackendChoices.residualInGemm}, {@code queryRopeInAttention}),
 * and the eager forward, all open at once and timed in interleaved rounds under sustained load,
 * so that every form meets the same power-limited GPU. GEMM choices are shared (one tune cache).
 * One more form splits the compiled block's lead over eager into tuning and fusion: the default
 * form with cuBLASLt's first heuristic candidate for every GEMM (the choice eager mode makes).
 * Both compiled defaults then print their steps timed inside real forwards.
 *
 * <p>Only whole forwards are timed. A forward with some steps skipped (tried: the GEMM steps
 * alone) feeds its buffers back into itself, because the memory plan reuses them; within a
 * few hundred runs its operands degenerate, the tensor cores draw less power and the same
 * GEMMs ran 9 % faster (8.6 instead of 9.5 ms), which is not a time any real forward has.
 * Usage: {@code AblationProbe decoder [encoder ...]}.
 */
public final class AblationProbe {
    private AblationProbe() {}

    private static final String UNTUNED = "default, first-candidate GEMMs";

    public static void main(String[] args) {
        Probes.eachBlock(args, AblationProbe::probe);
    }

    private static void probe(CudaDevice device, BlockConfig cfg) {
        var model = TransformerBlock.build(cfg, DType.BF16);
        TuneCache tune = TuneCache.none();
        Map<String, CudaSession> sessions = new LinkedHashMap<>();
        Map<String, Form> forms = new LinkedHashMap<>();
        try {
            for (boolean residual : new boolean[]{false, true}) {
                for (boolean qrope : new boolean[]{false, true}) {
                    {
                        var choices = dev.lantern.engine.BackendChoices.defaults().withResidualInGemm(residual).withQueryRopeInAttention(qrope);
                        var compiled = dev.lantern.engine.Compiler.compile(model.graph(),
                                dev.lantern.engine.CompileOptions.defaults().withTarget("cuda").withChoices(choices));
                        CudaSession s = CudaSession.open(device, compiled, null,
                                CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF).withAutotune(tune));
                        String name = (residual ? "residual-in-gemm" : "residual-in-norm") + (qrope ? " q-rope-inside" : " two-ropes");
                        sessions.put(name, s);
                        forms.put(name, new Form(s, s::forward));
                        s.fillInputs(7);
                        s.autotune();
                    }
                }
            }
            CudaSession untuned = CudaSession.open(device, model.graph(), null,
                    CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF).withAutotune(tune));
            sessions.put(UNTUNED, untuned);
            forms.put(UNTUNED, new Form(untuned, untuned::forward));
            untuned.fillInputs(7);
            untuned.autotune(); // the default's kernel tiles, from the shared cache
            for (Step.GemmUse use : untuned.gemmChoices().keySet()) {
                untuned.chooseGemm(use, 0);
            }
            System.out.println("first-candidate form: " + untuned.gemmChoices());
            CudaSession eager = CudaSession.open(device, model.graph(), null, CudaSession.Options.eager());
            sessions.put("eager", eager);
            forms.put("eager", new Form(eager, eager::forward));
            eager.fillInputs(7);
            int rounds = 5;
            Map<String, List<Double>> sustained = new LinkedHashMap<>();
            Map<String, List<Double>> bench = new LinkedHashMap<>();
            for (int r = 0; r < rounds; r++) {
                for (var en : forms.entrySet()) {
                    CudaSession s = en.getValue().session();
                    Runnable work = en.getValue().work();
                    double su = s.sustainedMs(work, 300, 30);
                    double b = s.timeMs(work, 3, 30);
                    sustained.computeIfAbsent(en.getKey(), k -> new ArrayList<>()).add(su);
                    bench.computeIfAbsent(en.getKey(), k -> new ArrayList<>()).add(b);
                    System.out.printf(Locale.ROOT, "%s round %d %-36s sustained %.4f bench-style %.4f%n", cfg.name(), r, en.getKey(), su, b);
                }
            }
            double eagerMs = median(bench.get("eager"));
            for (String k : forms.keySet()) {
                double b = median(bench.get(k));
                System.out.printf(Locale.ROOT, "%s median %-36s sustained %.4f bench-style %.4f eager/this %.3f%n",
                        cfg.name(), k, median(sustained.get(k)), b, eagerMs / b);
            }
            for (String k : List.of("residual-in-gemm q-rope-inside", UNTUNED)) {
                System.out.println(k + ", steps inside the forward:");
                for (CudaSession.StepTime t : sessions.get(k).profileInForward(3, 30)) {
                    System.out.printf(Locale.ROOT, "  %8.4f in forward  %s%n", t.ms(), t.op());
                }
            }
        } finally {
            sessions.values().forEach(CudaSession::close);
        }
    }

    /** One timed form: the session whose stream times it, and the work of one forward. */
    private record Form(CudaSession session, Runnable work) {}

    private static double median(List<Double> v) {
        return EventTiming.median(v.stream().mapToDouble(Double::doubleValue).toArray());
    }
}
