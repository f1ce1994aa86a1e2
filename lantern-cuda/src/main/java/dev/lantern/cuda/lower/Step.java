package dev.lantern.cuda.lower;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.KernelSpec;
import java.util.List;

/**
 * One device operation of a lowered model, in stream order: a generated kernel launch or a
 * cuBLASLt GEMM. {@code kernel} is the index of the IR kernel it belongs to (several steps
 * may serve one IR kernel: a view materialised, then the kernel).
 */
public sealed interface Step permits Step.Launch, Step.Gemm {
    int kernel();

    /** A kernel argument: a buffer's address, or a scalar of the C type the kernel declares. */
    sealed interface Arg permits Ptr, I64, I32, F32 {}

    /**
     * A buffer's address, {@code offset} bytes in; {@code extent}: how many bytes from there the kernel
     * may touch (checked against the buffer by the {@link LaunchContract}). A slice reads at an offset,
     * a concat writes each input at one.
     */
    record Ptr(Buf buf, long extent, long offset) implements Arg {
        public Ptr {
            if (extent < 0 || offset < 0) {
                throw new IllegalArgumentException("negative extent " + extent + " or offset " + offset + " of " + buf);
            }
        }

        /** From the buffer's start. */
        public Ptr(Buf buf, long extent) {
            this(buf, extent, 0);
        }

        /** The whole buffer. */
        public Ptr(Buf buf) {
            this(buf, buf.bytes(), 0);
        }
    }

    record I64(long v) implements Arg {}

    record I32(int v) implements Arg {}

    record F32(float v) implements Arg {}

    /** A generated kernel: its spec (for re-rendering with other tiles), source and arguments in order. */
    record Launch(int kernel, KernelSpec spec, CudaKernelSource source, List<Arg> args) implements Step {
        public Launch {
            args = List.copyOf(args);
            if (args.size() != source.params().size() - source.tensorMapCount()) {
                throw new IllegalStateException(source.entry() + ": " + args.size() + " arguments for "
                        + source.params().size() + " parameters");
            }
        }
    }

    /**
     * {@code d = a·b (+ bias) (epilogue) + beta·c}, row-major (see {@link GemmSpec}); {@code c}
     * and {@code bias} may be null; {@code aux} is the auxiliary matrix of a GELU_AUX or DGELU
     * epilogue (D's shape and layout), else null.
     */
    record Gemm(int kernel, GemmSpec spec, Buf a, Buf b, Buf c, Buf d, Buf bias, float beta, long aOffset, Buf aux) implements Step {
        public Gemm {
            if (aOffset < 0) {
                throw new IllegalArgumentException("negative A offset " + aOffset);
            }
            if (spec.epilogue().hasAux() != (aux != null)) {
                throw new IllegalArgumentException("epilogue " + spec.epilogue() + (aux == null ? " needs" : " takes no") + " auxiliary matrix");
            }
        }

        /** No auxiliary matrix. */
        public Gemm(int kernel, GemmSpec spec, Buf a, Buf b, Buf c, Buf d, Buf bias, float beta, long aOffset) {
            this(kernel, spec, a, b, c, d, bias, beta, aOffset, null);
        }

        /** A from the start of its buffer. */
        public Gemm(int kernel, GemmSpec spec, Buf a, Buf b, Buf c, Buf d, Buf bias, float beta) {
            this(kernel, spec, a, b, c, d, bias, beta, 0);
        }

        /** FLOPs: 2·m·n·k·batch. */
        public double flops() {
            return 2.0 * spec.m() * spec.n() * spec.k() * spec.batch();
        }

        /** What the autotuner chooses a cuBLASLt candidate for: the spec, and whether C is read. */
        public GemmUse use() {
            return new GemmUse(spec, c != null);
        }
    }

    /**
     * A GEMM spec as one step uses it: with a C input (beta = 1) the epilogue reads a third
     * matrix, and the fastest candidate can differ (measured on the H200: the o projection's
     * best candidate with C is not the q projection's without), so each use is tuned alone.
     */
    record GemmUse(GemmSpec spec, boolean withC) {}
}
