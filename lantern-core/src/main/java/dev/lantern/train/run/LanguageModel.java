package dev.lantern.train.run;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.Model;
import dev.lantern.frontend.ParamInit;
import dev.lantern.frontend.Value;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.frontend.nn.RMSNorm;
import dev.lantern.frontend.nn.TransformerBlock;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.TrainStateException;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A next-token model as a training graph: token ids in, the mean cross-entropy against the target
 * ids out, multiplied by a scalar input (the loss scale; 1 without a scaler) so that the backward
 * starts from d(loss) = scale. What {@link Trainer} differentiates and runs.
 *
 * @param graph   the forward graph; its one output is {@link #scaledLoss}
 * @param ids     the input of token ids (batch, seq), i64
 * @param targets the input of target ids (batch, seq), i64
 * @param scale   the f32 scalar input the loss is multiplied by
 * @param initial the parameters' starting values by name (f32), in graph order
 */
public record LanguageModel(Graph graph, String ids, String targets, String scale, Map<String, Tensor> initial) {
    public static final String IDS = "input_ids";
    public static final String TARGETS = "targets";
    public static final String SCALE = "loss_scale";

    public LanguageModel {
        initial = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(initial));
    }

    /** The scaled loss's value name (the graph's output). */
    public String scaledLoss() {
        return graph.outputs().getFirst();
    }

    /**
     * An embedding of {@code vocab} rows, one transformer block of {@code cfg} (its batch, seq,
     * hidden, heads, MLP; decoder or encoder), a final RMS norm and an untied LM head.
     * Parameters are drawn from {@code seed} (the block's as {@code Model.parameters} draws them;
     * the embedding with std 1, the head with 0.02).
     */
    public static LanguageModel of(BlockConfig cfg, int vocab, long seed) {
        if (vocab < 2) {
            throw new TrainStateException("a language model needs at least two tokens, got " + vocab);
        }
        GraphBuilder g = new GraphBuilder("lm_" + cfg.name().replace('-', '_').replace(',', '_'));
        Value ids = g.input(IDS, TensorType.of(DType.I64, cfg.batch(), cfg.seq()));
        Value targets = g.input(TARGETS, TensorType.of(DType.I64, cfg.batch(), cfg.seq()));
        Value scale = g.input(SCALE, TensorType.of(DType.F32));
        Value embed = g.param("embed.weight", TensorType.of(DType.F32, vocab, cfg.hidden()), ParamInit.normal(1f));
        Value x = g.op(Op.GATHER, Attrs.of("axis", 0), embed, ids);
        x = new TransformerBlock(cfg, DType.F32).forward(g, x);
        Value h = new RMSNorm("norm", cfg.hidden(), 1e-6, DType.F32).forward(g, x);
        Value logits = g.matmul(h, g.param("lm_head.weight", TensorType.of(DType.F32, cfg.hidden(), vocab), ParamInit.normal(0.02f)));
        Value loss = g.crossEntropy(logits, targets);
        Model m = g.buildModel(g.mul(loss, scale));
        return new LanguageModel(m.graph(), IDS, TARGETS, SCALE, m.parameters(seed));
    }

    /**
     * A model whose graph maps token ids to logits (an imported ONNX language model): one integer
     * input (batch, seq) named {@code ids}, the first output logits (batch, seq, vocab). The loss
     * nodes are appended (a {@code targets} input, {@code cross_entropy}, the scale); {@code params}
     * are the starting weights by name (the file's initializers).
     */
    public static LanguageModel ofLogits(Graph g, String ids, Map<String, Tensor> params) {
        Node in = g.inputs().stream().filter(n -> n.attrs().getString("name", n.name()).equals(ids)).findFirst().orElseThrow(
                () -> new TrainStateException("the model has no input '" + ids + "' (inputs: "
                        + g.inputs().stream().map(n -> n.attrs().getString("name", n.name())).toList() + ")"));
        TensorType it = in.type();
        String logits = g.outputs().getFirst();
        TensorType lt = g.type(logits);
        if (it.dtype().isFloating() || it.shape().rank() != 2 || lt.shape().rank() != 3
                || lt.shape().dim(0) != it.shape().dim(0) || lt.shape().dim(1) != it.shape().dim(1) || !lt.dtype().isFloating()) {
            throw new TrainStateException("a language model maps integer ids (batch, seq) to logits (batch, seq, vocab); this one maps "
                    + ids + " " + it + " to " + lt);
        }
        java.util.Set<String> taken = new java.util.HashSet<>();
        g.nodes().forEach(n -> taken.add(n.name()));
        String t = fresh("targets", taken);
        String sc = fresh("loss_scale", taken);
        String ce = fresh("loss", taken);
        String out = fresh("scaled_loss", taken);
        List<Node> nodes = new ArrayList<>(g.nodes());
        TensorType tt = TensorType.of(it.dtype(), it.shape());
        TensorType lossType = Op.CROSS_ENTROPY.infer(List.of(lt, tt), Attrs.EMPTY);
        nodes.add(new Node(t, Op.INPUT, List.of(), Attrs.of("name", TARGETS), tt));
        nodes.add(new Node(sc, Op.INPUT, List.of(), Attrs.of("name", SCALE), TensorType.of(DType.F32)));
        nodes.add(new Node(ce, Op.CROSS_ENTROPY, List.of(logits, t), Attrs.EMPTY, lossType));
        nodes.add(new Node(out, Op.MUL, List.of(ce, sc), Attrs.EMPTY, Op.MUL.infer(List.of(lossType, TensorType.of(DType.F32)), Attrs.EMPTY)));
        return new LanguageModel(new Graph(g.name(), nodes, List.of(out)), ids, TARGETS, SCALE, params);
    }

    private static String fresh(String base, java.util.Set<String> taken) {
        String s = base;
        for (int i = 1; !taken.add(s); i++) {
            s = base + "_" + i;
        }
        return s;
    }

    /** The vocabulary: the logits' last dimension. */
    public int vocab() {
        for (Node n : graph.nodes()) {
            if (n.op() == Op.CROSS_ENTROPY) {
                return graph.type(n.input(0)).shape().dim(-1);
            }
        }
        throw new IllegalStateException("no cross_entropy in " + graph.name());
    }

    /** The parameters' names as the graph's {@code name} attributes, mapped from their SSA values. */
    public Map<String, String> paramNames() {
        Map<String, String> m = new LinkedHashMap<>();
        for (Node n : graph.params()) {
            m.put(n.name(), n.attrs().getString("name", n.name()));
        }
        return m;
    }

    /** Parameter names in graph order. */
    public List<String> parameterOrder() {
        return new ArrayList<>(paramNames().values());
    }
}
