package dev.lantern.runtime.soak;

import dev.lantern.runtime.alloc.Allocation;
import java.util.ArrayDeque;
import java.util.TreeMap;

/**
 * A queue of planned allocator operations on named slots, run one per step: the agents that
 * model a transformer plan a whole forward/backward pass (or one decode token) at once and
 * then play it out interleaved with the other agents.
 */
final class Script {
    private enum Kind { ALLOC, FREE, GROW, MOVE }

    private record Action(Kind kind, int slot, long bytes) {
    }

    private final long stream;
    private final ArrayDeque<Action> queue = new ArrayDeque<>();
    private final TreeMap<Integer, Allocation> slots = new TreeMap<>();
    private final TreeMap<Integer, Allocation> staged = new TreeMap<>(); // GROW done, MOVE to come

    Script(long stream) {
        this.stream = stream;
    }

    void alloc(int slot, long bytes) {
        queue.addLast(new Action(Kind.ALLOC, slot, bytes));
    }

    void free(int slot) {
        queue.addLast(new Action(Kind.FREE, slot, 0));
    }

    /** Reallocates a slot as a copy would: the new block is taken while the old one is live, then the old is freed. */
    void grow(int slot, long bytes) {
        queue.addLast(new Action(Kind.GROW, slot, bytes));
        queue.addLast(new Action(Kind.MOVE, slot, 0));
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    boolean holds(int slot) {
        return slots.containsKey(slot);
    }

    /** Runs the next action. An allocation into a slot that is still held frees the old block first. */
    void step(Traffic t) {
        Action a = queue.pollFirst();
        if (a == null) {
            return;
        }
        switch (a.kind()) {
            case ALLOC -> {
                Allocation old = slots.remove(a.slot());
                if (old != null) {
                    t.free(old);
                    queue.addFirst(a); // the allocation itself is the next step
                    return;
                }
                put(slots, a.slot(), t.alloc(a.bytes(), stream));
            }
            case FREE -> t.free(slots.remove(a.slot()));
            case GROW -> put(staged, a.slot(), t.alloc(a.bytes(), stream));
            case MOVE -> {
                t.free(slots.remove(a.slot()));
                put(slots, a.slot(), staged.remove(a.slot()));
            }
        }
    }

    private static void put(TreeMap<Integer, Allocation> map, int slot, Allocation a) {
        if (a != null) { // null after an OOM: the slot stays empty and its free is a no-op
            map.put(slot, a);
        }
    }

    /** Frees every held slot, in slot order, and drops the plan. */
    void releaseAll(Traffic t) {
        slots.values().forEach(t::freeQuietly);
        staged.values().forEach(t::freeQuietly);
        slots.clear();
        staged.clear();
        queue.clear();
    }
}
