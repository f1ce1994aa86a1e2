package dev.lantern.cuda.lower;

import dev.lantern.cuda.blas.GemmSpec;
import dev.lantern.cuda.codegen.KernelParam;
import dev.lantern.engine.CompiledModel;
import java.util.List;

/**
 * What every device step promises about the memory behind its pointers, checked twice before
 * anything runs:
 *
 * <ol>
 * <li>at lowering ({@link #check(CompiledModel, List)}): each kernel pointer's extent (the bytes
 *     its shape and strides reach from the pointer) fits the buffer it points into, and each
 *     GEMM's A, B, C, D and bias, sized from its {@link GemmSpec}, fit theirs;
 * <li>at binding ({@link #checkBound}): each address lies in an allocation that holds the
 *     extent, with the alignment the kernel or the cuBLASLt plan was chosen for, and the GEMM
 *     workspace holds what the chosen algorithm asks.
 * </ol>
 *
 * A violation is a {@link LaunchContractException} naming the step and the operand. cuBLASLt
 * reads whatever its layouts say, so an operand the memory cannot back is an illegal address
 * (sticky: the context is lost) or silent garbage; this is where that becomes a typed error.
 */
public final class LaunchContract {
    /**
     * The pointer alignment cuBLASLt plans assume: {@code CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES}
     * defaults to 256, and a less aligned pointer given to an algorithm chosen under that default
     * is undefined behaviour. The memory planner aligns every slot to it.
     */
    public static final long GEMM_ALIGNMENT = 256;

    private LaunchContract() {}

    /** Bytes that a (dims, strides) view of {@code eltBytes}-byte elements reaches from its base: 0 when empty. */
    public static long extentBytes(long[] dims, long[] strides, int eltBytes) {
        long last = 0;
        for (int i = 0; i < dims.length; i++) {
            if (dims[i] == 0) {
                return 0;
            }
            if (strides[i] < 0) {
                throw new LaunchContractException("negative stride " + strides[i] + " in dim " + i);
            }
            last = Math.addExact(last, Math.multiplyExact(dims[i] - 1, strides[i]));
        }
        return Math.multiplyExact(last + 1, (long) eltBytes);
    }

    /** Lowering-time half: every step's operands fit the buffers they point into. */
    public static void check(CompiledModel model, List<Step> steps) {
        for (int i = 0; i < steps.size(); i++) {
            Step s = steps.get(i);
            switch (s) {
                case Step.Launch l -> {
                    int p = 0;
                    for (Step.Arg a : l.args()) {
                        if (a instanceof Step.Ptr ptr && ptr.offset() + ptr.extent() > ptr.buf().bytes()) {
                            throw violation(model, i, s, operand(l, p), ptr.buf() + " reaches " + (ptr.offset() + ptr.extent())
                                    + " bytes, the buffer holds " + ptr.buf().bytes());
                        }
                        p++;
                    }
                }
                case Step.Gemm g -> {
                    GemmSpec sp = g.spec();
                    fits(model, i, s, "A", g.a(), Math.addExact(g.aOffset(), gemmBytes(sp, 'A')));
                    fits(model, i, s, "B", g.b(), gemmBytes(sp, 'B'));
                    if (g.c() != null) {
                        fits(model, i, s, "C", g.c(), gemmBytes(sp, 'D'));
                    }
                    fits(model, i, s, "D", g.d(), gemmBytes(sp, 'D'));
                    if (sp.epilogue().hasBias()) {
                        if (g.bias() == null) {
                            throw violation(model, i, s, "bias", "the epilogue " + sp.epilogue() + " reads a bias and none is bound");
                        }
                        fits(model, i, s, "bias", g.bias(), (long) sp.n() * sp.biasType().bytes);
                    }
                    if (g.aux() != null) {
                        fits(model, i, s, "aux", g.aux(), gemmBytes(sp, 'D'));
                    }
                }
            }
        }
    }

    /** Bytes of a GEMM operand: 'A' (m×k), 'B' (k×n), 'D' (m×ldd, also C), all batches. */
    public static long gemmBytes(GemmSpec s, char operand) {
        long elems = switch (operand) {
            case 'A' -> (long) s.m() * s.k();
            case 'B' -> (long) s.k() * s.n();
            case 'D' -> (long) s.m() * s.ldd();
            default -> throw new IllegalArgumentException("operand " + operand);
        };
        long elt = operand == 'D' ? s.cdType().bytes : s.abType().bytes;
        return Math.multiplyExact(Math.multiplyExact(elems, (long) s.batch()), elt);
    }

    /**
     * Binding-time half: {@code address} points {@code room} bytes before the end of its
     * allocation; the step touches {@code extent} bytes from it and needs {@code alignment}.
     */
    public static void checkBound(CompiledModel model, int index, Step step, String operand, long address, long room,
                                  long extent, long alignment) {
        if (address == 0 && extent > 0) {
            throw violation(model, index, step, operand, "null pointer for " + extent + " bytes");
        }
        if (extent > room) {
            throw violation(model, index, step, operand, "reaches " + extent + " bytes from 0x" + Long.toHexString(address)
                    + ", its allocation holds " + room + " from there");
        }
        if (alignment > 1 && address % alignment != 0) {
            throw violation(model, index, step, operand, "address 0x" + Long.toHexString(address) + " is not "
                    + alignment + "-byte aligned, which " + (step instanceof Step.Gemm ? "the cuBLASLt plan" : "the kernel's path")
                    + " assumes");
        }
    }

    /** The kernel parameter a pointer argument binds, by its declared name. */
    public static String operand(Step.Launch l, int argIndex) {
        List<KernelParam> params = l.source().params();
        return argIndex < params.size() ? params.get(argIndex).name() : "argument " + argIndex;
    }

    private static void fits(CompiledModel model, int i, Step s, String operand, Buf b, long bytes) {
        if (b == null) {
            throw violation(model, i, s, operand, "no buffer bound for " + bytes + " bytes");
        }
        if (bytes > b.bytes()) {
            throw violation(model, i, s, operand, b + " holds " + b.bytes() + " bytes, the GEMM reads or writes " + bytes);
        }
    }

    static LaunchContractException violation(CompiledModel model, int index, Step s, String operand, String what) {
        String kernel = s.kernel() >= 0 && s.kernel() < model.kernels().size()
                ? model.kernels().get(s.kernel()).name() + " (" + model.kernels().get(s.kernel()).node() + ")"
                : "kernel " + s.kernel();
        String step = switch (s) {
            case Step.Launch l -> l.source().entry();
            case Step.Gemm g -> "gemm " + g.spec().m() + "x" + g.spec().n() + "x" + g.spec().k()
                    + (g.spec().batch() > 1 ? " batch " + g.spec().batch() : "");
        };
        return new LaunchContractException("launch contract: step " + index + " (" + step + ") of " + kernel
                + ", operand " + operand + ": " + what);
    }
}
