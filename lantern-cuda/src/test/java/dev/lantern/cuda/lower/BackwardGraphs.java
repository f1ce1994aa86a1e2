package dev.lantern.cuda.lower;

import dev.lantern.autodiff.BackwardGraph;
import dev.lantern.autodiff.Gradients;
import dev.lantern.engine.CompileOptions;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.frontend.nn.BlockConfig;
import dev.lantern.ir.Graph;
import dev.lantern.ir.IrParser;
import dev.lantern.train.run.LanguageModel;
import dev.lantern.train.run.StepGradients;
import dev.lantern.RunMode;
import java.util.List;

/**
 * Graphs with every op autodiff emits, for the CUDA backward tests: one small graph per op (odd
 * shapes: rows 5, width 13) and the gradient of a whole language model (embedding, decoder block,
 * norm, head, cross-entropy) at an odd shape.
 */
final class BackwardGraphs {
    private BackwardGraphs() {}

    /** One body per backward op over %x f32[5,13], %w f32[13], %t i64[5] (the result is %y). */
    static final List<String> BODIES = List.of(
            "%y = gelu_grad(%x, %x) {approximate=\"none\"} : f32[5,13]",
            "%y = gelu_grad(%x, %x) {approximate=\"tanh\"} : f32[5,13]",
            "%y = silu_grad(%x, %x) : f32[5,13]",
            "%y = relu_grad(%x, %x) : f32[5,13]",
            "%y = softmax_grad(%x, %x) {scale=0.5} : f32[5,13]",
            "%y = rms_norm_grad(%x, %w, %x) {eps=1.0E-6} : f32[5,13]",
            "%y = layer_norm_grad(%x, %w, %x) {eps=1.0E-5} : f32[5,13]",
            // the residual form (fuse-norm folds the residual gradient's add into dx): written out, and as the add it fuses
            "%y = rms_norm_grad(%x, %w, %x, %x) {eps=1.0E-6, residual=true} : f32[5,13]",
            "%g = layer_norm_grad(%x, %w, %x) {eps=1.0E-5} : f32[5,13]\n  %y = add(%x, %g) : f32[5,13]",
            "%y = reduce_sum(%x) {axes=[0]} : f32[13]",
            "%y = reduce_sum(%x) {axes=[1], keepdims=true} : f32[5,1]",
            "%y = reduce_sum(%x) {axes=[0,1]} : f32[]",
            "%y = cross_entropy(%x, %t) : f32[]",
            "%l = cross_entropy(%x, %t) : f32[]\n  %y = cross_entropy_grad(%x, %t, %l) : f32[5,13]",
            "%y = scatter_add(%x, %t) {axis=0, size=7} : f32[7,13]",
            "%y = norm_weight_grad(%x, %x) {eps=1.0E-6, kind=\"rms\"} : f32[13]",
            "%y = norm_weight_grad(%x, %x) {eps=1.0E-5, kind=\"layer\"} : f32[13]",
            "%r = reshape(%x) {shape=[1,1,5,13]} : f32[1,1,5,13]\n  %s = slice(%r) {axis=3, start=0, end=12} : f32[1,1,5,12]\n"
                    + "  %y = rope(%s) {inverse=true} : f32[1,1,5,12]");

    static Graph graph(String body) {
        return IrParser.parse("graph @backward {\n  %x = input {name=\"x\"} : f32[5,13]\n  %w = param {name=\"w\"} : f32[13]\n"
                + "  %t = input {name=\"t\"} : i64[5]\n  " + body + "\n  return %y\n}\n");
    }

    /** The op a body tests (its last node's). */
    static String op(String body) {
        return body.substring(body.lastIndexOf("= ") + 2, body.lastIndexOf('('));
    }

    /** A cpu-small-like decoder at an odd shape: batch 2, seq 11, hidden 24, 3 heads, MLP 40, vocab 29. */
    static final BlockConfig ODD = new BlockConfig("odd-train", 2, 11, 24, 3, 40, true);

    static LanguageModel model(BlockConfig cfg, int vocab) {
        return LanguageModel.of(cfg, vocab, 7);
    }

    /** The training step's graph as the trainer makes it (attention fused, then differentiated): the loss and every floating parameter's gradient. */
    static BackwardGraph backward(LanguageModel m) {
        return StepGradients.of(m, RunMode.GRAPH);
    }

    /** The step differentiated through the primitive attention (matmul, softmax, matmul), as the eager baseline does. */
    static BackwardGraph primitiveBackward(LanguageModel m) {
        return Gradients.ofParams(m.graph(), m.scaledLoss());
    }

    static CompiledModel compile(Graph g, boolean fuse, CompileOptions.Amp amp) {
        return Compiler.compile(g, CompileOptions.defaults().withTarget("cuda").withFuse(fuse).withAmp(amp));
    }
}
