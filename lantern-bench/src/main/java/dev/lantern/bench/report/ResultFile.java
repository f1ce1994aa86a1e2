package dev.lantern.bench.report;

import java.util.List;

/**
 * What the report took from one file under the results folder. {@code problem} is non-null for a
 * file it could not read (bad JSON, an unknown shape): such a file is listed with the reason, never
 * fatal. {@code text} holds a text file's content (the tables bench prints beside its JSON).
 *
 * @param path     the file's path relative to the results folder, with '/' separators
 * @param kind     what shape the file had: "bench", "models", "ab", "matmul", "train", "soak", "determinism", "text", ...
 * @param machine  the GPU model ("NVIDIA H200") or the CPU ("AMD EPYC (2 cores)"); the folder's name when the file does not say
 * @param commit   the commit measured (short hash), "?" when unknown
 * @param date     YYYY-MM-DD, "" when unknown
 */
public record ResultFile(String path, String kind, String machine, String commit, String date, List<Figure> figures,
                         List<KernelRow> kernels, List<TimelinePoint> timeline, String problem, String text) {
    public ResultFile {
        figures = List.copyOf(figures);
        kernels = List.copyOf(kernels);
        timeline = List.copyOf(timeline);
    }

    static ResultFile unreadable(String path, String machine, String problem) {
        return new ResultFile(path, "unreadable", machine, "?", "", List.of(), List.of(), List.of(), problem, null);
    }

    public boolean readable() {
        return problem == null;
    }

    /** Whether its figures belong on the trend over commits (an A/B file pairs two commits in one run: it stays apart). */
    public boolean trended() {
        return readable() && !kind.equals("ab") && !kind.equals("text");
    }
}
