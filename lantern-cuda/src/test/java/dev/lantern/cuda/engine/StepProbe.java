package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.lower.Step;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.runtime.GraphPolicy;
import java.util.List;

/**
 * A GPU-machine probe (not a test): runs a block step by step, synchronising after each step,
 * in eager and compiled mode, and names the first step that fails. Usage:
 * {@code StepProbe batch seq hidden heads mlp [decoder|encoder] [eager|compiled|both]}.
 */
public final class StepProbe {
    private StepProbe() {}

    public static void main(String[] args) {
        BlockConfig cfg = new BlockConfig("probe", Integer.parseInt(args[0]), Integer.parseInt(args[1]),
                Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                args.length < 6 || args[5].equals("decoder"));
        String which = args.length > 6 ? args[6] : "both";
        var model = TransformerBlock.build(cfg, DType.BF16);
        try (CudaDevice device = CudaDevice.open(0)) {
            if (which.equals("macro")) {
                new CudaBench(device, System.out::println, System.err::println, TuneCache.none()).macro(cfg, 7);
                return;
            }
            if (which.equals("phases")) {
                var params = model.parameters(7);
                var inputs = dev.lantern.engine.DemoMetrics.inputs(model.graph(), 7);
                try (CudaSession s = CudaSession.open(device, model.graph(), params,
                        CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER).withAutotune(TuneCache.none()));
                     CudaSession e = CudaSession.open(device, model.graph(), params, CudaSession.Options.eager())) {
                    s.setInputs(inputs);
                    e.setInputs(inputs);
                    s.autotune();
                    s.synchronize();
                    System.out.println("autotuned");
                    for (int i = 0; i < 3; i++) { s.forward(); s.synchronize(); System.out.println("compiled " + i + " ok"); }
                    for (int i = 0; i < 3; i++) { s.forwardGraph(); s.synchronize(); System.out.println("graph " + i + " ok"); }
                    for (int i = 0; i < 3; i++) { e.forward(); e.synchronize(); System.out.println("eager " + i + " ok"); }
                }
                return;
            }
            for (String mode : List.of("eager", "compiled", "tuned")) {
                if (!which.equals("both") && !which.equals(mode)) {
                    continue;
                }
                CudaSession.Options o = mode.equals("eager") ? CudaSession.Options.eager()
                        : mode.equals("tuned") ? CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF).withAutotune(TuneCache.none())
                        : CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF);
                try (CudaSession s = CudaSession.open(device, model.graph(), null, o)) {
                    s.fillInputs(7);
                    if (mode.equals("eager")) {
                        s.forward();
                        s.synchronize();
                        System.out.println("eager forward ok");
                        continue;
                    }
                    if (mode.equals("tuned")) {
                        s.autotune();
                        s.synchronize();
                        System.out.println("autotuned");
                    }
                    List<Step> steps = s.lowered().steps();
                    for (int i = 0; i < steps.size(); i++) {
                        Step st = steps.get(i);
                        System.out.println("step " + i + ": " + (st instanceof Step.Launch l ? l.source().entry() + " " + l.source().variant() + " " + l.args() : st.toString()));
                        System.out.flush();
                        s.bind(st).run();
                        s.synchronize();
                    }
                    System.out.println(mode + " forward ok");
                }
            }
        }
    }
}
