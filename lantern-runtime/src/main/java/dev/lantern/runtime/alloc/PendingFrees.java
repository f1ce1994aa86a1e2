package dev.lantern.runtime.alloc;

import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/**
 * Blocks freed while kernels on other streams may still use them (fixed segments): each waits,
 * outside the free lists, for one marker per other stream, and is released once all have completed.
 */
final class PendingFrees {
    /** A block freed by the caller, waiting for one marker per other stream that used it. */
    private record Pending(Block block, List<StreamSync.Marker> markers) {
    }

    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private long bytes;

    void add(Block block, List<StreamSync.Marker> markers) {
        block.state = Block.State.PENDING;
        bytes += block.size;
        pending.addLast(new Pending(block, markers));
    }

    /** Hands every block whose markers have all completed to {@code release}; {@code await} blocks on them first. */
    void drain(boolean await, Consumer<Block> release) {
        for (Iterator<Pending> it = pending.iterator(); it.hasNext(); ) {
            Pending p = it.next();
            boolean done = true;
            for (StreamSync.Marker m : p.markers()) {
                if (await) {
                    m.await();
                }
                done &= m.isComplete();
            }
            if (done) {
                p.markers().forEach(StreamSync.Marker::close);
                it.remove();
                bytes -= p.block().size;
                release.accept(p.block());
            }
        }
    }

    /** Bytes of the blocks waiting. */
    long bytes() {
        return bytes;
    }
}
