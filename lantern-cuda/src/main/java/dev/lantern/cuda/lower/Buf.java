package dev.lantern.cuda.lower;

/**
 * Device memory a lowered step reads or writes, by name: a graph value's storage (free views
 * resolved to their base value), a {@link Kind#SCRATCH} buffer that lives as long as the
 * session (the residual sum a norm writes for a later GEMM), or a {@link Kind#TRANSIENT}
 * region that lives from the first to the last step naming it (materialised views, roped q/k,
 * attention's delta shared by its two gradient kernels) at {@code offset} inside one shared
 * transient area.
 */
public record Buf(Kind kind, String name, long bytes, long offset) {
    public enum Kind { VALUE, SCRATCH, TRANSIENT }

    public static Buf value(String name, long bytes) {
        return new Buf(Kind.VALUE, name, bytes, 0);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case VALUE -> "%" + name;
            case SCRATCH -> "scratch:" + name;
            case TRANSIENT -> "transient+" + offset;
        };
    }
}
