package dev.lantern;

import dev.lantern.tensor.Tensor;
import java.util.Map;

/**
 * A {@link Program} loaded on one device with its weights: parameters uploaded once, kernels
 * compiled or loaded from the module cache once, memory planned once. {@link #run} is one
 * forward. A session runs one forward at a time; close it to free its device memory.
 *
 * <pre>{@code
 * try (Session s = program.load(Device.parse("cuda:0"), Weights.random(0), RunMode.GRAPH)) {
 *     Map<String, Tensor> out = s.run(Map.of("x", x));
 * }
 * }</pre>
 */
public interface Session extends AutoCloseable {
    /** The program this session runs. */
    Program program();

    /** The device it runs on. */
    Device device();

    /** How its forwards run. */
    RunMode mode();

    /**
     * One forward. {@code inputs} by input name (the graph's {@code input {name="..."}}), each of
     * the declared shape (a tensor of another float dtype is converted); returns every graph output
     * by its value name, as dense host tensors, in the graph's order. A missing input or a wrong
     * shape is a typed error naming the input.
     */
    Map<String, Tensor> run(Map<String, Tensor> inputs);

    /** What the forwards so far did. */
    SessionStats stats();

    /** Frees the session's memory; the session cannot run after it. */
    @Override
    void close();
}
