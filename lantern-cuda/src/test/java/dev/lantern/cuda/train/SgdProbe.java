package dev.lantern.cuda.train;

import dev.lantern.cuda.codegen.MultiTensorKernels;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.ir.DType;
import dev.lantern.ir.Shape;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.NamedState;
import dev.lantern.train.Parameter;
import dev.lantern.train.Sgd;
import dev.lantern.train.SgdConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The device SGD kernel ({@code lt_mt_sgd} through {@link MultiTensorOptimizer#sgd}) against the
 * CPU's {@link Sgd}, no cuBLASLt, so that compute-sanitizer can run it too: tensors of odd sizes
 * (1, 7, 1000003, a chunk and three more, a seeded random one) in their own allocations, four steps
 * with fresh seeded gradients, unscaled by 1/1024 (and once with the identity scale), clipped on the
 * odd steps (global norm 1, as the trainer computes the coefficient) and not on the even ones, the
 * learning rate changing every step. Each configuration the kernel serves: momentum with L2 weight
 * decay (the trainer's), dampening, Nesterov, plain SGD (no buffer, zero state slots).
 *
 * <p>Tolerance: none. The kernel computes the CPU's lines with the same roundings ({@code fmaf}
 * where the CPU fuses, {@code __fmul_rn} elsewhere), so masters and momentum buffers must be
 * bit-identical. As a check of the CPU itself, the masters are also compared with a float64
 * evaluation of PyTorch's rule (|error| at most 1e-5 · (1 + |p|)) and must have moved.
 *
 * <p>Resume: after step 2 the masters and buffers are downloaded, uploaded to a second optimizer
 * over fresh master buffers (as a checkpoint restore does), and both run steps 3 and 4; the resumed
 * one must end bit-identical to the straight one.
 */
public final class SgdProbe {
    private SgdProbe() {}

    private record Case(String name, SgdConfig config, float inv) {}

    private static final List<Case> CASES = List.of(
            new Case("momentum 0.9, weight decay 0.01 (the trainer's)", new SgdConfig(0.05, 0.9, 0, false, 0.01), 1f / 1024f),
            new Case("momentum 0.9, identity scale", new SgdConfig(0.05, 0.9, 0, false, 0.01), 1f),
            new Case("momentum 0.8, dampening 0.25", new SgdConfig(0.05, 0.8, 0.25, false, 0), 1f / 1024f),
            new Case("Nesterov 0.7, weight decay 1e-4", new SgdConfig(0.05, 0.7, 0, true, 1e-4), 1f / 1024f),
            new Case("plain SGD, weight decay 0.1", new SgdConfig(0.05, 0, 0, false, 0.1), 1f / 1024f));

    static final int STEPS = 4;

    public static void main(String[] args) {
        try (CudaDevice gpu = CudaDevice.open(0)) {
            String problems = check(gpu, args.length > 0 ? Long.parseLong(args[0]) : 18);
            System.out.println(problems.isEmpty() ? "sgd probe: OK" : "sgd probe: FAILED\n" + problems);
            if (!problems.isEmpty()) {
                System.exit(1);
            }
        }
    }

    /** Runs every case on {@code gpu} with data from {@code seed}; what differs, or the empty string. */
    public static String check(CudaDevice gpu, long seed) {
        StringBuilder bad = new StringBuilder();
        for (Case c : CASES) {
            check(gpu, c, new Random(seed), bad);
        }
        return bad.toString();
    }

    private static void check(CudaDevice gpu, Case k, Random r, StringBuilder bad) {
        long[] sizes = {1, 7, 1_000_003, MultiTensorKernels.CHUNK + 3, 1 + r.nextInt(5000)};
        int n = sizes.length;
        int slots = k.config().momentum() != 0 ? 1 : 0;
        CudaStream stream = gpu.newStream(false);
        List<CudaStorage> buffers = new ArrayList<>();
        long[] pAddr = new long[n];
        long[] p2Addr = new long[n];
        long[] gAddr = new long[n];
        List<Parameter> params = new ArrayList<>();
        double[][] p64 = new double[n][];
        double[][] b64 = new double[n][];
        float[][] initial = new float[n][];
        try (MultiTensorOptimizer opt = new MultiTensorOptimizer(gpu, stream, sizes, slots)) {
            MultiTensorOptimizer resumed = null;
            try {
                for (int i = 0; i < n; i++) {
                    int size = (int) sizes[i];
                    Tensor p = Tensor.allocate(DType.F32, Shape.of(size));
                    p64[i] = new double[size];
                    b64[i] = new double[size];
                    initial[i] = new float[size];
                    for (int e = 0; e < size; e++) {
                        p.set(e, (float) (r.nextGaussian() * 0.5));
                        p64[i][e] = p.get(e);
                        initial[i][e] = p.get(e);
                    }
                    pAddr[i] = own(buffers, gpu.allocate(sizes[i] * 4)).address();
                    p2Addr[i] = own(buffers, gpu.allocate(sizes[i] * 4)).address();
                    gAddr[i] = own(buffers, gpu.allocate(sizes[i] * 4)).address();
                    opt.upload(pAddr[i], p.segment());
                    params.add(Parameter.of("t" + i, p));
                }
                opt.bind(pAddr, gAddr);
                Sgd cpu = new Sgd(params, k.config(), 2);
                Tensor[] g = new Tensor[n];
                for (int step = 0; step < STEPS; step++) {
                    double lr = k.config().lr() * (1 + 0.5 * step); // a schedule: the lr given each step
                    cpu.setLr(lr);
                    // fresh gradients, the loss scale's size when unscaled by 1/1024
                    double sumSquares = 0;
                    for (int i = 0; i < n; i++) {
                        g[i] = Tensor.allocate(DType.F32, Shape.of((int) sizes[i]));
                        for (long e = 0; e < sizes[i]; e++) {
                            g[i].set(e, (float) (r.nextGaussian() * (k.inv() == 1f ? 4 : 4096)));
                            float u = k.inv() == 1f ? g[i].get(e) : g[i].get(e) * k.inv();
                            sumSquares += (double) u * u;
                        }
                        opt.upload(gAddr[i], g[i].segment());
                    }
                    // the trainer's clip: coefficient from the norm, applied when below 1 (odd steps clip to 1, even ones to 1e9)
                    float norm = (float) Math.sqrt(sumSquares);
                    float coef = (float) (step % 2 == 0 ? 1.0 : 1e9) / (norm + 1e-6f);
                    boolean clip = !(coef >= 1f);
                    for (int i = 0; i < n; i++) {
                        Tensor hg = params.get(i).grad();
                        for (long e = 0; e < sizes[i]; e++) {
                            float u = k.inv() == 1f ? g[i].get(e) : g[i].get(e) * k.inv();
                            hg.set(e, clip ? u * coef : u);
                        }
                        reference(k.config(), lr, step == 0, hg, p64[i], b64[i]);
                    }
                    opt.sgd(k.config(), lr, step, k.inv(), clip, coef);
                    if (resumed != null) {
                        resumed.sgd(k.config(), lr, step, k.inv(), clip, coef);
                    }
                    cpu.step();
                    if (step == 1) {
                        resumed = resume(gpu, stream, sizes, slots, opt, pAddr, p2Addr, gAddr);
                    }
                }
                stream.synchronize();
                NamedState st = cpu.state();
                for (int i = 0; i < n; i++) {
                    Tensor master = params.get(i).value();
                    compare(bad, k.name() + ": master " + i, master, opt, pAddr[i]);
                    compare(bad, k.name() + ": resumed master " + i, master, opt, p2Addr[i]);
                    if (slots == 1) {
                        Tensor buf = st.tensors().get("momentum_buffer.t" + i);
                        compare(bad, k.name() + ": momentum buffer " + i, buf, opt, opt.state(0, i));
                        compare(bad, k.name() + ": resumed momentum buffer " + i, buf, resumed, resumed.state(0, i));
                    }
                    double worst = 0;
                    long moved = 0;
                    for (int e = 0; e < sizes[i]; e++) {
                        worst = Math.max(worst, Math.abs(master.get(e) - p64[i][e]) / (1 + Math.abs(p64[i][e])));
                        moved += master.get(e) != initial[i][e] ? 1 : 0;
                    }
                    if (!(worst <= 1e-5)) {
                        bad.append(k.name()).append(": master ").append(i).append(" is ").append(worst)
                                .append(" from float64 PyTorch (relative to 1 + |p|)\n");
                    }
                    if (moved < (sizes[i] + 1) / 2) {
                        bad.append(k.name()).append(": only ").append(moved).append(" of ").append(sizes[i])
                                .append(" elements of master ").append(i).append(" moved\n");
                    }
                }
                if (slots == 0 && opt.deviceBytes() >= bufferBytes(sizes)) {
                    bad.append(k.name()).append(": plain SGD holds ").append(opt.deviceBytes()).append(" device bytes, as much as a buffer\n");
                }
            } finally {
                stream.synchronize();
                if (resumed != null) {
                    resumed.close();
                }
            }
        } finally {
            buffers.forEach(CudaStorage::close);
            stream.close();
        }
    }

    /** PyTorch's SGD in float64 on the clipped, unscaled gradient {@code g} (as the CPU's optimizer sees it). */
    private static void reference(SgdConfig c, double lr, boolean first, Tensor g, double[] p, double[] b) {
        for (int e = 0; e < p.length; e++) {
            double ge = g.get(e) + c.weightDecay() * p[e];
            if (c.momentum() != 0) {
                b[e] = first ? ge : c.momentum() * b[e] + (1 - c.dampening()) * ge;
                ge = c.nesterov() ? ge + c.momentum() * b[e] : b[e];
            }
            p[e] -= lr * ge;
        }
    }

    /**
     * A second optimizer holding what a checkpoint of {@code opt} holds: masters downloaded and
     * uploaded to fresh buffers, momentum buffers downloaded and uploaded into its state.
     */
    private static MultiTensorOptimizer resume(CudaDevice gpu, CudaStream stream, long[] sizes, int slots, MultiTensorOptimizer opt,
                                               long[] pAddr, long[] p2Addr, long[] gAddr) {
        stream.synchronize();
        MultiTensorOptimizer resumed = new MultiTensorOptimizer(gpu, stream, sizes, slots);
        for (int i = 0; i < sizes.length; i++) {
            Tensor t = Tensor.allocate(DType.F32, Shape.of((int) sizes[i]));
            opt.download(pAddr[i], t.segment(), sizes[i] * 4);
            resumed.upload(p2Addr[i], t.segment());
            if (slots == 1) {
                opt.download(opt.state(0, i), t.segment(), sizes[i] * 4);
                resumed.upload(resumed.state(0, i), t.segment());
            }
        }
        resumed.bind(p2Addr, gAddr);
        return resumed;
    }

    /** The bytes of one state buffer over {@code sizes}: plain SGD must hold less than that. */
    private static long bufferBytes(long[] sizes) {
        long total = 0;
        for (long s : sizes) {
            total += s;
        }
        return total * 4;
    }

    private static CudaStorage own(List<CudaStorage> buffers, CudaStorage s) {
        buffers.add(s);
        return s;
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
}
