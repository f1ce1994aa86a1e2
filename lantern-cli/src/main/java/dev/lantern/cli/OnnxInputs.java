package dev.lantern.cli;

import dev.lantern.Program;
import dev.lantern.ir.DType;
import dev.lantern.ir.LanternException;
import dev.lantern.ir.Shape;
import dev.lantern.onnx.OnnxInput;
import dev.lantern.onnx.OnnxModel;
import dev.lantern.tensor.Philox;
import dev.lantern.tensor.Tensor;

import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.LongUnaryOperator;

/**
 * The inputs {@code lantern run MODEL.onnx} feeds a model. The token-id input is the integer input named
 * {@code input_ids}, else the model's only integer input. Inputs not given with {@code --input} or
 * {@code --tokens}: the token ids are drawn uniformly from {@code [0, vocab)} (Philox under seed N + 1);
 * other integer and bool inputs are filled by their name, as transformer exporters name them: a name with
 * {@code mask} gets ones (attend everywhere), one with {@code position} gets 0, 1, ... along its last
 * dim, any other (such as {@code token_type_ids}) zeros; float inputs are N(0, 1) under seed N + 1.
 */
final class OnnxInputs {
    private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    /**
     * @param tensors by input name, in the model's order
     * @param sources how each was made, by input name: {@code file}, {@code tokens}, {@code random ids in [0,V)},
     *                {@code ones}, {@code zeros}, {@code positions}, {@code normal}
     */
    record Filled(Map<String, Tensor> tensors, Map<String, String> sources) {}

    private OnnxInputs() {}

    /** The input that holds token ids, or {@code null} when the model has none that can be told. */
    static OnnxInput ids(OnnxModel model) {
        List<OnnxInput> ints = model.inputs().stream().filter(i -> i.dtype() == DType.I64 || i.dtype() == DType.I32).toList();
        for (OnnxInput i : ints) {
            if (i.name().equals("input_ids")) {
                return i;
            }
        }
        return ints.size() == 1 ? ints.getFirst() : null;
    }

    /** {@code --tokens 1,2,3} as an ids tensor of shape [1, n]. */
    static Tensor tokens(String text, DType dtype) {
        long[] ids;
        try {
            ids = Arrays.stream(text.split(",", -1)).mapToLong(s -> Long.parseLong(s.trim())).toArray();
        } catch (NumberFormatException e) {
            throw new UsageException("run: --tokens takes token ids separated by commas, found '" + text + "'");
        }
        if (Arrays.stream(ids).anyMatch(v -> v < 0 || dtype == DType.I32 && v > Integer.MAX_VALUE)) {
            throw new UsageException("run: --tokens " + text + ": ids must be in [0, " + (dtype == DType.I32 ? Integer.MAX_VALUE : Long.MAX_VALUE) + "]");
        }
        Tensor t = Tensor.allocate(dtype, Shape.of(1, ids.length));
        fill(t, i -> ids[(int) i]);
        return t;
    }

    /** Every input: {@code given} (files, tokens) as they are, the others made as the class says. */
    static Filled fill(OnnxModel model, Program program, Map<String, Tensor> given, Map<String, String> givenSources,
            OnnxInput ids, Long vocab, long seed) {
        Map<String, Tensor> random = program.randomInputs(seed + 1); // every input of its declared type and shape
        Map<String, Tensor> out = new LinkedHashMap<>();
        Map<String, String> sources = new LinkedHashMap<>();
        for (OnnxInput in : model.inputs()) {
            String name = in.name();
            if (given.containsKey(name)) {
                out.put(name, given.get(name));
                sources.put(name, givenSources.get(name));
                continue;
            }
            Tensor t = random.get(name);
            sources.put(name, fillDefault(name, t, ids != null && name.equals(ids.name()), vocab, seed));
            out.put(name, t);
        }
        return new Filled(out, sources);
    }

    /**
     * Fills input {@code name} (already drawn N(0,1) when floating) by the defaults: token ids at
     * random in [0, vocab), masks ones, positions 0, 1, 2, ... along the last dim, other integers
     * zeros. Returns how it was made.
     */
    static String fillDefault(String name, Tensor t, boolean isIds, Long vocab, long seed) {
        String lower = name.toLowerCase(Locale.ROOT);
        if (t.dtype().isFloating()) {
            return "normal";
        } else if (isIds) {
            if (vocab == null) {
                throw new UsageException("run: cannot tell the vocabulary of input '" + name
                        + "' (no embedding table reads it) to draw random ids: give --vocab N, --tokens or --input " + name + "=FILE.npy");
            }
            long key = Philox.key(seed + 1, "input:" + name);
            long v = vocab;
            fill(t, i -> Math.min(v - 1, (long) (Philox.uniform(key, i) * v)));
            return "random ids in [0," + v + ")";
        } else if (lower.contains("mask")) {
            fill(t, i -> 1);
            return "ones";
        } else if (lower.contains("position")) {
            int[] dims = t.shape().dims();
            long last = dims.length == 0 ? 1 : dims[dims.length - 1];
            fill(t, i -> i % last);
            return "positions";
        }
        fill(t, i -> 0);
        return "zeros";
    }

    private static void fill(Tensor t, LongUnaryOperator value) {
        for (long i = 0; i < t.numel(); i++) {
            long v = value.applyAsLong(i);
            switch (t.dtype()) {
                case I64 -> t.segment().setAtIndex(I64, i, v);
                case I32 -> t.segment().setAtIndex(I32, i, (int) v);
                case BOOL -> t.set(i, v != 0 ? 1 : 0);
                default -> throw new LanternException("an integer value for a " + t.dtype() + " tensor");
            }
        }
    }
}
