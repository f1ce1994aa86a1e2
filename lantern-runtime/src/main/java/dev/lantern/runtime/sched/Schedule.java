package dev.lantern.runtime.sched;

import java.util.List;

/**
 * Where and in which order each task is issued, and the cross-stream joins, as plain data.
 * Streams {@code 0..streams-1} are ordinary; stream {@code streams} is the high-priority one.
 *
 * @param streams        ordinary streams used
 * @param streamOf       stream index per task id
 * @param order          issue order (topological): task ids
 * @param joins          events to record after a producer and wait on before its consumer
 * @param estStart       estimated start per task id, from the cost model
 * @param estMakespan    estimated finish of the last task
 */
public record Schedule(int streams, int[] streamOf, List<Integer> order, List<Join> joins, double[] estStart,
        double estMakespan) {

    /** Record an event on {@code producerStream} after {@code producer}; {@code consumerStream} waits on it before {@code consumer}. */
    public record Join(int producer, int producerStream, int consumer, int consumerStream) {
    }

    public Schedule {
        order = List.copyOf(order);
        joins = List.copyOf(joins);
    }

    public int priorityStream() {
        return streams;
    }

    public int streamOf(int task) {
        return streamOf[task];
    }
}
