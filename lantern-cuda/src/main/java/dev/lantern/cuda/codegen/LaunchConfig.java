package dev.lantern.cuda.codegen;

/**
 * How to launch one kernel: {@code cuLaunchKernel(f, gridX, gridY, gridZ, blockX, blockY, blockZ,
 * dynamicSharedBytes, ...)}. A kernel whose dynamic shared memory is above 48 KiB needs
 * {@code cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)} first.
 */
public record LaunchConfig(long gridX, int gridY, int gridZ, int blockX, int blockY, int blockZ,
                           int dynamicSharedBytes) {
    public static final int DEFAULT_SHARED_LIMIT = 48 * 1024;

    public LaunchConfig {
        if (gridX < 1 || gridX > Integer.MAX_VALUE || gridY < 1 || gridY > 65535 || gridZ < 1 || gridZ > 65535) {
            throw new CodegenException("grid out of range: " + gridX + "x" + gridY + "x" + gridZ);
        }
        if (blockX < 1 || blockY < 1 || blockZ < 1 || (long) blockX * blockY * blockZ > 1024) {
            throw new CodegenException("block out of range: " + blockX + "x" + blockY + "x" + blockZ);
        }
    }

    public static LaunchConfig linear(long grid, int block, int sharedBytes) {
        return new LaunchConfig(grid, 1, 1, block, 1, 1, sharedBytes);
    }

    /** Whether the launch needs the opt-in shared-memory attribute raised first. */
    public boolean needsSharedOptIn() {
        return dynamicSharedBytes > DEFAULT_SHARED_LIMIT;
    }

    public int threads() {
        return blockX * blockY * blockZ;
    }
}
