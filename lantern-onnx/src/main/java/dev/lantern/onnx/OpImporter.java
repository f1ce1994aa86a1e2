package dev.lantern.onnx;

/** Imports one ONNX node: reads its inputs and attributes from the context and defines its outputs there. */
@FunctionalInterface
interface OpImporter {
    void apply(ImportContext c);
}
