package dev.lantern.runtime.sched;

import java.util.ArrayList;
import java.util.List;

/**
 * A dependency DAG of tasks, built in an order where every dependency comes first, so it is
 * acyclic by construction and ids are already a topological order.
 *
 * <pre>
 * TaskGraph g = new TaskGraph();
 * int h2d = g.copy("h2d x", 40, w -> ...);
 * int mm  = g.kernel("matmul", 120, w -> ..., h2d);
 * </pre>
 */
public final class TaskGraph {
    private final List<Task> tasks = new ArrayList<>();

    public int kernel(String name, double cost, Task.Work work, int... deps) {
        return add(name, Task.Kind.KERNEL, cost, false, work, deps);
    }

    public int copy(String name, double cost, Task.Work work, int... deps) {
        return add(name, Task.Kind.COPY, cost, false, work, deps);
    }

    public int add(String name, Task.Kind kind, double cost, boolean latencyCritical, Task.Work work, int... deps) {
        int id = tasks.size();
        List<Integer> d = new ArrayList<>(deps.length);
        for (int dep : deps) {
            if (dep < 0 || dep >= id) {
                throw new IllegalArgumentException("task " + name + " depends on " + dep
                        + ", which is not an earlier task (0.." + (id - 1) + ")");
            }
            if (!d.contains(dep)) {
                d.add(dep);
            }
        }
        tasks.add(new Task(id, name, kind, cost, latencyCritical, d, work));
        return id;
    }

    public Task task(int id) {
        return tasks.get(id);
    }

    public int size() {
        return tasks.size();
    }

    public List<Task> tasks() {
        return List.copyOf(tasks);
    }
}
