package dev.lantern.kernel;

import dev.lantern.ir.Node;

import java.util.List;

/**
 * One fused kernel: everything a backend needs to run or generate it, decided before any code is
 * written. {@code node} is the (fused) IR node it computes; {@code fusedOps} the primitive ops it
 * stands for, in the order they apply ({@code matmul+add+gelu}); {@code workspace} scratch tensors
 * that live only while it runs (the memory plan places them like any other buffer);
 * {@code sideOutputs} values of other nodes that it writes besides its own output (a training
 * step's attention forward writes the lse that attention_lse would compute, {@link SavedLse}):
 * they live from this kernel to their last reader, and their nodes have no kernel.
 */
public record Kernel(int index, String name, KernelKind kind, Node node, List<String> fusedOps,
                     IterationSpace space, Tile tile, int vectorWidth,
                     List<Operand> inputs, Operand output, List<Operand> sideOutputs, List<Operand> workspace, KernelKey key) {
    public Kernel {
        fusedOps = List.copyOf(fusedOps);
        inputs = List.copyOf(inputs);
        sideOutputs = List.copyOf(sideOutputs);
        workspace = List.copyOf(workspace);
    }

    /** A kernel that writes its own output only. */
    public Kernel(int index, String name, KernelKind kind, Node node, List<String> fusedOps, IterationSpace space, Tile tile,
                  int vectorWidth, List<Operand> inputs, Operand output, List<Operand> workspace, KernelKey key) {
        this(index, name, kind, node, fusedOps, space, tile, vectorWidth, inputs, output, List.of(), workspace, key);
    }

    /** The side output in {@code role}, or null. */
    public Operand sideOutput(String role) {
        return sideOutputs.stream().filter(o -> o.role().equals(role)).findFirst().orElse(null);
    }

    /** The kernel as the dump prints it, several indented lines. */
    public String dump() {
        StringBuilder b = new StringBuilder();
        b.append("kernel ").append(name).append(" [").append(kind.name().toLowerCase()).append("] ")
                .append(String.join("+", fusedOps)).append('\n');
        b.append("  node      ").append(node).append('\n');
        b.append("  space     ").append(space).append('\n');
        b.append("  tile      ").append(tile.names().isEmpty() ? "-" : tile).append("   vector ").append(vectorWidth).append(" x f32\n");
        for (Operand o : inputs) {
            b.append("  in        ").append(o).append('\n');
        }
        b.append("  out       ").append(output).append('\n');
        for (Operand o : sideOutputs) {
            b.append("  also out  ").append(o).append('\n');
        }
        for (Operand o : workspace) {
            b.append("  scratch   ").append(o).append('\n');
        }
        b.append("  key       ").append(key.shortHash()).append("  ").append(key.canonical()).append('\n');
        return b.toString();
    }
}
