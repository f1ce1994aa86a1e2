package dev.lantern.bench.report;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The order commits were made in (oldest first), so that results recorded on one day follow the
 * history rather than the alphabetical order of their hashes. Matched by the 7-character prefix
 * results files use; a commit not in the list sorts after the known ones of its day.
 */
public record CommitOrder(Map<String, Integer> index) {
    public CommitOrder {
        index = Map.copyOf(index);
    }

    /** No history known: a day's results in path order. */
    public static CommitOrder none() {
        return new CommitOrder(Map.of());
    }

    /** From full or short hashes, oldest first (what {@code git log --reverse --format=%H} prints). */
    public static CommitOrder of(List<String> hashesOldestFirst) {
        Map<String, Integer> m = new HashMap<>();
        for (int i = 0; i < hashesOldestFirst.size(); i++) {
            String h = hashesOldestFirst.get(i).trim();
            if (h.length() >= 7) {
                m.putIfAbsent(h.substring(0, 7), i);
            }
        }
        return new CommitOrder(m);
    }

    /**
     * The history of the git repository holding {@code dir} ({@code git log --all --date-order --reverse}),
     * or {@link #none()} without git or outside a repository.
     */
    public static CommitOrder fromGit(java.nio.file.Path dir) {
        try {
            Process p = new ProcessBuilder("git", "-C", dir.toAbsolutePath().toString(), "log", "--all", "--date-order", "--reverse", "--format=%H")
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            List<String> hashes;
            try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), java.nio.charset.StandardCharsets.US_ASCII))) {
                hashes = r.lines().toList();
            }
            if (p.waitFor() == 0 && !hashes.isEmpty()) {
                return of(hashes);
            }
        } catch (java.io.IOException e) {
            // no git on the PATH: no history
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return none();
    }

    public int of(String commit) {
        return commit == null || commit.length() < 7 ? Integer.MAX_VALUE : index.getOrDefault(commit.substring(0, 7), Integer.MAX_VALUE);
    }

    public boolean known() {
        return !index.isEmpty();
    }
}
