package dev.lantern.metrics;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A scrape over real HTTP, as Prometheus does it, and the value of one sample line of its text. */
final class Scrape {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private Scrape() {}

    static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return CLIENT.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** The value of the sample {@code series} (a name, or a name with its labels), NaN when absent. */
    static double value(String body, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)").matcher(body);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    /** Platform threads of the metrics servers (their dispatchers) still alive. */
    static long serverThreads() {
        // the JDK server's dispatcher (joined by close()) is the server's platform thread; its exchanges run on
        // virtual threads, which getAllStackTraces does not list
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.isAlive() && t.getName().equals("HTTP-Dispatcher"))
                .count();
    }
}
