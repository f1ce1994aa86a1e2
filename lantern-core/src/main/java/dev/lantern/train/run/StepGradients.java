package dev.lantern.train.run;

import dev.lantern.RunMode;
import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.passes.Canonicalize;
import dev.lantern.passes.FuseAttention;

import java.util.List;

/**
 * The training step's graph: the model's forward with its attention fused first, then
 * differentiated. Fusing before differentiation is what lets the step keep no (s, t) scores: the
 * forward runs the flash attention kernel, and attention's gradient rule emits the flash backward
 * ops (attention_lse, attention_grad_q, attention_grad_kv). Differentiated as the builders emit it
 * (matmul, softmax, matmul), the step would keep the scores and probabilities for softmax_grad,
 * and the pipeline's fuse-attention could not fuse the forward either (the backward reads the
 * probabilities). {@link RunMode#EAGER} (the one-kernel-per-op baseline) keeps the primitive form.
 */
public final class StepGradients {
    private StepGradients() {}

    /**
     * {@code model}'s loss and the gradient of every floating parameter: with attention fused first,
     * except in {@code mode} {@link RunMode#EAGER}.
     */
    public static BackwardGraph of(LanguageModel model, RunMode mode) {
        Graph forward = model.graph();
        if (mode != RunMode.EAGER) {
            forward = new FuseAttention().run(new Canonicalize().run(forward));
        }
        List<String> trained = forward.params().stream().filter(n -> n.type().dtype().isFloating()).map(Node::name).toList();
        return Gradients.of(forward, model.scaledLoss(), trained);
    }
}
