package dev.lantern.train;

import dev.lantern.cpu.Convert;
import dev.lantern.ir.DType;
import dev.lantern.tensor.Tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * One trainable tensor as the optimizer sees it: the f32 master {@code value}, its f32
 * {@code grad} (same shape; written by the backward, unscaled and clipped in place, read by the
 * optimizer) and, under mixed precision, the {@code low} bf16/f16 copy that the model reads. The
 * optimizer updates the master and rewrites the low copy in the same pass, so the model never sees
 * a master it has not been given. Gradients are f32 even under AMP, as in PyTorch: the backward of
 * the cast to low precision hands back an f32 gradient (an f16 overflow arrives as an f32 inf).
 *
 * @param name the parameter's name; state tensors are named after it
 * @param value the f32 master weights
 * @param grad the f32 gradient, same shape as {@code value}
 * @param low the bf16 or f16 copy the model reads, or {@code null} without mixed precision
 */
public record Parameter(String name, Tensor value, Tensor grad, Tensor low) {
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ThreadLocal<float[]> SCRATCH = ThreadLocal.withInitial(() -> new float[MultiTensor.CHUNK]);

    /** Checks dtypes and shapes. */
    public Parameter {
        if (name == null || name.isEmpty()) {
            throw new TrainStateException("a parameter needs a name");
        }
        if (value.dtype() != DType.F32) {
            throw new TrainStateException("parameter " + name + ": master weights must be f32, found " + value.type());
        }
        if (grad.dtype() != DType.F32 || !grad.shape().equals(value.shape())) {
            throw new TrainStateException("parameter " + name + ": gradient must be " + value.type() + ", found " + grad.type());
        }
        if (low != null && (!(low.dtype() == DType.BF16 || low.dtype() == DType.F16) || !low.shape().equals(value.shape()))) {
            throw new TrainStateException("parameter " + name + ": low copy must be bf16 or f16 of shape " + value.shape()
                    + ", found " + low.type());
        }
    }

    /** A full-precision parameter over {@code value} with a fresh zero gradient. */
    public static Parameter of(String name, Tensor value) {
        return new Parameter(name, value, Tensor.allocate(DType.F32, value.shape()), null);
    }

    /**
     * A mixed-precision parameter: {@code master} stays f32, a fresh {@code lowType} copy is made
     * from it (round to nearest even) for the model to read, and the gradient starts at zero.
     */
    public static Parameter mixed(String name, Tensor master, DType lowType) {
        Tensor low = Tensor.allocate(lowType, master.shape());
        Parameter p = new Parameter(name, master, Tensor.allocate(DType.F32, master.shape()), low);
        p.refreshLow(0, p.numel());
        return p;
    }

    /** Elements in the parameter. */
    public long numel() {
        return value.numel();
    }

    /** Sets every gradient element to zero (between steps, or before accumulating micro-batches). */
    public void zeroGrad() {
        grad.segment().asSlice(0, numel() * 4).fill((byte) 0);
    }

    /** Rewrites elements [start, end) of the low copy from the master; nothing without one. */
    public void refreshLow(long start, long end) {
        if (low == null) {
            return;
        }
        float[] buf = SCRATCH.get();
        for (long at = start; at < end; at += buf.length) {
            int n = (int) Math.min(buf.length, end - at);
            MemorySegment.copy(value.segment(), F32, at * 4, buf, 0, n);
            // Convert.store rounds to nearest even as Half does, vectorised for bf16
            Convert.store(buf, 0, low.segment(), low.dtype(), at, 1, n);
        }
    }
}
