package dev.lantern.cli;

import dev.lantern.tensor.Tensor;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Where two runs of {@code lantern determinism} first differ, checked in the order a difference
 * explains the later ones: the graph hash, the cache key, the kernel cache keys, the autotune
 * choices, then the outputs (the first element whose bits differ, with its index in the output's
 * shape). {@link #json} is the {@code first_difference} object.
 *
 * @param run   the run that differs from run 0
 * @param field what differs: {@code graph_hash}, {@code cache_key}, {@code kernel_keys}, {@code autotune} or {@code output}
 * @param where the output's name, the kernel's position or the tune key (empty when the whole field differs)
 * @param index the flat element index in the output (−1 when not an output)
 */
record RunDifference(int run, String field, String where, long index, List<Integer> position, String expected, String found) {
    /** The first difference of {@code other} from {@code first}, or null when they are the same in every field and bit. */
    static RunDifference of(int run, Map<String, Object> first, Map<String, Object> other, List<Tensor> firstOut, List<Tensor> otherOut) {
        for (String field : List.of("graph_hash", "cache_key")) {
            if (!first.get(field).equals(other.get(field))) {
                return new RunDifference(run, field, "", -1, List.of(), String.valueOf(first.get(field)), String.valueOf(other.get(field)));
            }
        }
        List<?> ka = (List<?>) first.get("kernel_keys");
        List<?> kb = (List<?>) other.get("kernel_keys");
        for (int i = 0; i < Math.max(ka.size(), kb.size()); i++) {
            Object x = i < ka.size() ? ka.get(i) : "(none)";
            Object y = i < kb.size() ? kb.get(i) : "(none)";
            if (!x.equals(y)) {
                return new RunDifference(run, "kernel_keys", "kernel " + i, -1, List.of(), x.toString(), y.toString());
            }
        }
        Map<?, ?> ta = (Map<?, ?>) first.get("autotune");
        Map<?, ?> tb = (Map<?, ?>) other.get("autotune");
        if (!ta.equals(tb)) {
            java.util.TreeSet<String> keys = new java.util.TreeSet<>();
            ta.keySet().forEach(k -> keys.add(k.toString()));
            tb.keySet().forEach(k -> keys.add(k.toString()));
            for (String k : keys) {
                if (!java.util.Objects.equals(ta.get(k), tb.get(k))) {
                    return new RunDifference(run, "autotune", k, -1, List.of(), String.valueOf(ta.get(k)), String.valueOf(tb.get(k)));
                }
            }
        }
        List<?> names = (List<?>) first.get("outputs");
        for (int o = 0; o < firstOut.size(); o++) {
            Tensor a = firstOut.get(o);
            Tensor b = otherOut.get(o);
            String name = String.valueOf(((Map<?, ?>) names.get(o)).get("name"));
            long i = a.segment().mismatch(b.segment());
            if (i >= 0 || !a.shape().equals(b.shape())) {
                long element = Math.max(0, i) / a.dtype().bytes();
                boolean inRange = element < Math.min(a.numel(), b.numel());
                return new RunDifference(run, "output", name, element, position(a.shape().dims(), element),
                        inRange ? Float.toString(a.get(element)) : "shape " + a.shape(), inRange ? Float.toString(b.get(element)) : "shape " + b.shape());
            }
        }
        return null;
    }

    private static List<Integer> position(int[] dims, long flat) {
        Integer[] p = new Integer[dims.length];
        for (int d = dims.length - 1; d >= 0; d--) {
            p[d] = (int) (flat % dims[d]);
            flat /= dims[d];
        }
        return List.of(p);
    }

    Map<String, Object> json() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("run", run);
        m.put("field", field);
        m.put("where", where);
        if (index >= 0) {
            m.put("index", index);
            m.put("position", position);
        }
        m.put("expected", expected);
        m.put("found", found);
        return m;
    }

    /** One line for the terminal. */
    String line() {
        return "run " + run + " differs from run 0 first in " + field + (where.isEmpty() ? "" : " " + where)
                + (index >= 0 ? " at element " + index + " " + position : "") + ": " + expected + " vs " + found;
    }
}
