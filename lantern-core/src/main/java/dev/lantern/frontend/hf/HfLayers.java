package dev.lantern.frontend.hf;

import dev.lantern.frontend.GraphBuilder;
import dev.lantern.frontend.ParamInit;
import dev.lantern.frontend.Value;
import dev.lantern.ir.Attrs;
import dev.lantern.ir.DType;
import dev.lantern.ir.Op;
import dev.lantern.ir.TensorType;

import java.util.Set;

/**
 * The pieces the three families share, emitted as Lantern's primitive ops with every parameter
 * named exactly as the Hugging Face tensor, so that {@code Weights.safetensors(folder)} binds the
 * checkpoint as it is. Weights keep the checkpoint's layout: an {@code nn.Linear} weight is
 * (out, in) and is read through {@code matmul {transpose_b=true}}, GPT-2's {@code Conv1D} weight is
 * (in, out) and is read as it is; neither is copied or transposed in memory.
 */
final class HfLayers {
    final GraphBuilder g;
    private final Set<String> tensors;
    private final String where;

    HfLayers(GraphBuilder g, Set<String> tensors, String where) {
        this.g = g;
        this.tensors = tensors;
        this.where = where;
    }

    /** A parameter bound by its checkpoint name; one the checkpoint lacks is refused here, at build time. */
    Value param(String name, int... shape) {
        if (!tensors.contains(name)) {
            throw new HfModelException(name, where + ": no tensor '" + name + "' in the safetensors, which the architecture"
                    + " of config.json needs");
        }
        return g.param(name, TensorType.of(DType.F32, shape), ParamInit.normal(0.02f));
    }

    /** torch.nn.Linear: y = x·Wᵀ (+ b), W (out, in). */
    Value linear(Value x, String name, int in, int out, boolean bias) {
        Value y = g.matmulNT(x, param(name + ".weight", out, in));
        return bias ? g.add(y, param(name + ".bias", out)) : y;
    }

    /** GPT-2's Conv1D: y = x·W + b, W (in, out). */
    Value conv1d(Value x, String name, int in, int out) {
        return g.add(g.matmul(x, param(name + ".weight", in, out)), param(name + ".bias", out));
    }

    Value layerNorm(Value x, String name, int dim, double eps) {
        return g.layerNorm(x, param(name + ".weight", dim), param(name + ".bias", dim), eps);
    }

    Value rmsNorm(Value x, String name, int dim, double eps) {
        return g.rmsNorm(x, param(name + ".weight", dim), eps);
    }

    /** Rows of {@code table} picked by integer {@code ids}: (b, s) -> (b, s, dim). */
    Value embed(Value table, Value ids) {
        return g.op(Op.GATHER, Attrs.of("axis", 0), table, ids);
    }

    Value slice(Value x, int axis, int start, int end) {
        return g.op(Op.SLICE, Attrs.of("axis", axis, "start", start, "end", end), x);
    }

    /** (b, s, heads·d) -> (b, heads, s, d). */
    Value splitHeads(Value x, int b, int s, int heads, int d) {
        return g.permute(g.reshape(x, b, s, heads, d), 0, 2, 1, 3);
    }

    /**
     * softmax(scale·(q·kᵀ + mask)) · v, merged back to (b, s, heads·d). q is (b, heads, s, d); k and v
     * are (b, kvHeads, s, d). With fewer K/V heads (grouped-query attention) query head h reads K/V
     * head h / (heads / kvHeads), as transformers' repeat_kv does: each K/V head is repeated over its
     * group by a concat, so that the graph as written is the plain 4-D attention (the reference and
     * the unfused path run it as such); fuse-attention then drops the repeat, and the fused
     * attention reads the kvHeads heads in place, so the copy is never made.
     * {@code mask} (additive, broadcast to the scores) may be null.
     */
    Value attention(Value q, Value k, Value v, int heads, int kvHeads, boolean causal, double scale, Value mask) {
        int b = q.shape().dim(0);
        int s = q.shape().dim(2);
        int d = q.shape().dim(3);
        if (kvHeads != heads) {
            k = repeatHeads(k, heads / kvHeads);
            v = repeatHeads(v, heads / kvHeads);
        }
        Value o = core(q, k, v, causal, scale, mask);
        return g.reshape(g.permute(o, 0, 2, 1, 3), b, s, heads * d);
    }

    /** (b, kv, s, d) -> (b, kv·group, s, d), head j·group + r a copy of head j. */
    private Value repeatHeads(Value x, int group) {
        int b = x.shape().dim(0);
        int kv = x.shape().dim(1);
        int s = x.shape().dim(2);
        int d = x.shape().dim(3);
        Value x5 = g.reshape(x, b, kv, 1, s, d);
        Value[] copies = new Value[group];
        java.util.Arrays.fill(copies, x5);
        return g.reshape(g.op(Op.CONCAT, Attrs.of("axis", 2), copies), b, kv * group, s, d);
    }

    private Value core(Value q, Value k, Value v, boolean causal, double scale, Value mask) {
        Value scores = g.matmulNT(q, k);
        if (mask != null) {
            scores = g.add(scores, mask);
        }
        return g.matmul(g.softmax(scores, causal, scale), v);
    }
}
