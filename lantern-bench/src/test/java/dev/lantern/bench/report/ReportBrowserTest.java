package dev.lantern.bench.report;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The report of the repository's bench/results opened in a real Chromium (Debian's chromium and
 * chromium-driver, driven by Selenium): the page renders every chart for every results file (each
 * SVG laid out with a size), a view per machine, the trend charts the figures call for, and no file
 * left unread; a screenshot goes to target/report.png (and to docs/img/report.png with
 * {@code -Dlantern.screenshot.update=true}). Tag {@code browser}: in the default build, and
 * {@code ./lantern test} installs Chromium first (scripts/test-services). Without the browser it
 * fails, saying how to install it.
 */
@Tag("browser")
class ReportBrowserTest {
    static final Path SCREENSHOT = Path.of("target/report.png");
    /** The docs' copy, refreshed with {@code -Dlantern.screenshot.update=true}: a test run leaves the tree clean. */
    static final Path DOCS_SCREENSHOT = Path.of("../docs/img/report.png");

    static String tool(String env, String dflt) {
        String v = System.getenv(env);
        return v == null || v.isBlank() ? dflt : v;
    }

    @Test
    void theReportRendersEveryChartInChromium() throws IOException {
        String chromium = tool("LANTERN_CHROMIUM", "/usr/bin/chromium");
        String driverPath = tool("LANTERN_CHROMEDRIVER", "/usr/bin/chromedriver");
        if (!Files.isExecutable(Path.of(chromium)) || !Files.isExecutable(Path.of(driverPath))) {
            fail("the browser test needs Chromium and its driver: apt-get install -y chromium chromium-driver "
                    + "(or LANTERN_CHROMIUM / LANTERN_CHROMEDRIVER); looked for " + chromium + " and " + driverPath);
        }
        Path out = Path.of("target/report-browser/report.html");
        Files.createDirectories(out.getParent());
        CommitOrder history = CommitOrder.fromGit(ReportTest.RESULTS);
        BenchReport.Written w = BenchReport.write(ReportTest.RESULTS, out, history);

        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium);
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,1800");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(driverPath)).usingAnyFreePort().build();
        ChromeDriver browser = new ChromeDriver(service, options);
        try {
            browser.manage().window().setSize(new Dimension(1400, 1800));
            browser.get(out.toAbsolutePath().toUri().toString());
            assertTrue(browser.getTitle().startsWith("Lantern benchmark report"), browser.getTitle());

            int charted = 0;
            for (ResultFile f : w.read()) {
                if (!f.readable() || f.kind().equals("text")) {
                    continue;
                }
                String css = "svg.chart[data-file=\"" + f.path() + "\"]";
                List<WebElement> charts = browser.findElements(By.cssSelector(css));
                assertFalse(charts.isEmpty(), "no chart for " + f.path());
                for (WebElement c : charts) {
                    assertTrue(c.getSize().getWidth() > 100 && c.getSize().getHeight() > 20, f.path() + ": chart laid out at " + c.getSize());
                    assertFalse(c.findElements(By.cssSelector("rect, polyline")).isEmpty(), f.path() + ": a chart with marks");
                }
                charted++;
            }
            assertEquals(w.withFigures(), charted);
            long soaks = w.read().stream().filter(f -> !f.timeline().isEmpty()).count();
            assertTrue(soaks >= 1, "the repository holds a soak with its timeline");
            List<WebElement> soakCharts = browser.findElements(By.cssSelector("svg.chart[data-chart=\"soak\"]"));
            assertEquals(soaks, soakCharts.size(), "allocator memory over time for every soak with a timeline");
            for (WebElement c : soakCharts) {
                assertEquals(3, c.findElements(By.tagName("polyline")).size(), "reserved, allocated, fragmentation");
            }
            assertTrue(charted >= 70, "the repository's JSON results: " + charted);
            assertEquals(0, w.unreadable());

            for (String machine : List.of("NVIDIA H200", "AMD EPYC (2 cores)")) {
                WebElement view = browser.findElement(By.cssSelector("section.machine[data-machine=\"" + machine + "\"]"));
                List<WebElement> trends = view.findElements(By.cssSelector("svg.chart[data-chart=\"trend\"]"));
                long expected = Trends.byCase(w.read(), machine, history).values().stream()
                        .filter(list -> list.stream().flatMap(s -> s.points().stream()).mapToInt(Trends.Point::run).distinct().count() >= 2).count();
                assertEquals(expected, trends.size(), machine + ": a trend chart per case measured in two runs or more");
                assertTrue(trends.size() >= 5, machine);
                for (WebElement t : trends) {
                    assertTrue(t.getSize().getWidth() > 300, "trend chart size " + t.getSize());
                }
            }
            assertTrue(browser.findElement(By.id("alerts")).getText().contains("Regression alerts"));
            assertTrue(browser.findElement(By.id("unreadable")).getText().contains("every file was read"));

            Path shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
            Files.createDirectories(SCREENSHOT.getParent());
            Files.copy(shot, SCREENSHOT, StandardCopyOption.REPLACE_EXISTING);
            assertTrue(Files.size(SCREENSHOT) > 20_000, "a screenshot with content");
            if (Boolean.getBoolean("lantern.screenshot.update")) {
                Files.copy(SCREENSHOT, DOCS_SCREENSHOT, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            browser.quit();
        }
    }
}
