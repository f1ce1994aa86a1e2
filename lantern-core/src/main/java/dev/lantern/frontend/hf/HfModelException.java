package dev.lantern.frontend.hf;

import dev.lantern.ir.LanternException;

/**
 * A Hugging Face model folder Lantern cannot build: a {@code config.json} that is missing,
 * malformed, of an unsupported {@code model_type}, or with a field absent, of the wrong kind or
 * outside what Lantern builds; or a tensor the architecture needs that the safetensors do not hold.
 * {@link #subject()} names the config field or tensor at fault.
 */
public final class HfModelException extends LanternException {
    private final String subject;

    public HfModelException(String subject, String message) {
        super(message);
        this.subject = subject;
    }

    public HfModelException(String subject, String message, Throwable cause) {
        super(message, cause);
        this.subject = subject;
    }

    /** The config field (e.g. {@code n_embd}) or tensor name the error is about. */
    public String subject() {
        return subject;
    }
}
