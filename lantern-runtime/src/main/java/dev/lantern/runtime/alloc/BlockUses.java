package dev.lantern.runtime.alloc;

import java.util.TreeMap;

/**
 * The streams that still use a free block: each use is a marker recorded on that stream when the
 * block was freed. A block goes to another stream only once every other stream's use has completed,
 * or after that stream has been made to wait for them on the device; merging two free neighbours
 * keeps the later marker of each stream.
 */
final class BlockUses {
    private BlockUses() {}

    /** Union of two blocks' outstanding uses, keeping the later marker of each stream. */
    static TreeMap<Long, Block.Use> mergeUses(TreeMap<Long, Block.Use> a, TreeMap<Long, Block.Use> b) {
        if (a == null) {
            return b;
        }
        if (b != null) {
            b.forEach((s, u) -> a.merge(s, u, (x, y) -> x.seq() > y.seq() ? x : y));
        }
        return a;
    }

    /** Whether {@code stream} may take a free block now: every other stream's use of it has completed. */
    static boolean usableBy(Block b, long stream) {
        if (b.uses == null) {
            return true;
        }
        for (var it = b.uses.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getValue().marker().isComplete()) {
                e.getValue().marker().close();
                it.remove();
            } else if (e.getKey() != stream) {
                return false;
            }
        }
        if (b.uses.isEmpty()) {
            b.uses = null;
        }
        return true;
    }

    /** Orders {@code stream} after every other stream's outstanding use of {@code b}; false if the sync cannot. */
    static boolean waitForUses(Block b, long stream, StreamSync sync) {
        for (var e : b.uses.entrySet()) {
            if (e.getKey() != stream && !sync.streamWait(stream, e.getValue().marker())) {
                return false;
            }
        }
        return true; // allocate() drops the uses of the part it hands out; a split remainder keeps them
    }

    /** Waits for every stream's outstanding use of {@code b} on the host, then forgets them. */
    static void awaitUses(Block b) {
        if (b.uses != null) {
            for (Block.Use u : b.uses.values()) {
                u.marker().await();
                u.marker().close();
            }
            b.uses = null;
        }
    }
}
