package dev.lantern.cuda.codegen;

import dev.lantern.ir.LanternException;

/** A kernel spec that no renderer can turn into CUDA C (bad sizes, unsupported dtype). */
public final class CodegenException extends LanternException {
    public CodegenException(String message) {
        super(message);
    }
}
