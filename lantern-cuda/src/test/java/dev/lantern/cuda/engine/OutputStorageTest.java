package dev.lantern.cuda.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.Op;
import dev.lantern.plan.MemoryPlan;
import dev.lantern.train.run.LanguageModel;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A training step compiled for CUDA returns views (bias gradients reshaped to the bias's shape) that
 * the memory plan places nothing for: reading them on the H200 failed with "no buffer for %d67".
 * Every output must resolve to a placed value that lives to the end of the forward.
 */
class OutputStorageTest {
    @Test
    void everyOutputOfATrainingStepResolvesToAPlacedValueLiveToTheEnd() {
        LanguageModel lm = LanguageModel.of(BlockConfig.named("cpu-small"), 64, 5);
        BackwardGraph bg = Gradients.ofParams(lm.graph(), lm.scaledLoss());
        // unfused: the norms' weight gradients stay reduce + reshape (fused compilation makes each one norm_weight_grad of the weight's shape)
        CompiledModel m = Compiler.compile(bg.graph(), CompileOptions.defaults().withTarget("cuda").withFuse(false));
        OutputStorage storage = new OutputStorage(m);
        Map<String, MemoryPlan.Placement> placed = m.plan().byValue();
        int views = 0;
        int last = m.kernels().size() - 1;
        for (String o : m.graph().outputs()) {
            String s = storage.of(o);
            if (!s.equals(o)) {
                views++;
                assertFalse(placed.containsKey(o), "a view has no placement of its own: %" + o);
                assertEquals(Op.RESHAPE, m.graph().node(o).op());
            }
            assertTrue(placed.containsKey(s), "output %" + o + " -> %" + s + " has no place in the arena");
            assertEquals(last, placed.get(s).buffer().last(), "%" + s + " must outlive every kernel: the output is read after the forward");
            assertEquals(m.graph().node(o).type().bytes(), m.graph().node(s).type().bytes(), "a view has its storage's bytes");
        }
        assertTrue(views >= 1, "cpu-small's step returns reshaped bias/norm gradients: the case this test is for");
    }
}
