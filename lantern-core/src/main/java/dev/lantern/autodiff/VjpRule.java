package dev.lantern.autodiff;

import dev.lantern.ir.Node;

/**
 * The vector-Jacobian product of one op: given a node and the gradient {@code dy} of its result,
 * the gradient of each input, emitted as new nodes through the builder. An entry is {@code null}
 * where the input gets no gradient (integer ids, or {@code need[i]} false: nothing asked for it).
 * Every returned gradient has its input's shape and dtype.
 */
@FunctionalInterface
interface VjpRule {
    String[] vjp(Node n, String dy, boolean[] need, GradientBuilder b);
}
