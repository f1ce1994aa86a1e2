package dev.lantern.onnx;

import dev.lantern.frontend.Value;
import onnx.Onnx.TensorProto;

/** What an ONNX value name stands for during import. */
sealed interface Val {
    /** A tensor computed at run time by the Lantern graph. */
    record Run(Value value) implements Val { }

    /** A value known at import time (folded shape arithmetic, a Constant node, a small initializer). */
    record Host(HostTensor tensor) implements Val { }

    /** An initializer, read only when an op needs it: as a weight (a param) or, when small, on the host. */
    record Weight(TensorProto proto) implements Val { }
}
