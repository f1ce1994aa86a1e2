package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.CudaDevice;
import dev.lantern.frontend.nn.BlockConfig;
import java.util.function.BiConsumer;

/** What the block probes' {@code main}s share: GPU 0, and each block named on the command line in turn. */
final class Probes {
    private Probes() {}

    static void eachBlock(String[] args, BiConsumer<CudaDevice, BlockConfig> probe) {
        try (CudaDevice device = CudaDevice.open(0)) {
            for (String name : args) {
                probe.accept(device, BlockConfig.named(name));
            }
        }
    }
}
