package dev.lantern.engine;

import dev.lantern.kernel.Target;

import dev.lantern.ir.DType;
import dev.lantern.ir.GraphHash;
import dev.lantern.ir.LanternException;

/**
 * How to compile, as an immutable value whose {@link #hash()} is part of every cache key: the
 * same graph under different options is a different compiled model.
 *
 * @param amp           mixed precision: none, bf16 or f16 (GEMMs and attention in that dtype)
 * @param target        "cpu" or "cuda" (kernel descriptions for the CUDA backend in lantern-cuda,
 *                      which owns the GPU facts; the passes are the same)
 * @param fuse          run the fusion passes (fuse-attention, fuse); off gives one kernel per
 *                      primitive op: the eager baseline a GPU session measures against
 * @param dumpAfterEach keep the IR after every pass in {@link CompiledModel#dumps()}
 * @param verifyEach    run the verifier between passes (tests turn it on; cheap enough to leave on)
 * @param choices       backend choices that change the compiled result (part of the hash)
 * @param lowOutputs    under AMP, graph outputs that a low-precision op computes stay in that dtype
 *                      (bf16 logits, as torch.autocast and a bf16 model return them: half the
 *                      bytes of f32) instead of being cast back to f32
 * @param deterministic strict determinism mode (docs/determinism.md): every reduction in a fixed
 *                      order whatever the core count, no atomics in reductions (a kernel that needs
 *                      them is refused with a typed error naming it), cuBLASLt algorithms without
 *                      split-K, autotune choices recorded and replayed; part of {@link #hash()} when on
 */
public record CompileOptions(Amp amp, String target, boolean fuse, boolean dumpAfterEach, boolean verifyEach,
                             BackendChoices choices, boolean lowOutputs, boolean deterministic) {
    public enum Amp {
        NONE, BF16, F16;

        public static Amp parse(String s) {
            return switch (s.toLowerCase()) {
                case "none", "off", "f32" -> NONE;
                case "bf16" -> BF16;
                case "f16", "fp16" -> F16;
                default -> throw new LanternException("--amp takes none, bf16 or f16, found '" + s + "'");
            };
        }

        /** The low-precision dtype, or {@code null} for none. */
        public DType dtype() {
            return switch (this) {
                case NONE -> null;
                case BF16 -> DType.BF16;
                case F16 -> DType.F16;
            };
        }
    }

    /** The options without backend choices: {@link BackendChoices#defaults()}. */
    public CompileOptions(Amp amp, String target, boolean fuse, boolean dumpAfterEach, boolean verifyEach) {
        this(amp, target, fuse, dumpAfterEach, verifyEach, BackendChoices.defaults(), false, false);
    }

    /** The options with f32 outputs under AMP. */
    public CompileOptions(Amp amp, String target, boolean fuse, boolean dumpAfterEach, boolean verifyEach, BackendChoices choices) {
        this(amp, target, fuse, dumpAfterEach, verifyEach, choices, false, false);
    }

    /** The options outside strict determinism mode (the component list before {@link #deterministic()} existed). */
    public CompileOptions(Amp amp, String target, boolean fuse, boolean dumpAfterEach, boolean verifyEach,
                          BackendChoices choices, boolean lowOutputs) {
        this(amp, target, fuse, dumpAfterEach, verifyEach, choices, lowOutputs, false);
    }

    public CompileOptions {
        java.util.Objects.requireNonNull(choices, "choices");
        if (!target.equals("cpu") && !target.equals("cuda")) {
            throw new LanternException("unknown target '" + target + "' (this build compiles for: cpu, cuda)");
        }
    }

    public static CompileOptions defaults() {
        return new CompileOptions(Amp.NONE, "cpu", true, false, true);
    }

    public CompileOptions withAmp(Amp a) {
        return new CompileOptions(a, target, fuse, dumpAfterEach, verifyEach, choices, lowOutputs, deterministic);
    }

    public CompileOptions withDumpAfterEach(boolean d) {
        return new CompileOptions(amp, target, fuse, d, verifyEach, choices, lowOutputs, deterministic);
    }

    public CompileOptions withTarget(String t) {
        return new CompileOptions(amp, t, fuse, dumpAfterEach, verifyEach, choices, lowOutputs, deterministic);
    }

    /** Without fusion: one kernel per primitive op (the eager baseline). */
    public CompileOptions withFuse(boolean f) {
        return new CompileOptions(amp, target, f, dumpAfterEach, verifyEach, choices, lowOutputs, deterministic);
    }

    public CompileOptions withChoices(BackendChoices c) {
        return new CompileOptions(amp, target, fuse, dumpAfterEach, verifyEach, c, lowOutputs, deterministic);
    }

    /** With AMP's low-precision outputs kept low ({@link #lowOutputs()}). */
    public CompileOptions withLowOutputs(boolean low) {
        return new CompileOptions(amp, target, fuse, dumpAfterEach, verifyEach, choices, low, deterministic);
    }

    /** In strict determinism mode or not ({@link #deterministic()}). */
    public CompileOptions withDeterministic(boolean d) {
        return new CompileOptions(amp, target, fuse, dumpAfterEach, verifyEach, choices, lowOutputs, d);
    }

    /** The kernel target these options describe kernels for. */
    public Target kernelTarget() {
        return target.equals("cuda") ? Target.cuda() : Target.cpu();
    }

    /** SHA-256 of the fields that change the compiled result (dumping does not). */
    public String hash() {
        return GraphHash.sha256("amp=" + amp + ";target=" + target + (fuse ? "" : ";fuse=false") + choices.keyText()
                + (lowOutputs && amp != Amp.NONE ? ";lowOutputs" : "")
                // only when on: every cache key of a non-strict compile stays as it was
                + (deterministic ? ";deterministic" : ""));
    }

    /** As a record prints, with the choices only when they are not the defaults (dumps stay as they were). */
    @Override
    public String toString() {
        return "CompileOptions[amp=" + amp + ", target=" + target + ", fuse=" + fuse + ", dumpAfterEach=" + dumpAfterEach
                + ", verifyEach=" + verifyEach + (choices.equals(BackendChoices.defaults()) ? "" : ", choices=" + choices)
                + (lowOutputs ? ", lowOutputs=true" : "") + (deterministic ? ", deterministic=true" : "") + "]";
    }
}
