package dev.lantern.cli;

import dev.lantern.ir.DType;
import dev.lantern.onnx.OnnxInput;
import dev.lantern.onnx.OnnxModel;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The concrete input shapes of an ONNX model from the command line ({@code run} and {@code compile}):
 * shapes known from {@code --input} files, {@code --tokens} and {@code --shape NAME=d0,d1,...} bind the
 * symbols of those inputs' declared dims ({@code batch}, {@code sequence}); {@code --batch B} binds the
 * symbolic dim 0 and {@code --seq S} the symbolic dim 1 of every other input; a symbolic dim still without
 * a value is a bad command line (exit 2) naming the input, the dim and the options that bind it.
 */
final class OnnxShapes {
    private OnnxShapes() {}

    /** {@code --shape NAME=d0,d1,...} specs, each dim a positive integer. */
    static Map<String, long[]> parse(String command, List<String> specs) {
        Map<String, long[]> out = new LinkedHashMap<>();
        RepeatedOptions.byName(command, "shape", specs, "d0,d1,...").forEach((name, text) -> {
            try {
                long[] dims = Arrays.stream(text.split(",", -1)).mapToLong(s -> Long.parseLong(s.trim())).toArray();
                if (Arrays.stream(dims).anyMatch(d -> d <= 0)) {
                    throw new NumberFormatException();
                }
                out.put(name, dims);
            } catch (NumberFormatException e) {
                throw new UsageException(command + ": --shape " + name + "=" + text + ": dims must be positive integers separated by commas");
            }
        });
        return out;
    }

    /**
     * Every input's shape: {@code known} as given, the others from their declared dims with symbols bound
     * by {@code known}, {@code batch} and {@code seq} (null when not given).
     */
    static Map<String, long[]> bind(String command, OnnxModel model, Map<String, long[]> known, Long batch, Long seq) {
        for (String name : known.keySet()) {
            if (model.inputs().stream().noneMatch(i -> i.name().equals(name))) {
                throw new UsageException(command + ": " + name + ": " + model.source() + " has no input named '" + name
                        + "' (its inputs: " + describe(model.inputs()) + ")");
            }
        }
        Map<String, Long> symbols = new HashMap<>();
        for (OnnxInput in : model.inputs()) {
            long[] given = known.get(in.name());
            if (given == null || in.dims() == null || given.length != in.dims().size()) {
                continue; // a rank that differs is the importer's one-line refusal
            }
            for (int d = 0; d < given.length; d++) {
                OnnxInput.Dim dim = in.dims().get(d);
                if (dim.isSymbolic() && !dim.symbol().isEmpty()) {
                    symbols.putIfAbsent(dim.symbol(), given[d]);
                }
            }
        }
        Map<String, long[]> out = new LinkedHashMap<>();
        for (OnnxInput in : model.inputs()) {
            if (known.containsKey(in.name())) {
                out.put(in.name(), known.get(in.name()));
                continue;
            }
            if (in.dims() == null) {
                throw unbound(command, in, "its shape is not declared");
            }
            long[] dims = new long[in.dims().size()];
            for (int d = 0; d < dims.length; d++) {
                OnnxInput.Dim dim = in.dims().get(d);
                Long byOption = d == 0 ? batch : d == 1 ? seq : null;
                Long bySymbol = dim.isSymbolic() && !dim.symbol().isEmpty() ? symbols.get(dim.symbol()) : null;
                if (!dim.isSymbolic()) {
                    dims[d] = dim.size();
                } else if (bySymbol != null) {
                    if (byOption != null && !byOption.equals(bySymbol)) {
                        throw new UsageException(command + ": --" + (d == 0 ? "batch " : "seq ") + byOption + " binds '" + dim.symbol()
                                + "', which another input's shape binds to " + bySymbol);
                    }
                    dims[d] = bySymbol;
                } else if (byOption != null) {
                    dims[d] = byOption;
                    if (!dim.symbol().isEmpty()) {
                        symbols.put(dim.symbol(), byOption);
                    }
                } else {
                    throw unbound(command, in, "dim " + d + (dim.symbol().isEmpty() ? "" : " ('" + dim.symbol() + "')") + " is symbolic");
                }
            }
            out.put(in.name(), dims);
        }
        return out;
    }

    private static UsageException unbound(String command, OnnxInput in, String why) {
        boolean ids = in.dtype() != null && !in.dtype().isFloating() && in.dtype() != DType.BOOL;
        String hint = command.equals("run")
                ? "--batch B --seq S, " + (ids ? "--tokens, " : "") + "--shape " + in.name() + "=d0,d1,... or --input " + in.name() + "=FILE.npy"
                : "--batch B --seq S or --shape " + in.name() + "=d0,d1,...";
        return new UsageException(command + ": input " + in + ": " + why + " and has no value; bind it with " + hint);
    }

    /** The inputs as {@code ids int64[batch,seq], mask int64[batch,seq]}. */
    static String describe(List<OnnxInput> inputs) {
        List<String> s = new ArrayList<>();
        inputs.forEach(i -> s.add(i.toString()));
        return String.join(", ", s);
    }

    /** {@code ids [2,7], mask [2,7]}. */
    static String text(Map<String, long[]> shapes) {
        List<String> s = new ArrayList<>();
        shapes.forEach((k, v) -> s.add(k + " " + Arrays.toString(v).replace(" ", "")));
        return s.isEmpty() ? "(no inputs)" : String.join(", ", s);
    }
}
