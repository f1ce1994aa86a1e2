package dev.lantern.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code lantern CMD --help} and {@code lantern help CMD}: the command's own entry of
 * {@link Main#USAGE}, so that the help a user reads and the overview never disagree.
 */
final class CommandHelp {
    private static final String ENTRY_INDENT = "  ";

    private CommandHelp() {}

    /** True when the arguments after the command's name ask for its help. */
    static boolean asked(List<String> tail) {
        return tail.contains("--help") || tail.contains("-h");
    }

    /**
     * The usage entry of {@code command}: its first line and the continuation lines below it
     * (indented deeper than an entry), or empty when the overview has no entry for it.
     */
    static Optional<String> of(String usage, String command) {
        List<String> lines = new ArrayList<>();
        boolean in = false;
        for (String line : usage.split("\n", -1)) {
            boolean entry = line.startsWith(ENTRY_INDENT) && !line.startsWith(ENTRY_INDENT + " ");
            if (entry) {
                String name = line.strip().split("\\s+", 2)[0];
                in = name.equals(command);
            } else if (line.isBlank() || !line.startsWith(ENTRY_INDENT)) {
                in = false;
            }
            if (in) {
                lines.add(line);
            }
        }
        return lines.isEmpty() ? Optional.empty()
                : Optional.of("usage: lantern " + command + " [options]\n" + String.join("\n", lines));
    }
}
