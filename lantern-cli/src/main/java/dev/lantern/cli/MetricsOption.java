package dev.lantern.cli;

import dev.lantern.metrics.LanternMetrics;
import dev.lantern.metrics.MetricsServer;
import io.prometheus.metrics.model.registry.PrometheusRegistry;

import java.io.IOException;
import java.io.PrintStream;
import java.net.UnknownHostException;

/**
 * {@code --metrics-port P [--metrics-host H]}: serve the command's {@link LanternMetrics} at
 * {@code http://H:P/metrics} while it runs (docs/observability.md). Port 0 picks a free port and
 * the address goes to standard error either way, so a script can find it. Each command gets a fresh
 * registry: in-process runs (the tests, an embedding program) never collide on metric names.
 */
final class MetricsOption {
    static final String USAGE = "[--metrics-port P [--metrics-host H]]";

    private MetricsOption() {}

    /** Parsed {@code --metrics-port}/{@code --metrics-host}; {@code port < 0} when no metrics were asked for. */
    record Spec(int port, String host) {
        boolean enabled() {
            return port >= 0;
        }
    }

    /** Reads the two options' values (null when absent); a bad value is a {@link UsageException}. */
    static Spec parse(String command, String port, String host) {
        if (port == null) {
            if (host != null) {
                throw new UsageException(command + ": --metrics-host needs --metrics-port P (0 picks a free port)");
            }
            return new Spec(-1, MetricsServer.DEFAULT_HOST);
        }
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new UsageException(command + ": --metrics-port takes a port number in [0, 65535], found '" + port + "'");
        }
        if (p < 0 || p > 65535) {
            throw new UsageException(command + ": --metrics-port takes a port number in [0, 65535], found '" + port + "'");
        }
        if (host != null && host.isBlank()) {
            throw new UsageException(command + ": --metrics-host takes a host name or address, found an empty one");
        }
        return new Spec(p, host == null ? MetricsServer.DEFAULT_HOST : host);
    }

    /** The command's metrics and, when asked for, their server; closing it stops the server. */
    static final class Served implements AutoCloseable {
        final LanternMetrics metrics;
        private final MetricsServer server;

        private Served(LanternMetrics metrics, MetricsServer server) {
            this.metrics = metrics;
            this.server = server;
        }

        @Override
        public void close() {
            if (server != null) {
                server.close();
            }
        }
    }

    /**
     * Registers the metrics (always: recording costs little and keeps the commands' code free of
     * null checks) and starts the server when {@code spec} asks for one. A host that does not resolve
     * or a port that cannot be bound is the command line's fault: a {@link UsageException}.
     */
    static Served start(String command, Spec spec, PrintStream err) {
        LanternMetrics metrics = new LanternMetrics(new PrometheusRegistry());
        if (!spec.enabled()) {
            return new Served(metrics, null);
        }
        MetricsServer server;
        try {
            server = MetricsServer.start(spec.host(), spec.port(), metrics.registry());
        } catch (UnknownHostException e) {
            throw new UsageException(command + ": --metrics-host: unknown host '" + spec.host() + "'");
        } catch (IOException e) {
            throw new UsageException(command + ": cannot serve metrics on " + spec.host() + ":" + spec.port() + ": "
                    + ExitStatus.oneLine(String.valueOf(e.getMessage())));
        }
        err.println("lantern " + command + ": metrics at " + server.url());
        err.flush();
        return new Served(metrics, server);
    }
}
