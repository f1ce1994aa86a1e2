package dev.lantern.metrics;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Runs the metrics server's exchanges, each on its own virtual thread, at most {@code limit} at once.
 *
 * <p>Why not a small pool of platform threads: the JDK's HTTP server reads a request's headers on the
 * executor's thread with blocking reads, so a client that sends half a request holds a thread until the
 * server's request timeout ({@code sun.net.httpserver.maxReqTime}) closes it. With two pool threads, two
 * such clients kept every scrape waiting for that timeout (about 60 s in {@code MetricsServerAbuseTest}).
 * A virtual thread parks while it waits for bytes, so a slow client costs a few kilobytes, not a scrape.
 * The permits bound that cost: beyond {@code limit} exchanges in flight, {@link #execute} refuses, and the
 * JDK server closes that connection at once (a {@link RejectedExecutionException} from its executor), so
 * neither threads nor memory grow with the clients.
 */
final class ExchangeExecutor implements Executor {
    private final Semaphore permits;
    private final ExecutorService threads;

    ExchangeExecutor(String name, int limit) {
        this.permits = new Semaphore(limit);
        this.threads = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name(name + "-", 0).factory());
    }

    @Override
    public void execute(Runnable exchange) {
        if (!permits.tryAcquire()) {
            throw new RejectedExecutionException("the metrics server is answering its maximum of exchanges at once");
        }
        try {
            threads.execute(() -> {
                try {
                    exchange.run();
                } finally {
                    permits.release();
                }
            });
        } catch (RejectedExecutionException e) { // shut down
            permits.release();
            throw e;
        }
    }

    /** Exchanges in flight now. */
    int inFlight(int limit) {
        return limit - permits.availablePermits();
    }

    /** Interrupts what still runs and waits up to {@code seconds} for it to end; false when something did not. */
    boolean shutdown(long seconds) throws InterruptedException {
        threads.shutdownNow();
        return threads.awaitTermination(seconds, TimeUnit.SECONDS);
    }
}
