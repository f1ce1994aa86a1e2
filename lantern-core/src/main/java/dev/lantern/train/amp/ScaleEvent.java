package dev.lantern.train.amp;

/**
 * One entry of the scale history: at update {@code step} (counted from 1), the scale became
 * {@code scale} for the reason given.
 *
 * @param step the scaler update (1-based) at which the scale changed
 * @param kind why it changed
 * @param scale the scale after the change
 */
public record ScaleEvent(long step, Kind kind, float scale) {
    /** Checks the ranges: updates count from 1, a scale is positive and finite. */
    public ScaleEvent {
        if (step < 1 || kind == null || !(scale > 0) || !Float.isFinite(scale)) {
            throw new IllegalArgumentException("invalid scale event " + step + ":" + kind + ":" + scale);
        }
    }

    /** Why the scale changed. */
    public enum Kind {
        /** {@code growthInterval} clean steps in a row: multiplied by the growth factor. */
        GROWTH,
        /** An overflow: multiplied by the backoff factor. */
        BACKOFF,
        /** An overflow whose backoff would have gone under the floor: set to the floor (or kept there). */
        FLOOR
    }

    /** The text form {@code step:KIND:scale}, which {@link #parse} reads back bit-exactly. */
    @Override
    public String toString() {
        return step + ":" + kind + ":" + Float.toString(scale);
    }

    /** Reads {@link #toString()}'s form. */
    public static ScaleEvent parse(String text) {
        String[] f = text.split(":", -1);
        if (f.length != 3) {
            throw new IllegalArgumentException("scale event must be step:KIND:scale, got " + text);
        }
        return new ScaleEvent(Long.parseLong(f[0]), Kind.valueOf(f[1]), Float.parseFloat(f[2]));
    }
}
