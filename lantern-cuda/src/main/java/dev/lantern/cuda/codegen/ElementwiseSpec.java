package dev.lantern.cuda.codegen;

import dev.lantern.ir.DType;

import java.util.ArrayList;
import java.util.List;

/**
 * A fused chain of elementwise ops over broadcast inputs, written to one output.
 *
 * <pre>
 * // y = gelu_tanh(x + bias), x: bf16[16384,4096], bias: bf16[4096] broadcast over rows
 * new ElementwiseSpec("lt_bias_gelu", List.of(16384L, 4096L),
 *     List.of(Operand.contiguous(BF16, shape), new Operand(BF16, List.of(0L, 1L))),
 *     List.of(new Step(ADD, List.of(0, 1)), new Step(GELU_TANH, List.of(2))), BF16);
 * </pre>
 *
 * Values are numbered: inputs first (0..inputs-1), then each step's result; the last value
 * is the output. With no steps the output is input 0 (a copy or, with another dtype, a cast).
 * Base pointers must be 16-byte aligned (the allocator's blocks are 256-byte aligned).
 *
 * @param name    kernel entry name
 * @param shape   output shape (row-major contiguous)
 * @param inputs  each input's dtype and element strides over the output's dims (0 = broadcast)
 * @param steps   the chain, in order
 * @param outDtype the output's storage type
 */
public record ElementwiseSpec(String name, List<Long> shape, List<Operand> inputs, List<Step> steps, DType outDtype)
        implements KernelSpec {

    /** One input: storage type and strides (in elements) over the output's dims; 0 broadcasts. */
    public record Operand(DType dtype, List<Long> strides) {
        public Operand {
            strides = List.copyOf(strides);
        }

        /** An input laid out exactly like the (contiguous) output. */
        public static Operand contiguous(DType dtype, List<Long> shape) {
            return new Operand(dtype, contiguousStrides(shape));
        }
    }

    /**
     * One op of the chain. {@code args} index values (inputs, then earlier steps);
     * {@code constant} is used by SCALE and ADD_CONST; {@code roundTo} by ROUND.
     */
    public record Step(ElementwiseOp op, List<Integer> args, double constant, DType roundTo) {
        public Step {
            args = List.copyOf(args);
        }

        public Step(ElementwiseOp op, List<Integer> args) {
            this(op, args, 0.0, null);
        }

        public static Step constant(ElementwiseOp op, int arg, double constant) {
            return new Step(op, List.of(arg), constant, null);
        }

        /** A scalar constant leaf. */
        public static Step literal(double value) {
            return new Step(ElementwiseOp.CONST, List.of(), value, null);
        }

        public static Step round(int arg, DType to) {
            return new Step(ElementwiseOp.ROUND, List.of(arg), 0.0, to);
        }
    }

    public ElementwiseSpec {
        KernelSpec.checkName(name);
        shape = List.copyOf(shape);
        inputs = List.copyOf(inputs);
        steps = List.copyOf(steps);
        if (shape.isEmpty()) {
            shape = List.of(1L);
        }
        for (long d : shape) {
            KernelSpec.checkPositive(d, name + ": output dim");
        }
        if (inputs.isEmpty()) {
            throw new CodegenException(name + ": an elementwise kernel needs at least one input");
        }
        for (int i = 0; i < inputs.size(); i++) {
            if (inputs.get(i).strides().size() != shape.size()) {
                throw new CodegenException(name + ": input " + i + " has " + inputs.get(i).strides().size()
                        + " strides, output has rank " + shape.size());
            }
        }
        for (int s = 0; s < steps.size(); s++) {
            Step step = steps.get(s);
            if (step.args().size() != step.op().arity()) {
                throw new CodegenException(name + ": step " + s + " " + step.op() + " takes " + step.op().arity()
                        + " operands, got " + step.args().size());
            }
            for (int a : step.args()) {
                if (a < 0 || a >= inputs.size() + s) {
                    throw new CodegenException(name + ": step " + s + " reads value " + a
                            + ", which is not defined before it");
                }
            }
            if (step.op() == ElementwiseOp.ROUND && step.roundTo() == null) {
                throw new CodegenException(name + ": step " + s + " ROUND needs a dtype");
            }
        }
    }

    public long numel() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    static List<Long> contiguousStrides(List<Long> shape) {
        List<Long> strides = new ArrayList<>(shape.size());
        long s = 1;
        for (int i = shape.size() - 1; i >= 0; i--) {
            strides.addFirst(s);
            s *= shape.get(i);
        }
        return List.copyOf(strides);
    }

    @Override
    public CudaKernelSource render(CudaTarget target) {
        return new ElementwiseRenderer(this, target).render();
    }
}
