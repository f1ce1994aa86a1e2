package dev.lantern.train.run;

import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.Map;

/** A fixed batch for a language model's step in tests: ids and targets spread over the vocabulary (repeats, no pattern a loss could miss), loss scale 1. */
final class StepBatches {
    private StepBatches() {}

    static Map<String, Tensor> of(LanguageModel m, BlockConfig cfg, int vocab) {
        Map<String, Tensor> in = new HashMap<>();
        Tensor ids = Tensor.allocate(DType.I64, Shape.of(cfg.batch(), cfg.seq()));
        Tensor targets = Tensor.allocate(DType.I64, Shape.of(cfg.batch(), cfg.seq()));
        for (int i = 0; i < ids.numel(); i++) {
            ids.set(i, (i * 7 + i / 5) % vocab);
            targets.set(i, (i * 3 + 1) % vocab);
        }
        in.put(m.ids(), ids);
        in.put(m.targets(), targets);
        in.put(m.scale(), Tensor.of(DType.F32, Shape.scalar(), new float[] {1f}));
        return in;
    }
}
