package dev.lantern;

import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.ir.TensorType;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;
import dev.lantern.weights.SafetensorsFile;
import dev.lantern.weights.SafetensorsModel;
import dev.lantern.weights.TensorView;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where a session's parameter values come from, by parameter name (the graph's
 * {@code param {name="..."}}): a map, a safetensors file or model folder, or seeded random values.
 * {@link #resolve} is asked once per parameter at {@link Program#load}.
 */
public interface Weights extends AutoCloseable {
    /**
     * The value of parameter {@code name}, declared {@code declared} by the graph: of its shape
     * (a float value of another dtype is converted by the session). Throws
     * {@link WeightsException} naming the parameter when there is none or its shape differs.
     */
    Tensor resolve(String name, TensorType declared);

    /** Releases what the source holds (a mapped file); the default holds nothing. */
    @Override
    default void close() {}

    /** Values from a map by parameter name (e.g. {@code Model.parameters(seed)}). */
    static Weights of(Map<String, Tensor> byName) {
        Map<String, Tensor> m = Map.copyOf(byName);
        return (name, declared) -> {
            Tensor t = m.get(name);
            if (t == null) {
                throw new WeightsException("no value for parameter '" + name + "' (" + declared + ")");
            }
            return checked(name, declared, t);
        };
    }

    /**
     * Seeded random values, the same on every device and every run: matrices N(0, 1/fan_in)
     * (fan_in = the second-to-last dimension, as a {@code matmul} weight [in, out] reads it: the
     * scale of PyTorch's {@code nn.Linear}), vectors named like norm weights ({@code *norm*},
     * {@code *gamma*}, {@code *scale*}) near 1, other vectors (biases) N(0, 0.02²).
     */
    static Weights random(long seed) {
        return (name, declared) -> {
            Tensor t = Tensor.allocate(declared.dtype(), declared.shape());
            Shape s = declared.shape();
            long key = Philox.key(seed, "param:" + name);
            String lower = name.toLowerCase(java.util.Locale.ROOT);
            boolean normLike = s.rank() == 1 && (lower.contains("norm") || lower.contains("gamma") || lower.contains("scale"));
            double std = s.rank() >= 2 ? 1 / Math.sqrt(Math.max(1, s.dim(-2))) : 0.02;
            float mean = normLike ? 1f : 0f;
            // counter-based: element i's value depends on (key, i) only, so chunks fill in parallel, the
            // same values on any thread count (a 16x1024x4096 block's 200 M weights took seconds on one core)
            long n = t.numel();
            long chunk = 1 << 20;
            java.util.stream.LongStream.range(0, (n + chunk - 1) / chunk).parallel().forEach(c -> {
                for (long i = c * chunk, end = Math.min(n, i + chunk); i < end; i++) {
                    t.set(i, mean + (float) std * Philox.normal(key, i));
                }
            });
            return t;
        };
    }

    /**
     * Values from a safetensors file, or from a model folder ({@code model.safetensors}, or shards
     * with {@code model.safetensors.index.json}), memory-mapped; close the weights after loading.
     */
    static Weights safetensors(Path path) {
        if (Files.isDirectory(path)) {
            SafetensorsModel model = SafetensorsModel.open(path);
            return mapped(path, model::contains, model::tensor, model::close);
        }
        SafetensorsFile file = SafetensorsFile.open(path);
        return mapped(path, file::contains, file::tensor, file::close);
    }

    /** Weights read by name from a mapped safetensors source (a file, or a model folder's shards). */
    private static Weights mapped(Path path, java.util.function.Predicate<String> contains,
                                  java.util.function.Function<String, TensorView> tensor, Runnable close) {
        return new Weights() {
            @Override
            public Tensor resolve(String name, TensorType declared) {
                if (!contains.test(name)) {
                    throw new WeightsException("no tensor '" + name + "' in " + path + " (" + declared + ")");
                }
                return checked(name, declared, toTensor(tensor.apply(name)));
            }

            @Override
            public void close() {
                close.run();
            }
        };
    }

    private static Tensor toTensor(TensorView v) {
        return Tensor.of(DType.F32, v.irShape(), v.toFloatArray());
    }

    /** {@code t} when it has the declared shape; a typed error naming the parameter otherwise. */
    static Tensor checked(String name, TensorType declared, Tensor t) {
        if (!t.shape().equals(declared.shape())) {
            throw new WeightsException("parameter '" + name + "': the graph declares " + declared
                    + ", the weights hold " + t.dtype() + t.shape());
        }
        return t;
    }
}
