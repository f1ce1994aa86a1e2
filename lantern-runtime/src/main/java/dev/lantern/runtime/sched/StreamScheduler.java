package dev.lantern.runtime.sched;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Assigns a task graph to streams by list scheduling on the cost estimates.
 *
 * <p>Tasks are issued in Kahn order, the ready task with the earliest estimated ready time first
 * (ties: lower id). Each goes to the ordinary stream where it can start earliest; on a tie, a
 * stream that ran one of its producers (so a chain stays on one stream and needs no event),
 * then the lowest index. Latency-critical tasks go to the high-priority stream. Every
 * dependency that crosses streams becomes a {@link Schedule.Join}, unless the consumer stream
 * has already waited for that producer or a later task of its stream.
 */
public final class StreamScheduler {
    private StreamScheduler() {
    }

    public static Schedule plan(TaskGraph graph, int streams) {
        if (streams < 1) {
            throw new IllegalArgumentException("need at least one stream, got " + streams);
        }
        int n = graph.size();
        int total = streams + 1; // + the priority stream
        int[] streamOf = new int[n];
        int[] posInStream = new int[n];
        double[] start = new double[n];
        double[] finish = new double[n];
        double[] ready = new double[n];
        double[] available = new double[total];
        int[] length = new int[total];
        // synced[c][p]: the consumer stream c has waited for position synced[c][p] of stream p.
        int[][] synced = new int[total][total];
        for (int[] row : synced) {
            Arrays.fill(row, -1);
        }
        int[] missing = new int[n];
        List<List<Integer>> consumers = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            consumers.add(new ArrayList<>());
        }
        for (Task t : graph.tasks()) {
            missing[t.id()] = t.deps().size();
            for (int d : t.deps()) {
                consumers.get(d).add(t.id());
            }
        }
        PriorityQueue<Integer> readyQueue = new PriorityQueue<>(
                (a, b) -> ready[a] != ready[b] ? Double.compare(ready[a], ready[b]) : Integer.compare(a, b));
        for (int i = 0; i < n; i++) {
            if (missing[i] == 0) {
                readyQueue.add(i);
            }
        }
        List<Integer> order = new ArrayList<>(n);
        List<Schedule.Join> joins = new ArrayList<>();
        double makespan = 0;
        while (!readyQueue.isEmpty()) {
            Task t = graph.task(readyQueue.poll());
            int s = t.latencyCritical() ? streams : pickStream(t, streams, ready[t.id()], available, streamOf);
            for (int d : t.deps()) {
                int ps = streamOf[d];
                if (ps != s && synced[s][ps] < posInStream[d]) {
                    joins.add(new Schedule.Join(d, ps, t.id(), s));
                    synced[s][ps] = posInStream[d];
                }
            }
            streamOf[t.id()] = s;
            posInStream[t.id()] = length[s]++;
            start[t.id()] = Math.max(available[s], ready[t.id()]);
            finish[t.id()] = start[t.id()] + t.cost();
            available[s] = finish[t.id()];
            makespan = Math.max(makespan, finish[t.id()]);
            order.add(t.id());
            for (int c : consumers.get(t.id())) {
                ready[c] = Math.max(ready[c], finish[t.id()]);
                if (--missing[c] == 0) {
                    readyQueue.add(c);
                }
            }
        }
        return new Schedule(streams, streamOf, order, joins, start, makespan);
    }

    private static int pickStream(Task t, int streams, double ready, double[] available, int[] streamOf) {
        int best = -1;
        double bestStart = Double.POSITIVE_INFINITY;
        boolean bestHoldsProducer = false;
        for (int s = 0; s < streams; s++) {
            double st = Math.max(available[s], ready);
            boolean holdsProducer = false;
            for (int d : t.deps()) {
                holdsProducer |= streamOf[d] == s;
            }
            if (st < bestStart || (st == bestStart && holdsProducer && !bestHoldsProducer)) {
                best = s;
                bestStart = st;
                bestHoldsProducer = holdsProducer;
            }
        }
        return best;
    }
}
