package dev.lantern.bench.profile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The normalizer {@code scripts/gpu-profile} runs on the GPU machine:
 * {@code ProfileMain --out FILE [--kern CSV] [--mem CSV] [--trace CSV] [--ncu CSV] [--date D]
 * [--commit C] [--gpu G] [--driver V] [--block B] [--forwards N] [--ncu-forwards N] [--nsys-version V]
 * [--ncu-version V] [--command TEXT] [--events JSON] [--missing TEXT]...}; {@code --events} is
 * {@code OverlapProbe}'s file, the memcpy/compute overlap from CUDA events ({@link EventsOverlap}). Each CSV is optional; one that is
 * absent, empty or unreadable leaves its part null and a line in {@code missing} (the script's
 * own {@code --missing} notes, such as a tool not found, come first), so a partial run still
 * writes its file. Exit 0 when the file is written, 2 for a bad command line.
 */
public final class ProfileMain {
    private ProfileMain() {}

    public static void main(String[] args) {
        Map<String, String> a = new HashMap<>();
        List<String> missing = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String k = args[i];
            if (!k.startsWith("--") || i + 1 >= args.length) {
                System.err.println("gpu-profile normalizer: expected --option VALUE pairs, got '" + k + "'");
                System.exit(2);
            }
            String v = args[++i];
            if (k.equals("--missing")) {
                missing.add(v);
            } else {
                a.put(k.substring(2), v);
            }
        }
        if (!a.containsKey("out")) {
            System.err.println("gpu-profile normalizer: --out FILE is required");
            System.exit(2);
        }
        int forwards = count(a, "forwards");
        int ncuForwards = count(a, "ncu-forwards");
        ProfileReport.Meta meta = new ProfileReport.Meta(a.get("date"), a.get("commit"), a.get("gpu"), a.get("driver"),
                a.get("block"), forwards, ncuForwards, a.get("nsys-version"), a.get("ncu-version"), a.get("command"));
        String json = build(meta, a.get("kern"), a.get("mem"), a.get("trace"), a.get("ncu"), a.get("events"), missing).toJson();
        Path out = Path.of(a.get("out"));
        write(out, json);
        missing.forEach(m -> System.err.println("gpu-profile normalizer: missing: " + m));
        System.out.println("gpu-profile normalizer: wrote " + out);
    }

    private static int count(Map<String, String> a, String key) {
        try {
            return Integer.parseInt(a.getOrDefault(key, "0"));
        } catch (NumberFormatException e) {
            System.err.println("gpu-profile normalizer: --" + key + " takes a whole number");
            System.exit(2);
            return 0;
        }
    }

    /** The report from whichever of the four files exist and read; each failure becomes a line of {@code missing}. */
    public static ProfileReport build(ProfileReport.Meta meta, String kern, String mem, String trace, String ncu, List<String> missing) {
        return build(meta, kern, mem, trace, ncu, null, missing);
    }

    /** As above, with {@code events}: OverlapProbe's JSON, the memcpy/compute overlap from CUDA events (null: not run, not reported missing). */
    public static ProfileReport build(ProfileReport.Meta meta, String kern, String mem, String trace, String ncu, String events,
            List<String> missing) {
        List<NsysSummary.Entry> kernels = part("nsys kernel summary (cuda_gpu_kern_sum)", kern, NsysSummary::kernels, missing);
        List<NsysSummary.Entry> memory = part("nsys memory summary (cuda_gpu_mem_time_sum)", mem, NsysSummary::memoryOps, missing);
        Overlap.Result overlap = part("nsys trace (cuda_gpu_trace)", trace, Overlap::fromTrace, missing);
        List<NcuSummary.Launch> launches = part("ncu raw CSV", ncu, NcuSummary::launches, missing);
        EventsOverlap eventsOverlap = events == null ? null : part("CUDA-event overlap (OverlapProbe)", events, EventsOverlap::fromJson, missing);
        return new ProfileReport(meta, kernels, memory, overlap, launches == null ? null : NcuSummary.kernels(launches), eventsOverlap, missing);
    }

    private interface Reader<T> {
        T read(String source, String text);
    }

    private static <T> T part(String what, String file, Reader<T> reader, List<String> missing) {
        if (file == null) {
            missing.add(what + ": not given");
            return null;
        }
        Path p = Path.of(file);
        try {
            if (!Files.isRegularFile(p) || Files.size(p) == 0) {
                missing.add(what + ": " + file + (Files.exists(p) ? " is empty" : " does not exist"));
                return null;
            }
            return reader.read(p.getFileName().toString(), Files.readString(p, StandardCharsets.UTF_8));
        } catch (IOException e) {
            missing.add(what + ": cannot read " + file + " (" + e.getMessage() + ")");
        } catch (ProfileFormatException e) {
            missing.add(what + ": " + e.getMessage());
        }
        return null;
    }

    private static void write(Path out, String text) {
        try {
            Path parent = out.toAbsolutePath().getParent();
            Files.createDirectories(parent);
            Path tmp = out.resolveSibling(out.getFileName() + ".tmp"); // beside it, so the move is atomic
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, out, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + out + ": " + e.getMessage(), e);
        }
    }
}
