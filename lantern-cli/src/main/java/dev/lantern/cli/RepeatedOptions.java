package dev.lantern.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Options that may be given several times ({@code --input NAME=FILE.npy}, {@code --shape NAME=d0,d1}),
 * taken out of the arguments before {@link Args}, which keeps one value per option.
 *
 * @param values each repeated option's values, in order, by option name (without {@code --})
 * @param rest   the other arguments
 */
record RepeatedOptions(Map<String, List<String>> values, List<String> rest) {
    static RepeatedOptions take(String command, List<String> argv, Set<String> names) {
        Map<String, List<String>> values = new LinkedHashMap<>();
        names.forEach(n -> values.put(n, new ArrayList<>()));
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < argv.size(); i++) {
            String s = argv.get(i);
            String name = s.startsWith("--") ? s.substring(2) : null;
            int eq = name == null ? -1 : name.indexOf('=');
            if (name != null && eq < 0 && names.contains(name)) {
                if (i + 1 >= argv.size()) {
                    throw new UsageException(command + ": --" + name + " needs a value");
                }
                values.get(name).add(argv.get(++i));
            } else if (name != null && eq > 0 && names.contains(name.substring(0, eq))) {
                values.get(name.substring(0, eq)).add(name.substring(eq + 1));
            } else {
                rest.add(s);
            }
        }
        return new RepeatedOptions(values, rest);
    }

    List<String> get(String name) {
        return values.getOrDefault(name, List.of());
    }

    /**
     * {@code NAME=VALUE} specs by name, each name once; {@code what} describes the value in the
     * message ({@code FILE.npy}).
     */
    static Map<String, String> byName(String command, String option, List<String> specs, String what) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String s : specs) {
            int eq = s.indexOf('=');
            if (eq <= 0 || eq == s.length() - 1) {
                throw new UsageException(command + ": --" + option + " takes NAME=" + what + ", found '" + s + "'");
            }
            if (m.put(s.substring(0, eq), s.substring(eq + 1)) != null) {
                throw new UsageException(command + ": --" + option + " " + s.substring(0, eq) + " is given twice");
            }
        }
        return m;
    }
}
