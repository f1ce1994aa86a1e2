package dev.lantern;

import dev.lantern.ir.LanternException;

/**
 * Where a session runs: {@code cpu} (this machine's cores) or {@code cuda:N} (GPU {@code N}).
 * A value; whether the device is present is the backend's question ({@link Lantern#devices()}).
 *
 * @param kind  {@code "cpu"} or {@code "cuda"}
 * @param index the device ordinal: always 0 for the CPU
 */
public record Device(String kind, int index) {
    public Device {
        if (!kind.equals("cpu") && !kind.equals("cuda")) {
            throw new LanternException("unknown device kind '" + kind + "' (expected cpu or cuda)");
        }
        if (index < 0 || (kind.equals("cpu") && index != 0)) {
            throw new LanternException("bad device index " + index + " for " + kind);
        }
    }

    /** The CPU. */
    public static Device cpu() {
        return new Device("cpu", 0);
    }

    /** GPU {@code index}. */
    public static Device cuda(int index) {
        return new Device("cuda", index);
    }

    /** {@code cpu}, {@code cuda} (= {@code cuda:0}) or {@code cuda:N}; anything else is a typed error. */
    public static Device parse(String text) {
        String t = text.strip();
        if (t.equals("cpu")) {
            return cpu();
        }
        if (t.equals("cuda")) {
            return cuda(0);
        }
        if (t.startsWith("cuda:")) {
            String n = t.substring(5);
            if (!n.isEmpty() && n.length() <= 3 && n.chars().allMatch(Character::isDigit)) {
                return cuda(Integer.parseInt(n));
            }
        }
        throw new LanternException("unknown device '" + text + "' (expected cpu, cuda or cuda:N)");
    }

    /** The compile target whose kernels this device runs: {@code "cpu"} or {@code "cuda"}. */
    public String target() {
        return kind;
    }

    @Override
    public String toString() {
        return kind.equals("cpu") ? "cpu" : "cuda:" + index;
    }
}
