package dev.lantern.cli;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The {@code lantern} launcher script, run by bash in a copy of the repository whose JDK is a
 * stand-in script: it checks the script's own work (stderr filter, exit status, arguments) without
 * building or starting a JVM.
 */
class LauncherTest {
    static final Path SCRIPT = Path.of("").toAbsolutePath().getParent().resolve("lantern");

    @TempDir
    Path root;

    Path jdk;

    @BeforeEach
    void fakeRepositoryAndJdk() throws IOException {
        assumeTrue(Files.isRegularFile(SCRIPT), "the launcher is at the repository root");
        assumeTrue(Files.isExecutable(Path.of("/bin/bash")) || Files.isExecutable(Path.of("/usr/bin/bash")), "bash");
        Files.copy(SCRIPT, root.resolve("lantern"));
        Path jar = root.resolve("lantern-cli/target/lantern-cli-0.1.0-SNAPSHOT.jar");
        Files.createDirectories(jar.getParent());
        Files.writeString(jar, ""); // present and newer than every (absent) source: no build
        jdk = root.resolve("jdk");
        Files.createDirectories(jdk.resolve("bin"));
        script(jdk.resolve("bin/javac"), "exit 0\n");
        // a JVM that announces the incubator module, as the real one does, then prints what the test asks
        script(jdk.resolve("bin/java"), """
                if [[ "$1" == -XshowSettings:properties ]]; then echo '    java.specification.version = 25' >&2; exit 0; fi
                echo 'WARNING: Using incubator modules: jdk.incubator.vector' >&2
                shift $(( $# - 2 ))   # the launcher's own JVM options, then the class; keep the user's two arguments
                if [[ "$1" == sleep ]]; then
                  trap 'kill $sleeper; echo terminated > "$2"; exit 143' TERM
                  sleep 30 & sleeper=$!
                  echo started > "$2"
                  wait $sleeper
                  exit 0
                fi
                printf 'args:%s,%s\\n' "$1" "$2"
                printf 'lantern opt: verify: expected fn(...) at '"'"'n\\0eg($0)'"'"'\\n' >&2
                printf 'second line\\n' >&2
                exit "$2"
                """);
    }

    @Test
    void stderrLinesWithANulByteGetThroughAndTheWarningDoesNot() throws Exception {
        Result r = launch("opt", "3");
        assertEquals(3, r.code(), "java's exit status is the launcher's");
        assertEquals("args:opt,3\n", r.out());
        assertArrayEquals("lantern opt: verify: expected fn(...) at 'n\0eg($0)'\nsecond line\n".getBytes(StandardCharsets.UTF_8),
                r.err(), new String(r.err(), StandardCharsets.UTF_8));
    }

    @Test
    void exitStatusZeroPassesThrough() throws Exception {
        assertEquals(0, launch("demo", "0").code());
    }

    @Test
    void everyErrorLineIsOutBeforeTheLauncherExits() throws Exception {
        Path err = root.resolve("stderr");
        for (int i = 0; i < 5; i++) {
            ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("lantern").toString(), "opt", "1")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(err.toFile());
            pb.environment().put("JAVA_HOME", jdk.toString());
            Process p = pb.start();
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            // read right after the exit, as `lantern ... 2>err; cat err` does: the filter has finished
            assertEquals(2, Files.readAllLines(err, StandardCharsets.ISO_8859_1).size(), "run " + i);
        }
    }

    @Test
    void terminatingTheLauncherTerminatesJava() throws Exception {
        Path marker = root.resolve("marker");
        ProcessBuilder pb = new ProcessBuilder("bash", root.resolve("lantern").toString(), "sleep", marker.toString())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("JAVA_HOME", jdk.toString());
        Process p = pb.start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!(Files.exists(marker) && Files.readString(marker).equals("started\n")) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        p.destroy(); // SIGTERM to the launcher's pid
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "the launcher ends");
        assertEquals("terminated\n", Files.readString(marker), "java got the signal, and the launcher waited for it");
    }

    @Test
    void aChangedTestDoesNotRebuildAndABuildIsNotRepeated() throws Exception {
        Path built = root.resolve("built");
        // a Maven wrapper that notes each build and, as Maven does for an up-to-date jar, leaves the jar alone
        script(root.resolve("mvnw"), "echo build >> '" + built + "'\n");
        Path jar = root.resolve("lantern-cli/target/lantern-cli-0.1.0-SNAPSHOT.jar");
        Files.setLastModifiedTime(jar, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 60_000));

        Path test = root.resolve("lantern-cli/src/test/java/SomeTest.java");
        Files.createDirectories(test.getParent());
        Files.writeString(test, "class SomeTest {}\n");
        assertEquals(0, launch("demo", "0").code());
        assertTrue(Files.notExists(built), "a test source is not in the jar: no build");

        Path main = root.resolve("lantern-cli/src/main/java/Some.java");
        Files.createDirectories(main.getParent());
        Files.writeString(main, "class Some {}\n");
        assertEquals(0, launch("demo", "0").code());
        assertEquals(0, launch("demo", "0").code());
        assertEquals(List.of("build"), Files.readAllLines(built), "one build for one change");
    }

    record Result(int code, String out, byte[] err) {}

    private Result launch(String... args) throws Exception {
        Path out = root.resolve("stdout");
        String[] cmd = new String[args.length + 2];
        cmd[0] = "bash";
        cmd[1] = root.resolve("lantern").toString();
        System.arraycopy(args, 0, cmd, 2, args.length);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile());
        pb.environment().put("JAVA_HOME", jdk.toString());
        Process p = pb.start();
        byte[] err = p.getErrorStream().readAllBytes(); // to EOF: the filter's output included
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        return new Result(p.exitValue(), Files.readString(out), err);
    }

    private static void script(Path p, String body) throws IOException {
        Files.writeString(p, "#!/usr/bin/env bash\n" + body);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
}
