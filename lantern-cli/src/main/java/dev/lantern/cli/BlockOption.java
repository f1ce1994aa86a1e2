package dev.lantern.cli;

import dev.lantern.frontend.nn.BlockConfig;

/**
 * The block a {@code demo} or {@code bench macro} runs: {@code --config NAME} (DESIGN.md's
 * shapes) or {@code --shape batch,seq,hidden,heads,mlp[,encoder]} (any size; a decoder unless
 * it says encoder), never both.
 */
final class BlockOption {
    private BlockOption() {}

    /** The {@code --shape} block, else the {@code --config} one, else {@code null} when neither is given. */
    static BlockConfig of(String command, String config, String shape) {
        if (config != null && shape != null) {
            throw new UsageException(command + ": --config and --shape both name the block; give one");
        }
        if (shape != null) {
            return UsageException.option(command, () -> BlockConfig.parse(shape));
        }
        return config == null ? null : UsageException.option(command, () -> BlockConfig.named(config));
    }
}
