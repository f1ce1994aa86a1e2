package dev.lantern.engine;

import dev.lantern.ir.Graph;
import dev.lantern.ir.Node;
import dev.lantern.kernel.KernelLowering;
import dev.lantern.tensor.Tensor;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Which of a forward's outputs {@link CompiledCpuExecutor} lets their kernels write in place. */
final class DirectOutputs {
    private DirectOutputs() {}

    /**
     * The outputs whose kernel writes straight into the caller's tensor instead of the arena (no copy
     * after the forward: GPT-2's logits are 26 MB a sequence): a value a kernel computes, returned once,
     * whose tensor has its dtype and is native memory that overlaps no input. The rest are copied out.
     */
    static Map<String, Tensor> of(Graph graph, List<String> names, Map<String, Tensor> inputs, Map<String, Tensor> out) {
        Map<String, Tensor> direct = new HashMap<>();
        List<String> values = graph.outputs();
        for (int i = 0; i < values.size(); i++) {
            Node n = graph.node(values.get(i));
            Tensor t = out.get(names.get(i));
            boolean computed = !n.op().isSource() && !KernelLowering.isFree(n, graph);
            if (computed && values.indexOf(values.get(i)) == values.lastIndexOf(values.get(i)) && t.dtype() == n.type().dtype()
                    && t.segment().isNative() && inputs.values().stream().noneMatch(x -> x.segment().asOverlappingSlice(t.segment()).isPresent())) {
                direct.put(values.get(i), t);
            }
        }
        return direct;
    }
}
