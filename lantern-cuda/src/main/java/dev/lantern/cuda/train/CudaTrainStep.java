package dev.lantern.cuda.train;

import dev.lantern.Device;
import dev.lantern.RunMode;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.MultiTensorKernels;
import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaModule;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.cuda.engine.CudaSession;
import dev.lantern.cuda.nvrtc.KernelSource;
import dev.lantern.cuda.nvrtc.ModuleCache;
import dev.lantern.engine.CompiledModel;
import dev.lantern.engine.Compiler;
import dev.lantern.ir.DType;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Node;
import dev.lantern.ir.TensorType;
import dev.lantern.runtime.GraphPolicy;
import dev.lantern.tensor.Tensor;
import dev.lantern.train.AdamWConfig;
import dev.lantern.train.run.DeviceStep;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The training step kept on one GPU ({@link DeviceStep}): the step graph (parameters as inputs)
 * compiled for cuda and loaded as a {@link CudaSession}, whose input buffers hold the f32 masters
 * for the whole run; the gradients are the step's outputs where the memory plan put them; the
 * moments are two flat f32 buffers. Per step: the batch uploaded, forward and backward (a CUDA
 * graph replay in {@link RunMode#GRAPH}), one {@code lt_mt_sumsq} launch, and the loss and the
 * per-chunk sums read back; then, as the host decides, one {@code lt_mt_adamw} launch. Nothing
 * else crosses the bus.
 */
public final class CudaTrainStep implements DeviceStep {
    /** Bytes of pinned memory that reads and writes of the masters and moments go through. */
    private static final long STAGING = 16L << 20;

    private final Device device;
    private final CudaDevice gpu;
    private final CudaSession session;
    private final CudaStream stream;
    private final RunMode mode;
    private final MultiTensorTable table;
    private final List<String> masterValues = new ArrayList<>(); // the trained inputs' node names
    private final List<String> gradValues = new ArrayList<>();   // the gradients' values in the compiled graph
    private final String lossValue;
    private final List<CudaStorage> owned = new ArrayList<>();
    private final CudaStorage m;
    private final CudaStorage v;
    private final CudaStorage tensors;
    private final CudaStorage chunkTable;
    private final CudaStorage partial;
    private final CudaStorage bad;
    private final CudaStorage pinned;
    private final CudaModule sumModule;
    private final CudaModule adamModule;
    private final CudaKernelSource sumSource = MultiTensorKernels.sumSquares();
    private final CudaKernelSource adamSource = MultiTensorKernels.adamw();

    /** Compiles {@code spec} for its cuda device and uploads its initial values. */
    public CudaTrainStep(DeviceStep.Spec spec) {
        this.device = spec.device();
        this.mode = spec.mode();
        CompiledModel model = Compiler.compile(spec.graph(), spec.options().withTarget("cuda").withFuse(mode.fused()));
        Map<String, Node> inputs = new HashMap<>();
        for (Node n : model.graph().inputs()) {
            inputs.put(n.attrs().getString("name", n.name()), n);
        }
        // the compiled graph may rename a returned value but keeps the outputs' positions
        List<String> before = spec.graph().outputs();
        List<String> after = model.graph().outputs();
        long[] sizes = new long[spec.trained().size()];
        for (int i = 0; i < sizes.length; i++) {
            Node in = inputs.get(spec.trained().get(i));
            int at = before.indexOf(spec.gradients().get(i));
            if (in == null || at < 0) {
                throw new LanternException("the training step has no input '" + spec.trained().get(i) + "' or no output %"
                        + spec.gradients().get(i) + " for its gradient");
            }
            TensorType pt = model.graph().type(in.name());
            TensorType gt = model.graph().type(after.get(at));
            if (pt.dtype() != DType.F32 || gt.dtype() != DType.F32 || pt.shape().numel() != gt.shape().numel()) {
                throw new LanternException("parameter '" + spec.trained().get(i) + "' is " + pt + " and its gradient " + gt
                        + ": the device optimizer steps f32 masters on f32 gradients of the same size");
            }
            masterValues.add(in.name());
            gradValues.add(after.get(at));
            sizes[i] = pt.shape().numel();
        }
        int lossAt = before.indexOf(spec.loss());
        if (lossAt < 0) {
            throw new LanternException("the training step has no output %" + spec.loss() + " for its loss");
        }
        this.lossValue = after.get(lossAt);
        this.table = new MultiTensorTable(sizes);
        this.gpu = CudaDevice.open(device.index());
        CudaSession s = null;
        try {
            CudaSession.Options o = switch (mode) {
                case EAGER -> CudaSession.Options.eager();
                case COMPILED -> CudaSession.Options.compiled().withPolicy(GraphPolicy.OFF);
                case GRAPH -> CudaSession.Options.compiled().withPolicy(GraphPolicy.PREFER);
            };
            s = CudaSession.open(gpu, model, Map.of(), o);
            this.session = s;
            this.stream = s.stream();
            session.setSomeInputs(spec.initial());
            long moments = Math.max(table.totalElements() * 4, 256);
            this.m = own(gpu.allocate(moments));
            this.v = own(gpu.allocate(moments));
            stream.memset(m, 0, (byte) 0, moments);
            stream.memset(v, 0, (byte) 0, moments);
            int chunks = table.chunkCount();
            this.tensors = own(gpu.allocate((long) table.tensorCount() * MultiTensorKernels.TENSOR_WORDS * 8));
            this.chunkTable = own(gpu.allocate((long) chunks * MultiTensorKernels.CHUNK_WORDS * 8));
            this.partial = own(gpu.allocate((long) chunks * 8));
            this.bad = own(gpu.allocate((long) chunks * 4));
            this.pinned = own(gpu.allocatePinned(Math.max(STAGING, (long) chunks * 12)));
            upload(chunkTable, 0, MemorySegment.ofArray(table.chunks()));
            ModuleCache cache = ModuleCache.forDevice(gpu);
            this.sumModule = cache.load(gpu, new KernelSource(sumSource.entry(), sumSource.source()));
            this.adamModule = cache.load(gpu, new KernelSource(adamSource.entry(), adamSource.source()));
            stream.synchronize();
        } catch (RuntimeException e) {
            owned.forEach(CudaStorage::close);
            if (s != null) {
                s.close();
            }
            gpu.close();
            throw e;
        }
    }

    private CudaStorage own(CudaStorage s) {
        owned.add(s);
        return s;
    }

    @Override
    public Device device() {
        return device;
    }

    @Override
    public CompiledModel compiled() {
        return session.model();
    }

    @Override
    public Measured run(Map<String, Tensor> inputs, float invScale) {
        session.setSomeInputs(inputs);
        if (mode == RunMode.GRAPH) {
            session.forwardGraph();
        } else {
            session.forward();
        }
        refreshTable();
        int chunks = table.chunkCount();
        sumModule.kernel(sumSource.entry()).launch(stream, new int[] {chunks, 1, 1}, new int[] {MultiTensorKernels.THREADS, 1, 1}, 0,
                tensors.address(), chunkTable.address(), invScale, invScale == 1f ? 1 : 0, partial.address(), bad.address());
        stream.copy(partial, 0, pinned, 0, (long) chunks * 8);
        stream.copy(bad, 0, pinned, (long) chunks * 8, (long) chunks * 4);
        Tensor loss = session.output(lossValue); // synchronises the stream: the copies above are done
        MemorySegment host = pinned.hostSegment();
        double sum = 0;
        TreeSet<Integer> nonFinite = new TreeSet<>();
        for (int c = 0; c < chunks; c++) {
            sum += host.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, c);
            if (host.get(ValueLayout.JAVA_INT_UNALIGNED, (long) chunks * 8 + c * 4L) != 0) {
                nonFinite.add(table.chunkTensor(c));
            }
        }
        return new Measured(loss.get(0), sum, List.copyOf(nonFinite));
    }

    /** The tensor table for where the masters and this step's gradients are now (uploaded when it moved). */
    private void refreshTable() {
        long[] masters = new long[masterValues.size()];
        long[] grads = new long[gradValues.size()];
        for (int i = 0; i < masters.length; i++) {
            masters[i] = session.addressOf(masterValues.get(i));
            grads[i] = session.addressOf(gradValues.get(i));
        }
        long[] t = table.tensors(masters, grads, m.address(), v.address());
        if (t != null) {
            upload(tensors, 0, MemorySegment.ofArray(t));
        }
    }

    @Override
    public void adamw(AdamWConfig config, double lr, long t, float invScale, boolean clip, float coef) {
        // the step's scalars in double, as the CPU's AdamW.step and FusedAdamW compute them
        double bc1 = 1 - Math.pow(config.beta1(), t);
        double bc2 = 1 - Math.pow(config.beta2(), t);
        float decay = (float) (1 - lr * config.weightDecay());
        float w1 = (float) (1 - config.beta1());
        boolean small = Math.abs(w1) < 0.5f;
        float w2 = (float) (1 - config.beta2());
        adamModule.kernel(adamSource.entry()).launch(stream, new int[] {table.chunkCount(), 1, 1},
                new int[] {MultiTensorKernels.THREADS, 1, 1}, 0,
                tensors.address(), chunkTable.address(), invScale, invScale == 1f ? 1 : 0, coef, clip ? 1 : 0,
                decay, config.weightDecay() != 0 ? 1 : 0, small ? w1 : w1 - 1f, small ? 1 : 0, w2, (float) config.beta2(),
                (float) Math.sqrt(bc2), (float) config.eps(), (float) -(lr / bc1));
    }

    @Override
    public void read(List<Tensor> masters, List<Tensor> expAvg, List<Tensor> expAvgSq) {
        checkSizes(masters, expAvg, expAvgSq);
        for (int i = 0; i < table.tensorCount(); i++) {
            long bytes = table.size(i) * 4;
            download(session.addressOf(masterValues.get(i)), masters.get(i).segment(), bytes);
            download(m.address() + table.offset(i) * 4, expAvg.get(i).segment(), bytes);
            download(v.address() + table.offset(i) * 4, expAvgSq.get(i).segment(), bytes);
        }
    }

    @Override
    public void write(List<Tensor> masters, List<Tensor> expAvg, List<Tensor> expAvgSq) {
        checkSizes(masters, expAvg, expAvgSq);
        for (int i = 0; i < table.tensorCount(); i++) {
            long bytes = table.size(i) * 4;
            upload(view(session.addressOf(masterValues.get(i)), bytes), 0, masters.get(i).segment().asSlice(0, bytes));
            upload(m, table.offset(i) * 4, expAvg.get(i).segment().asSlice(0, bytes));
            upload(v, table.offset(i) * 4, expAvgSq.get(i).segment().asSlice(0, bytes));
        }
    }

    private void checkSizes(List<Tensor> masters, List<Tensor> expAvg, List<Tensor> expAvgSq) {
        int n = table.tensorCount();
        if (masters.size() != n || expAvg.size() != n || expAvgSq.size() != n) {
            throw new IllegalArgumentException("expected " + n + " tensors of each kind, got " + masters.size() + ", " + expAvg.size()
                    + ", " + expAvgSq.size());
        }
        for (int i = 0; i < n; i++) {
            for (Tensor t : List.of(masters.get(i), expAvg.get(i), expAvgSq.get(i))) {
                if (t.dtype() != DType.F32 || t.numel() != table.size(i)) {
                    throw new IllegalArgumentException("tensor " + i + " is " + t.dtype() + t.shape() + ", not f32 of " + table.size(i)
                            + " elements");
                }
            }
        }
    }

    private CudaStorage view(long address, long bytes) {
        return CudaStorage.view(gpu, address, bytes, () -> { });
    }

    /** {@code bytes} of device memory at {@code address} into {@code dst}, through the pinned staging. */
    private void download(long address, MemorySegment dst, long bytes) {
        for (long done = 0; done < bytes; done += STAGING) {
            long n = Math.min(STAGING, bytes - done);
            stream.copy(view(address + done, n), 0, pinned, 0, n);
            stream.synchronize();
            MemorySegment.copy(pinned.hostSegment(), 0, dst, done, n);
        }
    }

    /** {@code src} to {@code dst} at {@code offset}, through the pinned staging. */
    private void upload(CudaStorage dst, long offset, MemorySegment src) {
        long bytes = src.byteSize();
        for (long done = 0; done < bytes; done += STAGING) {
            long n = Math.min(STAGING, bytes - done);
            MemorySegment.copy(src, done, pinned.hostSegment(), 0, n);
            stream.copy(pinned, 0, dst, offset + done, n);
            stream.synchronize();
        }
    }

    @Override
    public long peakBytes() {
        long own = 0;
        for (CudaStorage s : owned) {
            own += s.kind() == CudaStorage.Kind.DEVICE ? s.bytes() : 0;
        }
        return session.peakBytes() + own;
    }

    @Override
    public void close() {
        try {
            stream.synchronize();
        } finally {
            try {
                session.close();
            } finally {
                owned.forEach(CudaStorage::close);
                sumModule.close();
                adamModule.close();
                gpu.close();
            }
        }
    }

    /** The {@link DeviceStep.Provider} of lantern-cuda. */
    public static final class Provider implements DeviceStep.Provider {
        @Override
        public String kind() {
            return "cuda";
        }

        @Override
        public DeviceStep open(DeviceStep.Spec spec) {
            return new CudaTrainStep(spec);
        }
    }
}
