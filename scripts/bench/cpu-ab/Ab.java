import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Ab TARGET SECONDS CLASSES DIR...: each DIR's Lantern (its lib/*.jar: a copy of lantern-cli/target/lib) in a class
 * loader of its own, the same TARGET compiled in each, and their forwards interleaved in this one JVM (the order
 * rotated every round), so that a shared machine's load falls on every build alike. Prints CPU time per forward on
 * the calling thread (wall time with -Dab.wall: at more than one thread CPU time is only the caller's share).
 */
public class Ab {
    public static void main(String[] a) throws Exception {
        String target = a[0];
        double secs = Double.parseDouble(a[1]);
        List<LongSupplier> runs = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (int i = 3; i < a.length; i++) {
            List<URL> urls = new ArrayList<>();
            urls.add(Path.of(a[2]).toUri().toURL());
            try (var s = Files.list(Path.of(a[i], "lib"))) {
                for (Path p : s.sorted().toList()) {
                    urls.add(p.toUri().toURL());
                }
            }
            ClassLoader cl = new URLClassLoader(urls.toArray(URL[]::new), ClassLoader.getPlatformClassLoader());
            runs.add((LongSupplier) cl.loadClass("AbTarget").getConstructor(String.class).newInstance(target));
            names.add(Path.of(a[i]).getFileName().toString());
        }
        long end = System.nanoTime() + Long.getLong("ab.warmupSeconds", 8) * 1_000_000_000L; // C2 needs a few hundred small forwards
        while (System.nanoTime() < end) {
            for (LongSupplier s : runs) {
                s.getAsLong();
            }
        }
        List<List<Long>> t = new ArrayList<>();
        runs.forEach(r -> t.add(new ArrayList<>()));
        end = System.nanoTime() + (long) (secs * 1e9);
        for (int round = 0; System.nanoTime() < end; round++) {
            for (int k = 0; k < runs.size(); k++) {
                int i = (k + round) % runs.size();
                t.get(i).add(runs.get(i).getAsLong());
            }
        }
        String unit = System.getProperty("ab.wall") != null ? "wall" : "cpu";
        double[] med = new double[runs.size()];
        for (int i = 0; i < runs.size(); i++) {
            List<Long> x = t.get(i);
            Collections.sort(x);
            med[i] = x.get(x.size() / 2) / 1e6;
            System.out.printf("%-12s %s  n=%d  %s ms: min %.3f  p10 %.3f  median %.3f%n", names.get(i), target, x.size(), unit,
                    x.getFirst() / 1e6, x.get(x.size() / 10) / 1e6, med[i]);
        }
        for (int i = 1; i < runs.size(); i++) {
            System.out.printf("median %s / %s = %.3f%n", names.get(0), names.get(i), med[0] / med[i]);
        }
    }
}
