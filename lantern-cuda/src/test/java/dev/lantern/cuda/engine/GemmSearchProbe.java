package dev.lantern.cuda.engine;

import dev.lantern.cuda.blas.CublasLtGemm;
import dev.lantern.cuda.blas.CublasLtHandle;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.ffi.CublasLt;
import dev.lantern.ir.DType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A GPU-machine probe (not a test): the decoder's four GEMM forms, each timed under sustained
 * load with every cuBLASLt heuristic candidate and with their neighbours (another cluster shape
 * or CTA swizzling, {@link CublasLtGemm#neighbours}): does anything outside the heuristic's list
 * spend less energy per FLOP at the power limit? Usage: {@code GemmSearchProbe}.
 */
public final class GemmSearchProbe {
    private GemmSearchProbe() {}

    private record Form(String name, GemmSpec spec, boolean c) {}

    /** Sustained median ms of {@code g} with {@code algo}: D = A·B (+ C when {@code c} is not null). */
    static double sustainedMs(CudaDevice device, CudaStream s, CublasLtGemm g, byte[] algo, CudaStorage a, CudaStorage b,
                              CudaStorage c, CudaStorage d, CudaStorage ws, double warmMs, int iters) {
        return EventTiming.sustainedMedianMs(device, s, () -> g.runAlgo(s, a.address(), b.address(),
                c == null ? 0 : c.address(), d.address(), 0, 1f, c == null ? 0f : 1f, ws.address(),
                CudaSession.WORKSPACE_BYTES, algo), warmMs, iters);
    }

    public static void main(String[] args) {
        GemmSpec.DataType bf = GemmSpec.DataType.BF16;
        List<Form> forms = List.of(
                new Form("qkv 16384x4096x4096", GemmSpec.of(16384, 4096, 4096, bf, bf), false),
                new Form("o 16384x4096x4096 +C", GemmSpec.of(16384, 4096, 4096, bf, bf), true),
                new Form("up 16384x16384x4096 GELU", new GemmSpec(16384, 16384, 4096, 1, false, false, bf, bf, GemmSpec.Epilogue.GELU, null), false),
                new Form("down 16384x4096x16384 +C", GemmSpec.of(16384, 4096, 16384, bf, bf), true));
        long big = 16384L * 16384;
        try (CudaDevice device = CudaDevice.open(0); CublasLtHandle lt = CublasLtHandle.create(device);
             CudaStream s = device.newStream(false); DeviceFill fill = new DeviceFill(device);
             CudaStorage a = device.allocate(2 * big); CudaStorage b = device.allocate(2L * 4096 * 16384);
             CudaStorage c = device.allocate(2 * big); CudaStorage d = device.allocate(2 * big);
             CudaStorage ws = device.allocate(CudaSession.WORKSPACE_BYTES)) {
            fill.fill(s, a.address(), big, DType.BF16, 1, 1f);
            fill.fill(s, b.address(), 4096L * 16384, DType.BF16, 2, 0.02f);
            fill.fill(s, c.address(), big, DType.BF16, 3, 1f);
            s.synchronize();
            for (Form f : forms) {
                try (CublasLtGemm g = lt.plan(f.spec(), CudaSession.WORKSPACE_BYTES, 16)) {
                    List<CublasLt.Heuristic> all = new ArrayList<>(g.candidates());
                    int heuristics = all.size();
                    all.addAll(g.neighbours(heuristics, CudaSession.WORKSPACE_BYTES));
                    double bestHeuristic = Double.MAX_VALUE;
                    double best = Double.MAX_VALUE;
                    int bestAt = -1;
                    for (int i = 0; i < all.size(); i++) {
                        byte[] algo = all.get(i).algo();
                        double ms;
                        try {
                            ms = sustainedMs(device, s, g, algo, a, b, f.c() ? c : null, d, ws, 150, 20);
                        } catch (RuntimeException e) {
                            System.out.printf(Locale.ROOT, "  %s #%d %s: fails (%s)%n", f.name(), i, g.describe(algo), e.getMessage());
                            continue;
                        }
                        System.out.printf(Locale.ROOT, "  %s #%d%s %s waves %.2f: %.4f ms%n", f.name(), i, i < heuristics ? "h" : "n",
                                g.describe(algo), all.get(i).waves(), ms);
                        if (i < heuristics) {
                            bestHeuristic = Math.min(bestHeuristic, ms);
                        }
                        if (ms < best) {
                            best = ms;
                            bestAt = i;
                        }
                    }
                    System.out.printf(Locale.ROOT, "%s: %d heuristic + %d neighbours; best heuristic %.4f ms, best overall %.4f ms (#%d %s): %.2f %%%n",
                            f.name(), heuristics, all.size() - heuristics, bestHeuristic, best, bestAt,
                            bestAt < 0 ? "-" : g.describe(all.get(bestAt).algo()), 100 * (bestHeuristic - best) / bestHeuristic);
                }
            }
        }
    }
}
