package dev.lantern.cpu;

import java.util.List;

/** Single elementwise ops and casts: one-step {@link ElementwiseProgram}s. Outputs are written whole. */
public final class Elementwise {
    private Elementwise() {}

    /** out = f(x); x broadcasts to out's shape. */
    public static void unary(UnaryFn f, View x, View out) {
        var p = ElementwiseProgram.builder();
        p.store(p.unary(f, p.load(0)), 0);
        p.build().run(List.of(x), List.of(out));
    }

    /** out = f(a, b) with NumPy broadcasting of a and b to out's shape. */
    public static void binary(BinaryFn f, View a, View b, View out) {
        var p = ElementwiseProgram.builder();
        p.store(p.binary(f, p.load(0), p.load(1)), 0);
        p.build().run(List.of(a, b), List.of(out));
    }

    /** out = x converted to out's dtype (f32 in between; bf16/f16 round to nearest even). Also a strided copy. */
    public static void copy(View x, View out) {
        var p = ElementwiseProgram.builder();
        p.store(p.load(0), 0);
        p.build().run(List.of(x), List.of(out));
    }

    /** Every element of out = value. */
    public static void fill(View out, float value) {
        var p = ElementwiseProgram.builder();
        p.store(p.constant(value), 0);
        p.build().run(List.of(), List.of(out));
    }
}
