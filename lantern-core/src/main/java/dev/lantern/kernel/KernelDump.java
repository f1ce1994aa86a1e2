package dev.lantern.kernel;

import java.util.List;

/** The text dump of a kernel list, as {@code lantern opt --passes ...,partition} and the compiled model print it. */
public final class KernelDump {
    private KernelDump() {}

    public static String print(List<Kernel> kernels) {
        StringBuilder b = new StringBuilder();
        b.append("# ").append(kernels.size()).append(" kernels\n");
        for (Kernel k : kernels) {
            b.append(k.dump());
        }
        return b.toString();
    }
}
