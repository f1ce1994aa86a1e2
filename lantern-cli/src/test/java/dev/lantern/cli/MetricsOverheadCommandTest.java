package dev.lantern.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code lantern bench overhead}: both sides timed, the exporter really scraped, bad arguments refused. */
class MetricsOverheadCommandTest {
    @Test
    void bothSidesAreTimedAndTheExporterIsScraped() {
        MainTest.Run r = MainTest.run("bench", "overhead", "--shape", "1,16,32,2,64", "--segments", "4", "--segment-s", "0.4",
                "--scrape-ms", "50", "--json");
        assertEquals(0, r.code(), r.err());
        String j = r.out().strip();
        assertTrue(number(j, "steps_off") >= 2 && number(j, "steps_on") >= 2, j);
        assertTrue(number(j, "off_ms") > 0 && number(j, "on_ms") > 0, j);
        // two "on" segments of 0.4 s scraped every 50 ms: at least one scrape each, none failed
        assertTrue(number(j, "scrapes") >= 2, j);
        assertEquals(0, number(j, "failed_scrapes"), j);
        double pct = 100 * (number(j, "on_ms") / number(j, "off_ms") - 1);
        assertEquals(pct, number(j, "overhead_pct"), 0.01 + 1e-3 * Math.abs(pct), j);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            one segment     | bench overhead --segments 1           | --segments must be in [2, 10000]
            bad seconds     | bench overhead --segment-s soon       | --segment-s must be a number
            bad device      | bench overhead --device tpu           | --device must be cpu or cuda
            extra argument  | bench overhead extra                  | unexpected argument 'extra'
            """)
    void badArgumentsAreOneLineWithExit2(String what, String argLine, String message) {
        MainTest.Run r = MainTest.run(argLine.split(" "));
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("lantern bench overhead: ") && r.err().contains(message), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    private static double number(String json, String key) {
        Matcher m = Pattern.compile("\"" + key + "\": ([-0-9.eE+]+)").matcher(json);
        assertTrue(m.find(), key + " missing from " + json);
        return Double.parseDouble(m.group(1));
    }
}
