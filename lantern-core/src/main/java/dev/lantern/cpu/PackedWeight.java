package dev.lantern.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static dev.lantern.cpu.GemmKernel.NR;

/**
 * A GEMM's B operand (K × N), a weight, packed once into the micro-kernel's panel order, so that a
 * forward reads the panels and packs nothing of B: per K block ({@link Gemm#kBlock}), the (kc × NR)
 * panels of every NR columns in turn, f32, zero-padded past N (the layout {@link Gemm} packs B into
 * per call). For GPT-2-small's vocabulary projection (768 × 50257, read transposed) packing per call
 * was a strided pass over 154 MB every forward.
 *
 * <p>The panels are a copy: a weight changed in place after packing is not seen (bind again).
 *
 * @param panels native f32, {@code nPad · k} elements
 */
public record PackedWeight(MemorySegment panels, int k, int n) {

    /**
     * b (K, N) as a view of any strides and dtype (a transposed weight is only other strides) packed
     * into {@code arena}, which the pool's threads write: a shared (or automatic) arena, not a confined one.
     */
    public static PackedWeight pack(View b, Arena arena) {
        if (b.rank() != 2) {
            throw new IllegalArgumentException("a packed weight is (K, N), found " + b);
        }
        int k = b.shape().dim(0);
        int n = b.shape().dim(1);
        int nPad = (n + NR - 1) / NR * NR;
        MemorySegment bp = arena.allocate(Math.max(4, (long) nPad * k * 4), 64);
        Gemm.Matrix m = new Gemm.Matrix(b.segment(), b.dtype(), b.offset(), b.strides()[0], b.strides()[1]);
        int kb = Gemm.kBlock(k);
        int kBlocks = (k + kb - 1) / kb;
        int nPanels = nPad / NR;
        Parallel.forEach(kBlocks * nPanels, task -> {
            int jp = task % nPanels;
            int k0 = task / nPanels * kb;
            int kc = Math.min(kb, k - k0);
            // the pool thread's packing rows (as Gemm's own packing of B): a panel is up to 384 KB with deep K blocks
            float[] col = GemmTile.scratch()[1];
            float[] panel = GemmTile.scratch()[4];
            GemmPacking.packB(m, 0, k0, kc, jp * NR, n, bp, (long) k0 * nPad + (long) jp * kc * NR, col, panel);
        });
        return new PackedWeight(bp, k, n);
    }

    /** Whether {@code v} is a (K, N) operand this class packs: rank 2, any strides. */
    public static boolean packable(View v) {
        return v.rank() == 2 && v.shape().numel() > 0;
    }
}
