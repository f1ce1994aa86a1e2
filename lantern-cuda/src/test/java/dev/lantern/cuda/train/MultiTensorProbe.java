package dev.lantern.cuda.train;

import dev.lantern.cuda.codegen.MultiTensorKernels;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamW;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.NamedState;
import dev.lantern.train.Parameter;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The device optimizer's kernels alone ({@link MultiTensorOptimizer}), no cuBLASLt, so that
 * compute-sanitizer's racecheck can run them (scripts/gpu-sanitize): tensors of seeded random
 * sizes (one element, primes, a chunk and three more, just under two chunks) in their own
 * allocations; the sum of squares of the unscaled gradients against a float64 sum on the host;
 * three AdamW steps with unscaling and clipping against the CPU's {@link AdamW}, bit for bit
 * (masters and both moments); then an inf and a NaN planted in two tensors, and exactly those two
 * reported. {@link #check} returns what differs (empty when nothing does); {@code main} exits 1
 * then. {@code MultiTensorOptimizerGpuTest} runs the same check in the GPU tier.
 */
public final class MultiTensorProbe {
    private MultiTensorProbe() {}

    public static void main(String[] args) {
        try (CudaDevice gpu = CudaDevice.open(0)) {
            String problems = check(gpu, args.length > 0 ? Long.parseLong(args[0]) : 16);
            System.out.println(problems.isEmpty() ? "multi-tensor probe: OK" : "multi-tensor probe: FAILED\n" + problems);
            if (!problems.isEmpty()) {
                System.exit(1);
            }
        }
    }

    /** Runs the checks on {@code gpu} with data from {@code seed}; what differs, or the empty string. */
    public static String check(CudaDevice gpu, long seed) {
        Random r = new Random(seed);
        int c = MultiTensorKernels.CHUNK;
        long[] sizes = {1, 7919, c + 3, 2L * c - 1, 1 + r.nextInt(5000), 257};
        StringBuilder bad = new StringBuilder();
        CudaStream stream = gpu.newStream(false);
        List<CudaStorage> buffers = new ArrayList<>();
        List<Parameter> params = new ArrayList<>();
        long[] pAddr = new long[sizes.length];
        long[] gAddr = new long[sizes.length];
        float inv = 1f / 1024f;
        try (MultiTensorOptimizer opt = new MultiTensorOptimizer(gpu, stream, sizes)) {
            double want = 0;
            for (int i = 0; i < sizes.length; i++) {
                Tensor p = Tensor.allocate(DType.F32, Shape.of((int) sizes[i]));
                Tensor g = Tensor.allocate(DType.F32, Shape.of((int) sizes[i]));
                for (long e = 0; e < sizes[i]; e++) {
                    p.set(e, (float) (r.nextGaussian() * 0.5));
                    g.set(e, (float) (r.nextGaussian() * 4096)); // scaled by 1024: unscaled, a norm well above the clip of 1
                    double u = g.get(e) * inv; // as the kernel: the f32 product, squared in double
                    want += (double) (float) u * (float) u;
                }
                CudaStorage pd = gpu.allocate(sizes[i] * 4);
                CudaStorage gd = gpu.allocate(sizes[i] * 4);
                buffers.add(pd);
                buffers.add(gd);
                opt.upload(pd.address(), p.segment());
                opt.upload(gd.address(), g.segment());
                pAddr[i] = pd.address();
                gAddr[i] = gd.address();
                Parameter host = Parameter.of("t" + i, copy(p));
                for (long e = 0; e < sizes[i]; e++) {
                    host.grad().set(e, g.get(e));
                }
                params.add(host);
            }
            opt.bind(pAddr, gAddr);
            opt.measure(inv);
            stream.synchronize();
            MultiTensorOptimizer.Measure m = opt.finish();
            if (Math.abs(m.sumSquares() - want) > 1e-12 * want || !m.nonFinite().isEmpty()) {
                bad.append("sum of squares ").append(m.sumSquares()).append(" (float64 on the host: ").append(want)
                        .append("), non-finite ").append(m.nonFinite()).append('\n');
            }
            // the trainer's clipping, then three steps on the device and on the CPU
            float norm = (float) Math.sqrt(m.sumSquares());
            float coef = 1f / (norm + 1e-6f);
            // the same decision taken on the device, from the same sums
            opt.decide(1f, true);
            stream.synchronize();
            MultiTensorOptimizer.Decision d = opt.decision();
            if (Float.floatToRawIntBits(d.coef()) != Float.floatToRawIntBits(coef) || !d.clip() || d.skip()) {
                bad.append("device decision ").append(d).append(", the host's: coef ").append(coef).append(", clip, no skip\n");
            }
            AdamWConfig cfg = new AdamWConfig(1e-3, 0.9, 0.999, 1e-8, 0.01);
            AdamW cpu = new AdamW(params, cfg, 1);
            for (Parameter p : params) {
                for (long e = 0; e < p.numel(); e++) {
                    p.grad().set(e, (p.grad().get(e) * inv) * coef);
                }
            }
            for (int t = 1; t <= 3; t++) {
                if (t == 2) {
                    opt.adamw(cfg, cfg.lr(), t, inv); // as decided on the device: the same clip
                } else {
                    opt.adamw(cfg, cfg.lr(), t, inv, coef < 1f, coef);
                }
                cpu.step();
            }
            stream.synchronize();
            NamedState st = cpu.state();
            for (int i = 0; i < sizes.length; i++) {
                compare(bad, "master " + i, params.get(i).value(), opt, pAddr[i]);
                compare(bad, "exp_avg " + i, st.tensors().get("exp_avg.t" + i), opt, opt.expAvg(i));
                compare(bad, "exp_avg_sq " + i, st.tensors().get("exp_avg_sq.t" + i), opt, opt.expAvgSq(i));
            }
            // an inf in tensor 0 (its only element) and a NaN deep in tensor 3 (its second chunk)
            Tensor one = Tensor.allocate(DType.F32, Shape.of(1));
            one.set(0, Float.POSITIVE_INFINITY);
            opt.upload(gAddr[0], one.segment());
            one.set(0, Float.NaN);
            opt.upload(gAddr[3] + (c + 5L) * 4, one.segment());
            opt.measure(inv);
            stream.synchronize();
            List<Integer> nonFinite = opt.finish().nonFinite();
            if (!nonFinite.equals(List.of(0, 3))) {
                bad.append("planted an inf in tensor 0 and a NaN in tensor 3, reported ").append(nonFinite).append('\n');
            }
            // under a loss scaler the device skips this step: nothing moves
            opt.decide(1f, true);
            opt.adamw(cfg, cfg.lr(), 4, inv);
            stream.synchronize();
            if (!opt.decision().skip()) {
                bad.append("a non-finite gradient under a scaler was not skipped: ").append(opt.decision()).append('\n');
            }
            for (int i = 1; i < sizes.length; i++) {
                compare(bad, "master " + i + " after a skipped step", params.get(i).value(), opt, pAddr[i]);
            }
        } finally {
            stream.synchronize();
            buffers.forEach(CudaStorage::close);
            stream.close();
        }
        return bad.toString();
    }

    private static void compare(StringBuilder bad, String what, Tensor want, MultiTensorOptimizer opt, long address) {
        Tensor got = Tensor.allocate(DType.F32, want.shape());
        opt.download(address, got.segment(), want.numel() * 4);
        for (long e = 0; e < want.numel(); e++) {
            if (Float.floatToRawIntBits(want.get(e)) != Float.floatToRawIntBits(got.get(e))) {
                bad.append(what).append(" element ").append(e).append(": device ").append(got.get(e)).append(", CPU ")
                        .append(want.get(e)).append('\n');
                return;
            }
        }
    }

    private static Tensor copy(Tensor t) {
        Tensor c = Tensor.allocate(t.dtype(), t.shape());
        java.lang.foreign.MemorySegment.copy(t.segment(), 0, c.segment(), 0, t.numel() * 4);
        return c;
    }
}
