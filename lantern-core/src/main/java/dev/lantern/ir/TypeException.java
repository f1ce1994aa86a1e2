package dev.lantern.ir;

/** A type or shape rule of an op was violated. The verifier adds the node and the pass. */
public final class TypeException extends LanternException {
    public TypeException(String message) {
        super(message);
    }
}
