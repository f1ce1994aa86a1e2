package dev.lantern.cuda.codegen;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes every {@link BenchmarkKernels} kernel as {@code <entry>.cu} plus {@code manifest.json}
 * (entry, family, variant, launch, parameters, and the spec's fields) into a folder, for the
 * GPU harness: {@code java -cp ... dev.lantern.cuda.codegen.DumpKernels OUT_DIR [warps64 warps128]}.
 */
public final class DumpKernels {
    private DumpKernels() {
    }

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args.length > 0 ? args[0] : "target/cuda-kernels");
        Files.createDirectories(dir);
        List<String> entries = new ArrayList<>();
        for (KernelSpec spec : BenchmarkKernels.all()) {
            entries.add(write(dir, spec, CudaTarget.H200, ""));
        }
        // Tile variants of the attention for the harness to time (the basic sweep): two mma.sync
        // tiles for reference, then the wgmma tiles.
        List<CudaTarget.AttentionTile> tiles = List.of(
                new CudaTarget.AttentionTile(4, 1, 64, 1), new CudaTarget.AttentionTile(4, 2, 32, 2));
        List<CudaTarget.WgmmaTile> hopper = List.of(
                new CudaTarget.WgmmaTile(64, 1, 1, false), new CudaTarget.WgmmaTile(128, 1, 1, false),
                new CudaTarget.WgmmaTile(64, 2, 2, false, 1), new CudaTarget.WgmmaTile(64, 2, 2, false, 1, true),
                new CudaTarget.WgmmaTile(64, 2, 1, false, 2, true), new CudaTarget.WgmmaTile(64, 3, 1, false, 2, true),
                new CudaTarget.WgmmaTile(64, 3, 2, false, 1, true),
                new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true), new CudaTarget.WgmmaTile(128, 3, 1, false, 2, true),
                new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true), new CudaTarget.WgmmaTile(64, 2, 1, false, 2, true, true),
                new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true).asPersistent(),
                new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true).asPersistent(),
                new CudaTarget.WgmmaTile(64, 2, 2, false, 1, true).asPersistent(),
                new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true).asPersistent(2),
                new CudaTarget.WgmmaTile(128, 2, 1, false, 2, true, true).asPersistent(2),
                new CudaTarget.WgmmaTile(128, 3, 1, false, 2, true).asPersistent(),
                new CudaTarget.WgmmaTile(128, 3, 1, false, 2, true, true).asPersistent());
        for (KernelSpec spec : BenchmarkKernels.all()) {
            if (spec instanceof AttentionSpec a && a.hopperPath(CudaTarget.H200) && a.batch() < 16) {
                // the ragged and strided shapes through every Hopper variant (correctness only)
                for (CudaTarget.WgmmaTile tile : hopper) {
                    entries.add(write(dir, renamed(a, tile.tag()), CudaTarget.H200.withWgmmaAttention(tile), tile.tag()));
                    if (tile.persistent()) {
                        // three CTAs, so that each walks many tiles, ragged and diagonal ones included
                        String tag = tile.tag() + "w3";
                        CudaTarget three = CudaTarget.H200.withSmCount(3).withWgmmaAttention(tile);
                        entries.add(write(dir, renamed(a, tag), three, tag));
                        if (tile.rotatesQueries()) {
                            entries.add(write(dir, renamed(a.withQueryRope(10000), tag + "rq"), three, tag + "rq"));
                        }
                    }
                }
                writeRope(dir, entries, a, hopper);
            }
            if (spec instanceof AttentionSpec a && a.fastPath(CudaTarget.H200) && a.batch() == 16) {
                for (CudaTarget.AttentionTile tile : tiles) {
                    if (tile.rowTiles() * a.headDim() <= 128) { // the renderer refuses more (it would spill)
                        entries.add(write(dir, renamed(a, tile.tag()), CudaTarget.H200.withAttention(tile, tile), tile.tag()));
                    }
                }
                if (a.headDim() == 128) {
                    for (CudaTarget.WgmmaTile tile : hopper) {
                        entries.add(write(dir, renamed(a, tile.tag()), CudaTarget.H200.withWgmmaAttention(tile), tile.tag()));
                    }
                    writeRope(dir, entries, a, hopper);
                }
            }
        }
        Files.writeString(dir.resolve("manifest.json"), "[\n" + String.join(",\n", entries) + "\n]\n");
    }

    private static AttentionSpec renamed(AttentionSpec a, String tag) {
        return new AttentionSpec(a.name() + "_" + tag, a.batch(), a.heads(), a.seqQ(), a.seqK(), a.headDim(), a.causal(),
                a.scale(), a.dtype(), a.ropeBase(), a.ropeKeys(), a.group(), a.masked());
    }

    /**
     * The same attention with RoPE inside (base 10000), through every tile that can rotate: q and k
     * (tag suffix {@code r}), q alone (suffix {@code rq}).
     */
    private static void writeRope(Path dir, List<String> entries, AttentionSpec a, List<CudaTarget.WgmmaTile> hopper)
            throws IOException {
        for (CudaTarget.WgmmaTile tile : hopper) {
            if (tile.fusesRope()) {
                String tag = tile.tag() + "r";
                entries.add(write(dir, renamed(a.withRope(10000), tag), CudaTarget.H200.withWgmmaAttention(tile), tag));
            }
            if (tile.rotatesQueries()) {
                String tag = tile.tag() + "rq";
                entries.add(write(dir, renamed(a.withQueryRope(10000), tag), CudaTarget.H200.withWgmmaAttention(tile), tag));
            }
        }
    }

    static String write(Path dir, KernelSpec spec, CudaTarget target, String tag) throws IOException {
        CudaKernelSource src = spec.render(target);
        Files.writeString(dir.resolve(src.entry() + ".cu"), src.source());
        LaunchConfig l = src.launch();
        StringBuilder b = new StringBuilder();
        b.append("{\"entry\": \"").append(src.entry()).append("\", \"family\": \"")
                .append(spec.getClass().getSimpleName()).append("\", \"variant\": \"").append(src.variant())
                .append("\", \"tag\": \"").append(tag)
                .append("\", \"grid\": [").append(l.gridX()).append(", ").append(l.gridY()).append(", ").append(l.gridZ())
                .append("], \"block\": [").append(l.blockX()).append(", ").append(l.blockY()).append(", ")
                .append(l.blockZ()).append("], \"smem\": ").append(l.dynamicSharedBytes())
                .append(", \"params\": [");
        List<String> ps = new ArrayList<>();
        for (KernelParam p : src.params()) {
            ps.add("[\"" + p.cType() + "\", \"" + p.name() + "\"]");
        }
        b.append(String.join(", ", ps)).append("], \"spec\": {");
        List<String> fields = new ArrayList<>();
        for (RecordComponent rc : spec.getClass().getRecordComponents()) {
            try {
                fields.add("\"" + rc.getName() + "\": " + json(rc.getAccessor().invoke(spec)));
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        b.append(String.join(", ", fields)).append("}}");
        return b.toString();
    }

    private static String json(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof Number || v instanceof Boolean) {
            return String.format(Locale.ROOT, "%s", v);
        }
        if (v instanceof List<?> list) {
            List<String> items = new ArrayList<>();
            for (Object o : list) {
                items.add(json(o));
            }
            return "[" + String.join(", ", items) + "]";
        }
        if (v instanceof Record r) {
            List<String> fields = new ArrayList<>();
            for (RecordComponent rc : r.getClass().getRecordComponents()) {
                try {
                    fields.add("\"" + rc.getName() + "\": " + json(rc.getAccessor().invoke(r)));
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
            return "{" + String.join(", ", fields) + "}";
        }
        return "\"" + v + "\"";
    }
}
