package dev.lantern.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line arguments of one subcommand: {@code --flag}, {@code --key value} or
 * {@code --key=value}, and positional arguments. Unknown options are a {@link UsageException}.
 */
final class Args {
    private final Map<String, String> options = new LinkedHashMap<>();
    private final List<String> positional = new ArrayList<>();

    private Args() {}

    /**
     * Parses {@code args}; {@code flags} take no value, {@code valued} take one.
     */
    static Args parse(String command, List<String> args, Set<String> flags, Set<String> valued) {
        Args a = new Args();
        for (int i = 0; i < args.size(); i++) {
            String s = args.get(i);
            if (s.startsWith("--")) {
                String key = s.substring(2);
                String value = null;
                int eq = key.indexOf('=');
                if (eq >= 0) {
                    value = key.substring(eq + 1);
                    key = key.substring(0, eq);
                }
                if (flags.contains(key)) {
                    if (value != null) {
                        throw new UsageException(command + ": --" + key + " takes no value");
                    }
                    a.options.put(key, "true");
                } else if (valued.contains(key)) {
                    if (value == null) {
                        if (i + 1 >= args.size()) {
                            throw new UsageException(command + ": --" + key + " needs a value");
                        }
                        value = args.get(++i);
                    }
                    a.options.put(key, value);
                } else {
                    throw new UsageException(command + ": unknown option --" + key
                            + " (options: " + describe(flags, valued) + ")");
                }
            } else {
                a.positional.add(s);
            }
        }
        return a;
    }

    private static String describe(Set<String> flags, Set<String> valued) {
        List<String> all = new ArrayList<>();
        flags.stream().sorted().forEach(f -> all.add("--" + f));
        valued.stream().sorted().forEach(v -> all.add("--" + v + " X"));
        return String.join(", ", all);
    }

    boolean flag(String name) {
        return options.containsKey(name);
    }

    String get(String name, String dflt) {
        return options.getOrDefault(name, dflt);
    }

    int getInt(String command, String name, int dflt, int min, int max) {
        String v = options.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            int i = Integer.parseInt(v);
            if (i < min || i > max) {
                throw new UsageException(command + ": --" + name + " must be in [" + min + ", " + max + "], found " + v);
            }
            return i;
        } catch (NumberFormatException e) {
            throw new UsageException(command + ": --" + name + " must be an integer, found '" + v + "'");
        }
    }

    long getLong(String command, String name, long dflt) {
        String v = options.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new UsageException(command + ": --" + name + " must be an integer, found '" + v + "'");
        }
    }

    double getDouble(String command, String name, double dflt, double min, double max) {
        String v = options.get(name);
        if (v == null) {
            return dflt;
        }
        double d;
        try {
            d = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new UsageException(command + ": --" + name + " must be a number, found '" + v + "'");
        }
        if (!(d >= min && d <= max)) {
            throw new UsageException(command + ": --" + name + " must be in [" + min + ", " + max + "], found " + v);
        }
        return d;
    }

    List<String> positional() {
        return positional;
    }

    /** Refuses positional arguments, for a command that takes none: nothing typed is silently ignored. */
    Args noPositional(String command) {
        if (!positional.isEmpty()) {
            throw new UsageException(command + ": unexpected argument '" + positional.getFirst() + "' (" + command
                    + " takes options only)");
        }
        return this;
    }
}
