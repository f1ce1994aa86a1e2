package dev.lantern.ir;

/** Element types of tensors. Floating types accumulate in f32 unless an op says otherwise. */
public enum DType {
    F32("f32", 4, true),
    F16("f16", 2, true),
    BF16("bf16", 2, true),
    I32("i32", 4, false),
    I64("i64", 8, false),
    BOOL("bool", 1, false);

    private final String text;
    private final int bytes;
    private final boolean floating;

    DType(String text, int bytes, boolean floating) {
        this.text = text;
        this.bytes = bytes;
        this.floating = floating;
    }

    /** The spelling in the IR text format. */
    public String text() {
        return text;
    }

    public int bytes() {
        return bytes;
    }

    public boolean isFloating() {
        return floating;
    }

    /** The dtype spelled {@code text}, or {@code null}. */
    public static DType parse(String text) {
        for (DType d : values()) {
            if (d.text.equals(text)) {
                return d;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return text;
    }
}
