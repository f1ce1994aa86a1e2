package dev.lantern.cuda.train;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.cuda.driver.CudaEvent;
import dev.lantern.cuda.driver.CudaStorage;
import dev.lantern.cuda.driver.CudaStream;
import dev.lantern.ir.TensorType;
import dev.lantern.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * A training step's batch into the step's input buffers without the host waiting: each tensor is
 * copied into its own place in one page-locked buffer and from there to the device on the step's
 * stream, behind whatever the stream still runs (the last step's optimizer). Before the buffer is
 * filled again the host waits only for the last batch's copies (an event), which the step it fed
 * has long finished with. A {@code cuMemcpyHtoD} per input with a synchronisation after each would
 * wait for the whole previous step instead, and leave the GPU idle while the host launches the next.
 */
final class BatchUploader implements AutoCloseable {
    private static final long ALIGN = 256;

    private final CudaDevice gpu;
    private final CudaStream stream;
    private final Map<String, TensorType> types;    // the inputs a batch may hold, by input name
    private final ToLongFunction<String> address;   // where an input's bytes are on the device now
    private final CudaEvent copied;
    private CudaStorage pinned;
    private boolean pending;

    BatchUploader(CudaDevice gpu, CudaStream stream, Map<String, TensorType> types, ToLongFunction<String> address) {
        this.gpu = gpu;
        this.stream = stream;
        this.types = Map.copyOf(types);
        this.address = address;
        this.copied = gpu.newEvent(false);
    }

    /** Enqueues the copies of {@code batch} (tensors by input name, each of its input's type) on the stream. */
    void upload(Map<String, Tensor> batch) {
        long bytes = 0;
        for (Map.Entry<String, Tensor> e : batch.entrySet()) {
            TensorType want = types.get(e.getKey());
            Tensor t = e.getValue();
            if (want == null) {
                throw new IllegalArgumentException("the training step has no input '" + e.getKey() + "'");
            }
            if (t.dtype() != want.dtype() || !t.shape().equals(want.shape())) {
                throw new IllegalArgumentException("input '" + e.getKey() + "' is " + t.dtype() + t.shape() + ", the step takes " + want);
            }
            bytes += align(want.contiguous().bytes());
        }
        if (pending) {
            copied.synchronize(); // the last batch has left the buffer
        }
        if (pinned == null || pinned.bytes() < bytes) {
            if (pinned != null) {
                pinned.close();
            }
            pinned = gpu.allocatePinned(Math.max(bytes, 1L << 16));
        }
        long at = 0;
        for (Map.Entry<String, Tensor> e : batch.entrySet()) {
            long n = types.get(e.getKey()).contiguous().bytes();
            MemorySegment.copy(e.getValue().segment(), 0, pinned.hostSegment(), at, n);
            stream.copy(pinned, at, CudaStorage.view(gpu, address.applyAsLong(e.getKey()), n, () -> { }), 0, n);
            at += align(n);
        }
        stream.record(copied);
        pending = true;
    }

    private static long align(long n) {
        return (n + ALIGN - 1) / ALIGN * ALIGN;
    }

    /** Frees the page-locked buffer (after the stream has drained). */
    @Override
    public void close() {
        copied.close();
        if (pinned != null) {
            pinned.close();
        }
    }
}
