package dev.lantern.onnx;

import dev.lantern.ir.Graph;
import dev.lantern.tensor.Tensor;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An ONNX model imported for one set of concrete input shapes: the Lantern graph (inputs keep their ONNX
 * names, weights are params named after their initializers) and the weights' values, by param name.
 */
public record ImportedModel(Graph graph, Map<String, Tensor> params) {
    public ImportedModel {
        params = Collections.unmodifiableMap(new LinkedHashMap<>(params));
    }
}
