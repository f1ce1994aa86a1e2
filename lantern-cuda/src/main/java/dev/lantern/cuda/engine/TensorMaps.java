package dev.lantern.cuda.engine;

import dev.lantern.cuda.driver.TensorMap;
import dev.lantern.cuda.codegen.CodegenException;
import dev.lantern.cuda.codegen.CudaKernelSource;
import dev.lantern.cuda.codegen.KernelParam;
import dev.lantern.cuda.ffi.CudaDriver;

import java.util.List;

/**
 * The tensor-map arguments of a kernel that copies with the tensor memory accelerator, derived
 * from its ordinary arguments once they are resolved to addresses: a step's argument list is
 * the same for every variant of a kernel, and only the TMA variant declares the maps.
 *
 * <p>Attention ({@link dev.lantern.cuda.codegen.AttentionParams}): parameters named
 * {@code tm_<q|k|v>_<rows>} after q, k, v, o, heads, seq_q, seq_k and the (b, h, s) strides of
 * q, k, v, o; each map covers that tensor as (b, h, s, 128) in boxes of 64 x rows. With
 * grouped-query attention k's and v's are named {@code tm_<k|v>_<rows>_g<group>} and cover
 * (b, h / group, s, 128).
 */
public final class TensorMaps {
    private TensorMaps() {
    }

    /** {@code args} (resolved: addresses as Long) followed by the maps {@code src} declares. */
    public static Object[] append(CudaKernelSource src, Object[] args, CudaDriver driver) {
        int maps = src.tensorMapCount();
        if (maps == 0) {
            return args;
        }
        List<KernelParam> params = src.params();
        boolean bf16 = params.getFirst().cType().contains("bfloat16"); // q's element type: bf16 or f16
        Object[] all = java.util.Arrays.copyOf(args, args.length + maps);
        int heads = (Integer) args[4];
        long batch = src.problem().get(0) / heads;
        for (int i = args.length; i < all.length; i++) {
            String[] name = params.get(i).name().split("_");
            int which = switch (name[1]) {
                case "q" -> 0;
                case "k" -> 1;
                case "v" -> 2;
                default -> throw new CodegenException(src.entry() + ": unknown tensor map " + params.get(i).name());
            };
            int rows = Integer.parseInt(name[2]);
            // tm_k_64_g4: grouped-query attention, k and v have heads / 4 heads
            int group = name.length > 3 && name[3].startsWith("g") ? Integer.parseInt(name[3].substring(1)) : 1;
            long seq = (Integer) args[which == 0 ? 5 : 6];
            int s0 = 7 + 3 * which;
            all[i] = TensorMap.rows(driver, bf16, (Long) args[which], batch, heads / group, seq, 128,
                    (Long) args[s0], (Long) args[s0 + 1], (Long) args[s0 + 2], rows);
        }
        return all;
    }
}
