package dev.lantern.cli.cuda;

import dev.lantern.cuda.codegen.LaunchConfig;
import dev.lantern.cuda.engine.KernelFigures;
import java.util.List;
import java.util.Locale;

/**
 * {@link KernelFigures} as bench's JSON: {@code [{"kernel", "name", "bytes", "ms", "dram_gbps",
 * "launches": [{"step", "op", "ms", "grid": [x, y, z], "block": [x, y, z], "shared_bytes",
 * "blocks_per_sm", "occupancy_pct", "grid_occupancy_pct", "waves"}]}]}; a GEMM's launch has no
 * shape fields (cuBLASLt picks its own). Numbers that are not finite are {@code null}.
 */
final class KernelFiguresJson {
    private KernelFiguresJson() {}

    /** The list as a JSON value that {@link CudaBench#record} prints as it is. */
    static Object of(List<KernelFigures.Figure> figures) {
        StringBuilder b = new StringBuilder("[");
        for (KernelFigures.Figure f : figures) {
            b.append(b.length() > 1 ? ", " : "").append("{\"kernel\": ").append(f.kernel()).append(", \"name\": \"").append(f.name())
                    .append("\", \"bytes\": ").append(f.bytes()).append(", \"ms\": ").append(num(f.ms(), 4))
                    .append(", \"dram_gbps\": ").append(num(f.dramGbps(), 1)).append(", \"launches\": [");
            boolean first = true;
            for (KernelFigures.Launch l : f.launches()) {
                b.append(first ? "" : ", ").append("{\"step\": ").append(l.step()).append(", \"op\": \"").append(l.op())
                        .append("\", \"ms\": ").append(num(l.ms(), 4));
                LaunchConfig c = l.shape();
                if (c != null) {
                    b.append(", \"grid\": [").append(c.gridX()).append(", ").append(c.gridY()).append(", ").append(c.gridZ())
                            .append("], \"block\": [").append(c.blockX()).append(", ").append(c.blockY()).append(", ").append(c.blockZ())
                            .append("], \"shared_bytes\": ").append(c.dynamicSharedBytes()).append(", \"blocks_per_sm\": ").append(l.blocksPerSm())
                            .append(", \"occupancy_pct\": ").append(num(l.occupancyPct(), 2))
                            .append(", \"grid_occupancy_pct\": ").append(num(l.gridOccupancyPct(), 2))
                            .append(", \"waves\": ").append(num(l.waves(), 3));
                }
                b.append('}');
                first = false;
            }
            b.append("]}");
        }
        String json = b.append(']').toString();
        return new Object() {
            @Override
            public String toString() {
                return json;
            }
        };
    }

    static Object number(double v, int digits) {
        String s = num(v, digits);
        return new Object() {
            @Override
            public String toString() {
                return s;
            }
        };
    }

    private static String num(double v, int digits) {
        return Double.isFinite(v) ? String.format(Locale.ROOT, "%." + digits + "f", v) : "null";
    }
}
