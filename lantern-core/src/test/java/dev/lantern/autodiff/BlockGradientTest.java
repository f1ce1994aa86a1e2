package dev.lantern.autodiff;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Value;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.reference.RefTensor;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The whole pre-norm block of {@code frontend.nn} (decoder: RMSNorm, RoPE, causal attention, GELU
 * MLP; encoder: LayerNorm, biases, plain attention) at a tiny shape: the gradient of every
 * parameter and of the input against float64 central differences, relative error ≤ 1e-6.
 */
class BlockGradientTest {
    @ParameterizedTest(name = "decoder={0}")
    @ValueSource(booleans = {true, false})
    void everyParamMatchesFiniteDifferences(boolean decoder) {
        BlockConfig cfg = new BlockConfig("tiny", 2, 3, 8, 2, 12, decoder);
        GraphBuilder g = new GraphBuilder("tiny_block");
        Value x = g.input("x", TensorType.of(DType.F32, cfg.batch(), cfg.seq(), cfg.hidden()));
        Value y = new TransformerBlock(cfg, DType.F32).forward(g, x);
        Value r = g.input("r", y.type());
        Value loss = g.op(Op.REDUCE_SUM, Attrs.of("axes", new int[] {0, 1, 2}), g.mul(y, r));
        Graph forward = g.build(loss);
        List<String> wrt = new ArrayList<>(forward.params().stream().map(Node::name).toList());
        wrt.add(x.name());
        assertTrue(wrt.size() >= 8, "params: " + wrt);

        Map<String, RefTensor> src = GradCheck.copy(GradCheck.sources(forward, decoder ? 7 : 8, Map.of()));
        scaleParams(forward, src);
        GradCheck.Result res = GradCheck.check(forward, loss.name(), wrt, src);
        assertEquals(res.forwardLoss(), res.loss(), 1e-12 * Math.max(1, Math.abs(res.loss())));
        assertTrue(res.worst() <= 1e-6, res.report());
    }

    /** Weights of std 0.3 (a unit normal through four projections saturates the softmax); norm weights around 1. */
    static void scaleParams(Graph g, Map<String, RefTensor> src) {
        for (Node n : g.params()) {
            double[] d = src.get(n.attrs().getString("name", n.name())).data();
            boolean normWeight = n.type().shape().rank() == 1 && n.name().contains("norm") && n.name().endsWith("weight");
            for (int i = 0; i < d.length; i++) {
                d[i] = normWeight ? 1 + 0.2 * d[i] : 0.3 * d[i];
            }
        }
    }
}
