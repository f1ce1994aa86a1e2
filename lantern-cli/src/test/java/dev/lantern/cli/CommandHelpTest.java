package dev.lantern.cli;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code lantern CMD --help} and {@code lantern help CMD} print that command's entry, exit 0. */
class CommandHelpTest {
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            bench --help      | bench       | --deterministic
            train -h          | train       | --checkpoint-dir
            help determinism  | determinism | --runs N
            run --help        | run         | --mode eager|compiled|graph
            demo --json --help| demo        | --dump-ir
            """)
    void aCommandsHelpIsItsUsageEntry(String argLine, String command, String expected) {
        MainTest.Run r = MainTest.run(argLine.strip().split("\\s+"));
        assertEquals(0, r.code(), r.err());
        assertTrue(r.out().startsWith("usage: lantern " + command), r.out());
        assertTrue(r.out().contains(expected), r.out());
        // only this command's entry, not the whole overview
        assertFalse(r.out().contains("Exit codes"), r.out());
        for (String other : new String[] {"soak ", "doctor "}) {
            assertFalse(r.out().contains("\n  " + other), other + " leaked into " + command + "'s help: " + r.out());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"help nosuch", "help --json"})
    void helpForAnUnknownCommandIsAUsageError(String argLine) {
        MainTest.Run r = MainTest.run(argLine.split(" "));
        assertEquals(2, r.code());
        assertTrue(r.err().startsWith("lantern help: unknown command"), r.err());
    }
}
