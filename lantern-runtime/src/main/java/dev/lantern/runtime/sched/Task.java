package dev.lantern.runtime.sched;

import dev.lantern.runtime.Stream;
import java.util.List;

/**
 * One node of a {@link TaskGraph}: a kernel launch or a copy, with the tasks it depends on.
 *
 * @param id              index in the graph; dependencies always have smaller ids
 * @param name            for traces and errors
 * @param kind            kernel or copy: overlap is measured between the two
 * @param cost            estimated duration in microseconds (any consistent unit works)
 * @param latencyCritical runs on the high-priority stream
 * @param deps            ids of the tasks whose results it reads
 * @param work            what to issue on the stream the scheduler picks
 */
public record Task(int id, String name, Kind kind, double cost, boolean latencyCritical, List<Integer> deps,
        Work work) {

    public enum Kind { KERNEL, COPY }

    /** Issues the task's device work on {@code stream} (asynchronously on a GPU). */
    @FunctionalInterface
    public interface Work {
        void issue(Stream stream);

        Work NONE = stream -> { };
    }

    public Task {
        deps = List.copyOf(deps);
        if (!(cost >= 0)) {
            throw new IllegalArgumentException("task " + name + ": cost must be >= 0, got " + cost);
        }
    }
}
