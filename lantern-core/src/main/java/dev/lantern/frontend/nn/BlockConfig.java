package dev.lantern.frontend.nn;

import dev.lantern.ir.LanternException;

import java.util.List;

/** A benchmark shape of DESIGN.md: a decoder (RMSNorm, RoPE, causal) or an encoder (LayerNorm, biases) block. */
public record BlockConfig(String name, int batch, int seq, int hidden, int heads, int mlp, boolean decoder) {
    public static final List<BlockConfig> ALL = List.of(
            new BlockConfig("decoder", 16, 1024, 4096, 32, 16384, true),
            new BlockConfig("encoder", 16, 1024, 4096, 32, 16384, false),
            new BlockConfig("decoder-small", 1, 128, 1024, 16, 4096, true),
            new BlockConfig("cpu-small", 2, 128, 256, 4, 1024, true),
            new BlockConfig("encoder-small", 2, 128, 256, 4, 1024, false));

    public BlockConfig {
        if (batch <= 0 || seq <= 0 || hidden <= 0 || heads <= 0 || mlp <= 0 || hidden % heads != 0) {
            throw new LanternException("bad block config " + name + ": hidden " + hidden + " must divide into " + heads + " heads, all sizes > 0");
        }
    }

    public static BlockConfig named(String name) {
        return ALL.stream().filter(c -> c.name.equals(name)).findFirst().orElseThrow(() -> new LanternException(
                "unknown config '" + name + "' (expected one of " + ALL.stream().map(BlockConfig::name).toList() + ")"));
    }

    public int headDim() {
        return hidden / heads;
    }

    /** Multiply-add FLOPs of one forward: 4 projections, 2 attention GEMMs, 2 MLP GEMMs. */
    public double flops() {
        double t = (double) batch * seq;
        double proj = 2 * t * hidden * hidden * 4;
        double attn = 2.0 * 2 * batch * heads * (double) seq * seq * headDim();
        double mlpF = 2 * t * hidden * mlp * 2;
        return proj + attn + mlpF;
    }
}
