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

    /**
     * A block of any size from {@code batch,seq,hidden,heads,mlp[,decoder|encoder]} (a decoder when
     * the kind is left out), e.g. {@code 2,128,256,4,1024}; named by that text in canonical form
     * ({@code 2,128,256,4,1024,decoder}). Anything else, and sizes the constructor refuses, is a
     * typed error quoting the text.
     */
    public static BlockConfig parse(String text) {
        String[] f = text.split(",", -1);
        String expected = " (expected batch,seq,hidden,heads,mlp[,decoder|encoder], e.g. 2,128,256,4,1024)";
        if (f.length != 5 && f.length != 6) {
            throw new LanternException("bad block shape '" + text + "': " + f.length + " fields" + expected);
        }
        String[] what = {"batch", "seq", "hidden", "heads", "mlp"};
        int[] v = new int[5];
        for (int i = 0; i < 5; i++) {
            String t = f[i].strip();
            if (t.isEmpty() || t.length() > 9 || !t.chars().allMatch(c -> c >= '0' && c <= '9')) {
                throw new LanternException("bad block shape '" + text + "': " + what[i] + " '" + t + "' is not a positive integer"
                        + " below 10^9" + expected);
            }
            v[i] = Integer.parseInt(t);
        }
        String kind = f.length == 6 ? f[5].strip() : "decoder";
        if (!kind.equals("decoder") && !kind.equals("encoder")) {
            throw new LanternException("bad block shape '" + text + "': the kind is '" + kind + "', expected decoder or encoder");
        }
        String name = v[0] + "," + v[1] + "," + v[2] + "," + v[3] + "," + v[4] + "," + kind;
        try {
            return new BlockConfig(name, v[0], v[1], v[2], v[3], v[4], kind.equals("decoder"));
        } catch (LanternException e) {
            throw new LanternException("bad block shape '" + text + "': hidden " + v[2] + " must divide into " + v[3]
                    + " heads and every size must be > 0");
        }
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
