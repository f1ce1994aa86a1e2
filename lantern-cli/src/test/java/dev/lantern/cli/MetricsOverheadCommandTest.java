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
        assertEquals(pct, number(j, "pooled_overhead_pct"), 0.01 + 1e-3 * Math.abs(pct), j);
        assertEquals(2, number(j, "pairs"), j);
        assertEquals(1, number(j, "abba_blocks"), j);
        // one block: the estimate is that block, the geometric mean of the two pairs' ratios, and the interval is that point
        Matcher pairs = Pattern.compile("\"pair_overhead_pct\": \\[([-0-9.]+), ([-0-9.]+)\\]").matcher(j);
        assertTrue(pairs.find(), j);
        double block = 100 * (Math.sqrt((1 + Double.parseDouble(pairs.group(1)) / 100) * (1 + Double.parseDouble(pairs.group(2)) / 100)) - 1);
        assertEquals(block, number(j, "overhead_pct"), 0.002, j);
        Matcher ci = Pattern.compile("\"overhead_ci95_pct\": \\[([-0-9.]+), ([-0-9.]+)\\]").matcher(j);
        assertTrue(ci.find(), j);
        assertEquals(number(j, "overhead_pct"), Double.parseDouble(ci.group(1)), 0.002, j);
        assertEquals(number(j, "overhead_pct"), Double.parseDouble(ci.group(2)), 0.002, j);
        assertTrue(j.contains("\"verdict_1pct\": \""), j);
    }

    @Test
    void pairsOfShortSegmentsGiveAnIntervalAndAVerdict() {
        MainTest.Run r = MainTest.run("bench", "overhead", "--shape", "1,16,32,2,64", "--pairs", "6", "--segment-s", "0.1",
                "--scrape-ms", "20");
        assertEquals(0, r.code(), r.err());
        String line = r.out().strip();
        assertTrue(line.contains("slower with the exporter on and scraped every 20 ms (95 % CI "), line);
        assertTrue(line.contains("median of 3 ABBA blocks of 6 off/on pairs of 0.10 s segments"), line);
        assertTrue(line.contains("no verdict below 10 pairs"), "3 blocks give no verdict: " + line);
    }

    @Test
    void underAbuseBothSidesAreScrapedAndTheAbuseRunsBesideTheOnSide() {
        MainTest.Run r = MainTest.run("bench", "overhead", "--shape", "1,16,32,2,64", "--pairs", "2", "--segment-s", "0.5",
                "--scrape-ms", "50", "--abuse", "--json");
        assertEquals(0, r.code(), r.err());
        String j = r.out().strip();
        assertTrue(j.contains("\"abuse\": true"), j);
        assertTrue(j.contains("\"abuse_process\": true"), "the abuser runs in a process of its own: " + j);
        // both sides served and scraped (2 s of segments at 50 ms), none failed under the abuse
        assertTrue(number(j, "scrapes") >= 8, j);
        assertEquals(0, number(j, "failed_scrapes"), j);
        // the churn thread sent unknown paths and oversized headers, each answered or closed by the server
        assertTrue(number(j, "abuse_requests") >= 4, j);
        assertEquals(0, number(j, "abuse_failures"), j);
        assertTrue(number(j, "abuse_client_cpu_per_s") >= 0 && number(j, "on_process_cpu_per_s") > 0, j);
        // on the CPU the step's own CPU time is measured too, both sides
        assertTrue(number(j, "step_thread_cpu_off_ms") > 0 && number(j, "step_thread_cpu_on_ms") > 0, j);
        assertTrue(j.contains("\"cpu_time_overhead_ci95_pct\": ["), j);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            one segment     | bench overhead --segments 1           | --segments must be in [2, 10000]
            no pairs        | bench overhead --pairs 0              | --pairs must be in [1, 5000]
            pairs, segments | bench overhead --pairs 4 --segments 8 | give --pairs or --segments
            bad seconds     | bench overhead --segment-s soon       | --segment-s must be a number
            bad device      | bench overhead --device tpu           | --device must be cpu or cuda
            extra argument  | bench overhead extra                  | unexpected argument 'extra'
            abuser, no abuse | bench overhead --abuse-in-process    | --abuse-in-process goes with --abuse
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
