package dev.lantern.cpu;

import dev.lantern.ir.Shape;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A chain of elementwise ops run in one pass over memory: a straight-line program over f32
 * registers, each register a chunk of up to {@link Iter#CHUNK} elements. Per chunk, the steps run
 * in order, each as one vector loop, so the intermediates live in L1 and only the loads and
 * stores touch memory. Fusion builds one per fused group:
 *
 * <pre>{@code
 * var p = ElementwiseProgram.builder();
 * int h = p.binary(BinaryFn.ADD, p.load(0), p.load(1));  // x + bias (bias broadcast)
 * p.store(p.unary(UnaryFn.GELU_TANH, h), 0);
 * p.build().run(List.of(x, bias), List.of(out));
 * }</pre>
 *
 * Inputs broadcast (NumPy) to the outputs' common shape; any input or output may be strided.
 */
public record ElementwiseProgram(List<Step> steps, int registers, int inputs, int outputs) {
    public ElementwiseProgram {
        steps = List.copyOf(steps);
    }

    /** One instruction. Registers and operands are numbered from 0. */
    public sealed interface Step {}

    /** reg[dst] = input #input (broadcast to the iteration shape). */
    public record Load(int dst, int input) implements Step {}

    /** reg[dst] = value in every lane. */
    public record Const(int dst, float value) implements Step {}

    public record Unary(int dst, UnaryFn fn, int src) implements Step {}

    public record Binary(int dst, BinaryFn fn, int a, int b) implements Step {}

    /** output #output = reg[src], rounded to the output's dtype. */
    public record Store(int src, int output) implements Step {}

    public static Builder builder() {
        return new Builder();
    }

    /** Allocates a fresh register per result; programs are short, so no reuse is needed. */
    public static final class Builder {
        private final List<Step> steps = new ArrayList<>();
        private int regs;
        private int inputs;
        private int outputs;

        public int load(int input) {
            inputs = Math.max(inputs, input + 1);
            steps.add(new Load(regs, input));
            return regs++;
        }

        /**
         * Declares at least {@code n} inputs, read or not: an unread input still shapes the output by
         * broadcasting (an {@code elementwise(%x) {expr="0.5"}} fills x's shape), and the caller passes it.
         */
        public Builder inputs(int n) {
            inputs = Math.max(inputs, n);
            return this;
        }

        public int constant(float value) {
            steps.add(new Const(regs, value));
            return regs++;
        }

        public int unary(UnaryFn fn, int src) {
            steps.add(new Unary(regs, fn, src));
            return regs++;
        }

        public int binary(BinaryFn fn, int a, int b) {
            steps.add(new Binary(regs, fn, a, b));
            return regs++;
        }

        public void store(int src, int output) {
            outputs = Math.max(outputs, output + 1);
            steps.add(new Store(src, output));
        }

        public ElementwiseProgram build() {
            return new ElementwiseProgram(steps, regs, inputs, outputs);
        }
    }

    private static final ThreadLocal<float[][]> SCRATCH = new ThreadLocal<>();

    /** Runs the program over the outputs' shape (all outputs must share it). */
    public void run(List<View> in, List<View> out) {
        if (in.size() != inputs || out.size() != outputs) {
            throw new IllegalArgumentException("program takes " + inputs + " inputs and " + outputs + " outputs, given " + in.size() + " and " + out.size());
        }
        Shape shape = out.getFirst().shape();
        View[] all = new View[outputs + inputs];
        for (int o = 0; o < outputs; o++) {
            if (!out.get(o).shape().equals(shape)) {
                throw new IllegalArgumentException("outputs differ in shape: " + shape + " and " + out.get(o).shape());
            }
            all[o] = out.get(o);
        }
        for (int i = 0; i < inputs; i++) {
            all[outputs + i] = in.get(i).broadcastTo(shape);
        }
        Iter it = Iter.over(shape, all);
        it.forEachRunParallel(16 * Iter.CHUNK, (offs, n) -> {
            float[][] r = scratch(registers);
            for (Step s : steps) {
                switch (s) {
                    case Load l -> {
                        View v = all[outputs + l.input()];
                        Convert.load(v.segment(), v.dtype(), offs[outputs + l.input()], it.innerStride(outputs + l.input()), r[l.dst()], 0, n);
                    }
                    case Const c -> Arrays.fill(r[c.dst()], 0, n, c.value());
                    case Unary u -> u.fn().apply(r[u.src()], r[u.dst()], n);
                    case Binary b -> b.fn().apply(r[b.a()], r[b.b()], r[b.dst()], n);
                    case Store st -> {
                        View v = all[st.output()];
                        Convert.store(r[st.src()], 0, v.segment(), v.dtype(), offs[st.output()], it.innerStride(st.output()), n);
                    }
                }
            }
        });
    }

    private static float[][] scratch(int regs) {
        float[][] s = SCRATCH.get();
        if (s == null || s.length < regs) {
            s = new float[Math.max(regs, 8)][Iter.CHUNK];
            SCRATCH.set(s);
        }
        return s;
    }
}
