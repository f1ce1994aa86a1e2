package dev.lantern.cpu;

import dev.lantern.frontend.Model;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Verifier;
import dev.lantern.reference.RefTensor;
import dev.lantern.reference.ReferenceInterpreter;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.LinkedHashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Whole transformer blocks through {@link EagerExecutor} against the float64 reference: ≤ 1e-5 in f32. */
class BlockDifferentialTest {
    @ParameterizedTest
    @CsvSource({"cpu-small, 20261130", "encoder-small, 4242"})
    void blockMatchesReference(String config, long seed) {
        Model model = TransformerBlock.build(BlockConfig.named(config), DType.F32);
        Graph g = Verifier.verify(model.graph());
        Map<String, Tensor> in = new LinkedHashMap<>(model.parameters(seed));
        Node x = g.inputs().getFirst();
        in.put("x", Philox.normal(Tensor.allocate(x.type()), Philox.key(seed, "x"), 1f));

        Map<String, Tensor> out = new EagerExecutor(true).run(g, in);
        Map<String, RefTensor> ref = ReferenceInterpreter.run(g, in);

        assertEquals(g.outputs(), java.util.List.copyOf(out.keySet()));
        for (String o : g.outputs()) {
            Diff.assertClose(out.get(o), ref.get(o), 1e-5, config + " output %" + o + " seed=" + seed);
        }
    }
}
