package dev.lantern.cuda.lower;

import dev.lantern.ir.LanternException;

/**
 * A kernel launch or cuBLASLt GEMM whose operand does not fit the memory behind it (extent past
 * the buffer, a misaligned pointer, a workspace smaller than the algorithm needs): found before
 * the step is recorded, so nothing is launched. The message names the step, its IR kernel and
 * the operand.
 */
public final class LaunchContractException extends LanternException {
    public LaunchContractException(String message) {
        super(message);
    }
}
