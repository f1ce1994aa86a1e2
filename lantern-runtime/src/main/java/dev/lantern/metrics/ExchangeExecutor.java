package dev.lantern.metrics;

import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs the metrics server's exchanges on virtual threads: at most {@code running} at once, up to
 * {@code queued} more waiting, and any beyond refused.
 *
 * <p>Why not a small pool of platform threads: the JDK's HTTP server reads a request's headers on the
 * executor's thread with blocking reads, so a client that sends half a request holds a thread until the
 * server's request timeout ({@code sun.net.httpserver.maxReqTime}) closes it. With two pool threads,
 * two such clients kept every scrape waiting for that timeout (60.9 s, measured). A virtual thread parks
 * while it waits for bytes, so a slow client costs a few kilobytes, not a scrape.
 *
 * <p>Why a queue as well as the cap: the JDK server hands a connection to the executor as soon as it is
 * readable, and a connection closed by its client is readable too (end of stream). A client closing a
 * thousand idle connections at once makes a thousand exchanges that each end in microseconds; refusing
 * them past the cap would also refuse (close) a scrape that arrived among them. Queued, the scrape waits
 * microseconds. What waits in the queue has read nothing yet (an exchange object and its connection),
 * so the memory stays bounded: {@code running} exchanges reading headers (the JDK stops a header at 380
 * KiB) and {@code queued} small objects. Past both, {@link #execute} throws
 * {@link RejectedExecutionException} and the JDK server closes that connection at once.
 */
final class ExchangeExecutor implements Executor {
    private final ThreadPoolExecutor pool;

    ExchangeExecutor(String name, int running, int queued) {
        pool = new ThreadPoolExecutor(running, running, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(queued),
                Thread.ofVirtual().name(name + "-", 0).factory(), new ThreadPoolExecutor.AbortPolicy());
        pool.allowCoreThreadTimeOut(true); // an idle server keeps no threads, virtual or not
    }

    @Override
    public void execute(Runnable exchange) {
        pool.execute(exchange);
    }

    /** Exchanges running now. */
    int running() {
        return pool.getActiveCount();
    }

    /** Exchanges waiting for a thread now. */
    int waiting() {
        return pool.getQueue().size();
    }

    /** Interrupts what still runs, drops what waits, and waits up to {@code seconds} for the rest to end; false when something did not. */
    boolean shutdown(long seconds) throws InterruptedException {
        pool.shutdownNow();
        return pool.awaitTermination(seconds, TimeUnit.SECONDS);
    }
}
