package dev.lantern.ir;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.code_intelligence.jazzer.api.FuzzedDataProvider;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Fuzzes the IR parser: any text either parses, verifies-or-fails with a typed error, and prints
 * back to itself after one round, or fails with a {@link LanternException}; nothing else escapes.
 * In CI this runs the regression seeds under src/test/resources; {@code JAZZER_FUZZ=1} fuzzes.
 */
class ParserFuzzTest {
    @FuzzTest(maxDuration = "30s")
    void fuzzParser(FuzzedDataProvider data) {
        String text = data.consumeRemainingAsString();
        Graph g;
        try {
            g = IrParser.parse(text);
        } catch (LanternException expected) {
            return;
        }
        String printed = IrPrinter.print(g);
        assertEquals(printed, IrPrinter.print(IrParser.parse(printed)));
        try {
            Verifier.verify(g);
        } catch (LanternException expected) {
            // a typed verifier error is a fine answer to a bad graph
        }
    }
}
